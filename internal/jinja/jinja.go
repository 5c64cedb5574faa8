// Package jinja holds what every Jinja template of brine shares, whatever
// renders it (reaction files, SLS files, pillar, file.managed templates):
// Python's string methods as Salt's templates call them, the `salt`
// object in both of Salt's spellings, Salt's own filters, and the way
// back from template values to plain Go values.
package jinja

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/saltyaml"
	"github.com/brinehq/brine/internal/serializers"
)

// strMethodNames are the string methods gonja implements.
var strMethodNames = strings.Fields(`capitalize capwords casefold center count encode endswith expandtabs find
	format format_map isalnum isalpha isascii isdecimal isdigit islower isnumeric isprintable isspace istitle
	isupper join ljust lower lstrip partition removeprefix removesuffix replace rfind rjust rpartition rsplit
	rstrip split splitlines startswith strip swapcase title upper zfill`)

// Methods is gonja's methods with str.replace's count optional, as in
// Python: Salt's templates write data['id'].replace('-', '_').
func Methods() exec.Methods {
	m := builtins.Methods
	set := make(map[string]exec.Method[string], len(strMethodNames))
	for _, name := range strMethodNames {
		if f, ok := m.Str.Get(name); ok {
			set[name] = f
		}
	}
	set["replace"] = func(self string, _ *exec.Value, args *exec.VarArgs) (any, error) {
		var old, repl string
		count := -1
		if err := args.Take(
			exec.PositionalArgument("old", nil, exec.StringArgument(&old)),
			exec.PositionalArgument("new", nil, exec.StringArgument(&repl)),
			exec.PositionalArgument("count", exec.AsValue(-1), exec.IntArgument(&count)),
		); err != nil {
			return nil, exec.ErrInvalidCall(err)
		}
		if old == "" {
			return self, nil
		}
		return strings.Replace(self, old, repl, count), nil
	}
	m.Str = exec.NewMethodSet(set)
	m.Dict = dictMethods(m.Dict)
	return m
}

// dictMethods is gonja's dictionary methods with update and setdefault
// changing the dictionary itself, as Python's do: formulas build their
// maps with {% do apache.update(salt['pillar.get']('apache', {})) %}, and
// gonja's change a copy. A Go map (from the context, a function's return)
// is changed in place, so every reference sees it; a literal ({}) is
// replaced by the changed map.
func dictMethods(base *exec.MethodSet[map[string]any]) *exec.MethodSet[map[string]any] {
	set := map[string]exec.Method[map[string]any]{}
	for _, name := range []string{"keys", "values", "items", "get", "pop", "popitem", "copy", "clear"} {
		if f, ok := base.Get(name); ok {
			set[name] = f
		}
	}
	mutate := func(self map[string]any, selfValue *exec.Value, change func(map[string]any) any) any {
		target, inPlace := selfValue.Interface().(map[string]any)
		if !inPlace {
			target = self
		}
		out := change(target)
		if !inPlace {
			*selfValue = *exec.AsValue(target)
		}
		return out
	}
	set["update"] = func(self map[string]any, selfValue *exec.Value, args *exec.VarArgs) (any, error) {
		if len(args.Args) > 1 {
			return nil, exec.ErrInvalidCall(fmt.Errorf("update() takes at most 1 positional argument"))
		}
		mutate(self, selfValue, func(m map[string]any) any {
			if len(args.Args) == 1 {
				args.Args[0].Iterate(func(_, _ int, k, v *exec.Value) bool {
					if v != nil {
						m[k.String()] = GoValue(v)
					}
					return true
				}, func() {})
			}
			for k, v := range args.KwArgs {
				m[k] = GoValue(v)
			}
			return nil
		})
		return nil, nil
	}
	set["setdefault"] = func(self map[string]any, selfValue *exec.Value, args *exec.VarArgs) (any, error) {
		if len(args.Args) < 1 || len(args.Args) > 2 {
			return nil, exec.ErrInvalidCall(fmt.Errorf("setdefault() takes a key and an optional default"))
		}
		key := args.Args[0].String()
		var def any
		if len(args.Args) == 2 {
			def = GoValue(args.Args[1])
		}
		return mutate(self, selfValue, func(m map[string]any) any {
			if v, ok := m[key]; ok {
				return v
			}
			m[key] = def
			return def
		}), nil
	}
	return exec.NewMethodSet(set)
}

// Ordered is v with every YAML mapping (yaml.MapSlice) an ordered
// template dictionary: a template iterating what import_yaml or load_yaml
// read sees the keys in the order they were written, as Python's dicts
// keep them.
func Ordered(v any) any {
	switch t := v.(type) {
	case yaml.MapSlice:
		d := exec.NewDict()
		for _, it := range t {
			d.Set(exec.AsValue(it.Key), exec.AsValue(Ordered(it.Value)))
		}
		return d
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = Ordered(x)
		}
		return out
	}
	return v
}

// GoValue converts a template value back to plain Go values.
//
// A dictionary becomes a map[string]any whatever its keys: a key that is
// not a string (386 in a formula's osarchmap.yaml) is keyed by its text,
// as Salt's functions compare keys by their text (grains.filter_by).
func GoValue(v *exec.Value) any {
	if v == nil || v.IsNil() {
		return nil
	}
	if v.IsDict() {
		m := map[string]any{}
		v.Iterate(func(_, _ int, key, value *exec.Value) bool {
			m[key.PyString()] = GoValue(value)
			return true
		}, func() {})
		return m
	}
	if v.IsList() {
		out := []any{}
		v.Iterate(func(_, _ int, item, _ *exec.Value) bool {
			out = append(out, GoValue(item))
			return true
		}, func() {})
		return out
	}
	g := v.ToGoSimpleType(false)
	if err, ok := g.(error); ok && v.IsError() {
		return err.Error()
	}
	return g
}

// argValue is a template value as a function's argument: GoValue's
// plain values, with every dictionary a yaml.MapSlice in the order the
// template iterates it (keys by their text, as GoValue keys them), so
// that the function knows the order Salt's dicts keep.
func argValue(v *exec.Value) any {
	if v == nil || v.IsNil() {
		return nil
	}
	if v.IsDict() {
		out := yaml.MapSlice{}
		v.Iterate(func(_, _ int, key, value *exec.Value) bool {
			out = append(out, yaml.MapItem{Key: key.PyString(), Value: argValue(value)})
			return true
		}, func() {})
		return out
	}
	if v.IsList() {
		out := []any{}
		v.Iterate(func(_, _ int, item, _ *exec.Value) bool {
			out = append(out, argValue(item))
			return true
		}, func() {})
		return out
	}
	return GoValue(v)
}

// Caller calls one function by name, as `salt` in a template does.
// A dictionary argument is a yaml.MapSlice (argValue); a yaml.MapSlice
// in what it returns reads as a dict in its order.
type Caller func(name string, args []any, kwargs map[string]any) (any, error)

// namespace is one module of the `salt` object: salt.pillar.get. It is a
// type of its own so that `.get` is the module's function, never the
// dictionary method of the same name.
type namespace map[string]any

// Salt is the `salt` object of a template for the functions names, both
// as salt['pillar.get'](…) and as salt.pillar.get(…); call runs them.
func Salt(names []string, call Caller) map[string]any {
	salt := make(map[string]any, len(names)*2)
	for _, name := range names {
		fn := func(va *exec.VarArgs) (any, error) {
			// the arguments' dicts go as ordered mappings and come back
			// as ordered dicts: a function that returns a mapping built
			// from them (grains.filter_by, defaults.merge) gives it in
			// the order Salt's dicts would have (function.Input.Ordered)
			args := make([]any, len(va.Args))
			for i, a := range va.Args {
				args[i] = argValue(a)
			}
			kwargs := make(map[string]any, len(va.KwArgs))
			for k, v := range va.KwArgs {
				kwargs[k] = argValue(v)
			}
			// a function that reads YAML or JSON itself returns its
			// mappings in the order written (function.Input.FromTemplate)
			kwargs[function.TemplateCall] = true
			out, err := call(name, args, kwargs)
			if err != nil {
				return nil, fmt.Errorf("salt[%q]: %w", name, err)
			}
			// a function that changes a dictionary it is given in
			// Salt changes the template's (inplace.go)
			if change, ok := inPlace[name]; ok {
				if dest, ok := change(boundArgs{va}); ok {
					return dest.Interface(), nil
				}
			}
			return Ordered(out), nil
		}
		salt[name] = fn
		if mod, fun, ok := strings.Cut(name, "."); ok {
			ns, _ := salt[mod].(namespace)
			if ns == nil {
				ns = namespace{}
				salt[mod] = ns
			}
			ns[fun] = fn
		}
	}
	return salt
}

// Serialize is the text Salt's json and yaml filters give for v:
// compact JSON, or flow-style YAML on one line, usable inside YAML.
func Serialize(v any, asJSON bool) (string, error) {
	if asJSON {
		b, err := json.Marshal(v)
		return string(b), err
	}
	b, err := yaml.MarshalWithOptions(v, yaml.Flow(true))
	return strings.TrimSpace(string(b)), err
}

// filterLoadYAML is Salt's load_yaml: the text read as Salt's loader
// reads YAML; anything but text is refused, as libyaml's parser refuses
// it.
func filterLoadYAML(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	if in.IsError() {
		return in
	}
	if !in.IsString() {
		return exec.AsValue(errors.New("a string or stream input is required"))
	}
	v, err := saltyaml.Unmarshal([]byte(in.String()))
	if err != nil {
		return exec.AsValue(fmt.Errorf("load_yaml: %w", err))
	}
	return exec.AsValue(Ordered(v))
}

// filterLoadJSON is load_json: the text read as Python's json.loads
// reads it (integers stay integers, 1e3 is a float, objects keep the
// order their keys are written in).
func filterLoadJSON(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	ser, _ := serializers.Get("json")
	v, err := ser.LoadOrdered([]byte(in.String()))
	if err != nil {
		return exec.AsValue(fmt.Errorf("load_json: %w", err))
	}
	return exec.AsValue(Ordered(v))
}

// filterQuote quotes for a POSIX shell, as Python's shlex.quote.
func filterQuote(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	s := in.String()
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) {
		return exec.AsValue(s)
	}
	return exec.AsValue("'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'")
}

func filterYAMLSquote(_ *exec.Evaluator, in *exec.Value, _ *exec.VarArgs) *exec.Value {
	return exec.AsSafeValue("'" + strings.ReplaceAll(in.String(), "'", "''") + "'")
}
