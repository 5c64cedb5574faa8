package jobs

// Salt carries a call's keyword arguments inside its positional ones: a job
// published to minions has one `arg` list, whose keyword arguments are a
// trailing mapping marked `__kwarg__: True` (what `salt '*' fun a k=v`
// publishes, what salt/job/<jid>/new shows, what seed 003's reactions
// write by hand). PackArgs and SplitArgs are the two directions.

// PackArgs is Salt's publish `arg` of a call: the positional arguments, then
// the keyword arguments as one `{"__kwarg__": true, …}` mapping when there
// are any.
func PackArgs(args []any, kwargs map[string]any) []any {
	out := make([]any, 0, len(args)+1)
	out = append(out, args...)
	if len(kwargs) > 0 {
		kw := make(map[string]any, len(kwargs)+1)
		for k, v := range kwargs {
			kw[k] = v
		}
		kw["__kwarg__"] = true
		out = append(out, kw)
	}
	return out
}

// SplitArgs separates `__kwarg__` mappings from the positional arguments,
// as Salt's load_args_and_kwargs does; a mapping without the mark stays a
// positional argument.
func SplitArgs(arg []any) ([]any, map[string]any) {
	var pos []any
	kw := map[string]any{}
	for _, a := range arg {
		if m, ok := a.(map[string]any); ok && m["__kwarg__"] == true {
			for k, v := range m {
				if k != "__kwarg__" {
					kw[k] = v
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	return pos, kw
}
