package jinja

import (
	"errors"
	"fmt"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/target"
)

// Tests are gonja's tests with Salt's: `is match` (re.match, with
// ignorecase and multiline), `is list`, `is equalto`.
func Tests() *exec.TestSet {
	set := exec.NewTestSet(map[string]exec.TestFunction{})
	set.Update(builtins.Tests)
	add := func(name string, fn exec.TestFunction) {
		if set.Exists(name) {
			_ = set.Replace(name, fn)
		} else {
			_ = set.Register(name, fn)
		}
	}
	add("match", testMatch)
	add("list", func(_ *exec.Context, in *exec.Value, _ *exec.VarArgs) (bool, error) {
		_, ok := GoValue(in).([]any)
		return ok && in.IsList(), nil
	})
	return set
}

// testMatch is Salt's test_match(txt, rgx, ignorecase=False,
// multiline=False): whether the pattern matches at the text's start.
func testMatch(_ *exec.Context, in *exec.Value, va *exec.VarArgs) (bool, error) {
	args, err := bind("match", va, []param{req("rgx"), opt("ignorecase", false), opt("multiline", false)})
	if err != nil {
		return false, err
	}
	txt, ok := GoValue(in).(string)
	if !ok {
		return false, fmt.Errorf("expected string or bytes-like object, got '%s'", pyTypeName(GoValue(in)))
	}
	if _, err := compilePy(jinjaStr(args[0]), false, false); err != nil {
		return false, err
	}
	re, err := compilePy(`\A(?:`+jinjaStr(args[0])+`)`, truthy(args[1]), truthy(args[2]))
	if err != nil {
		return false, err
	}
	return re.MatchString(txt), nil
}

// Globals are Salt's global functions of templates: raise, ifelse,
// odict, show_full_context, and dict() as Python's (a mapping or pairs,
// then keywords).
func Globals() *exec.Context {
	return exec.NewContext(map[string]any{
		"raise": func(va *exec.VarArgs) (any, error) {
			if len(va.Args) != 1 {
				return nil, errors.New("raise() takes exactly one argument, the message")
			}
			return nil, &TemplateError{Msg: va.Args[0].String()}
		},
		"ifelse":            globalIfelse,
		"odict":             globalDict,
		"dict":              globalDict,
		"show_full_context": globalShowFullContext,
	})
}

// TemplateError is what a template raises itself ({{ raise('…') }}):
// its message is the whole error, as in Salt.
type TemplateError struct{ Msg string }

func (e *TemplateError) Error() string { return e.Msg }

// globalDict is Python's dict() (and Salt's odict, OrderedDict): from a
// dictionary or a sequence of pairs, then the keyword arguments, its keys
// in that order, as Python's dict keeps them (the php formula's
// serialize(odict(settings)) writes php.ini's sections in its map's order).
func globalDict(va *exec.VarArgs) (any, error) {
	out := exec.NewDict()
	if len(va.Args) > 1 {
		return nil, fmt.Errorf("dict expected at most 1 argument, got %d", len(va.Args))
	}
	if len(va.Args) == 1 {
		arg := va.Args[0]
		switch {
		case arg.IsDict():
			for _, p := range arg.Items() {
				out.Set(p.Key, p.Value)
			}
		case arg.IsList():
			var err error
			i := 0
			arg.Iterate(func(_, _ int, item, _ *exec.Value) bool {
				switch {
				case !item.IsList() && !item.IsString():
					err = fmt.Errorf("cannot convert dictionary update sequence element #%d to a sequence", i)
				case item.Len() != 2:
					err = fmt.Errorf("dictionary update sequence element #%d has length %d; 2 is required", i, item.Len())
				case item.IsString():
					r := []rune(item.String())
					out.Set(string(r[0]), string(r[1]))
				default:
					out.Set(item.Index(0), item.Index(1))
				}
				if err != nil {
					return false
				}
				i++
				return true
			}, func() {})
			if err != nil {
				return nil, err
			}
		case arg.IsNil():
			return nil, errors.New("'NoneType' object is not iterable")
		default:
			return nil, fmt.Errorf("'%s' object is not iterable", pyTypeName(GoValue(arg)))
		}
	}
	for _, k := range va.KeywordNames() {
		out.Set(k, va.KwArgs[k])
	}
	return out, nil
}

// globalIfelse is Salt's ifelse(*args, tgt_type='compound',
// minion_id=None, merge=None): the value after the first target that
// matches this minion, else the last argument.
func globalIfelse(e *exec.Evaluator, va *exec.VarArgs) (any, error) {
	args := make([]any, len(va.Args))
	for i, a := range va.Args {
		args[i] = GoValue(a)
	}
	if len(args)%2 == 0 {
		return nil, pyErr("The ifelse function must have an odd number of arguments!")
	}
	if len(args) == 1 {
		return args[0], nil
	}
	tgtType := "compound"
	if v, ok := va.KwArgs["tgt_type"]; ok {
		tgtType = v.String()
	}
	facts := target.Facts{}
	ctxGet := func(name string) map[string]any {
		v, _ := e.Environment.Context.Get(name)
		m, _ := v.(map[string]any)
		return m
	}
	facts.Grains = ctxGet("grains")
	facts.Pillar = ctxGet("pillar")
	if id, ok := ctxGet("opts")["id"].(string); ok {
		facts.ID = id
	} else if id, ok := facts.Grains["id"].(string); ok {
		facts.ID = id
	}
	if v, ok := va.KwArgs["minion_id"]; ok && !v.IsNil() {
		facts.ID = v.String()
	}
	var merge map[string]any
	if v, ok := va.KwArgs["merge"]; ok && v.IsTrue() {
		m, ok := GoValue(v).(map[string]any)
		if !ok {
			return nil, pyErr("filter_by merge argument must be a dictionary.")
		}
		merge = m
	}
	for i := 0; i+1 < len(args)-1; i += 2 {
		key := args[i]
		var matched bool
		switch key {
		case true:
			matched = true
		case false:
			matched = false
		default:
			t, err := target.ParseWith(jinjaStr(key), tgtType, target.Options{Pillar: true})
			if err != nil {
				return nil, fmt.Errorf("ifelse: %w", err)
			}
			matched = t.Match(facts)
		}
		if matched {
			val := args[i+1]
			if merge != nil {
				if val == nil {
					return merge, nil
				}
				if m, ok := val.(map[string]any); ok {
					for k, v := range merge {
						m[k] = v
					}
				}
			}
			return val, nil
		}
	}
	return args[len(args)-1], nil
}

// globalShowFullContext is Salt's show_full_context(): the template's
// context as a dictionary of plain values.
func globalShowFullContext(e *exec.Evaluator, _ *exec.VarArgs) (any, error) {
	out := map[string]any{}
	for _, name := range []string{"grains", "pillar", "opts", "saltenv", "sls", "tpldir", "tplpath", "tplfile", "slspath", "sls_path", "tpldot", "slsdotpath", "slscolonpath"} {
		if v, ok := e.Environment.Context.Get(name); ok {
			out[name] = v
		}
	}
	return out, nil
}
