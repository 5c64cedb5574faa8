package saltapi

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// Targets is the master's targeting: the ids of the minions a target
// selects. The ACL checks ask it for the calling target and for the
// target of every per-target ACL entry (read as a compound target, as
// Salt's validate_tgt does).
type Targets interface {
	Minions(ctx context.Context, tgt any, tgtType string) ([]string, error)
}

// pyException stands for a Python exception inside Salt's checks: Salt
// then refuses the call (auth_check catches a TypeError and answers
// False; anything else fails the request), so the checks answer false.
type pyException struct{ msg string }

func raise(format string, args ...any) { panic(pyException{fmt.Sprintf(format, args...)}) }

// catch turns a pyException into a refusal, leaving real panics alone.
func catch(ok *bool, what string) {
	if r := recover(); r != nil {
		e, isPy := r.(pyException)
		if !isPy {
			panic(r)
		}
		slog.Debug("salt-api ACL: the check fails as Salt's would", "check", what, "reason", e.msg)
		*ok = false
	}
}

// CheckLocal is CkMinions.auth_check for the local client (Salt's default,
// without auth.enable_expanded_auth_matching): funs is one function or the
// list of a compound call, with args the argument list of each (the last
// one a {'__kwarg__': True, ...} dict of keyword arguments). An ACL string
// allows the functions it matches on every minion; a {target: [...]} entry
// allows them when every minion tgt selects is one the entry's target
// (compound) selects. As Salt, the call is allowed as soon as one function
// of a compound call is, and a target that selects no minion passes every
// per-target entry. Where Salt's targeting would swallow an error and see
// no minions, CheckLocal returns the error.
func CheckLocal(ctx context.Context, perms []any, t Targets, funs any, args any, tgt any, tgtType string) (allowed bool, err error) {
	defer catch(&allowed, "local")
	funList, isList := funs.([]any)
	if ss, ok := funs.([]string); ok {
		funList, isList = make([]any, len(ss)), true
		for i, s := range ss {
			funList[i] = s
		}
	}
	argList := args
	if !isList {
		funList = []any{funs}
		argList = []any{args}
	}
	var targeted map[string]bool
	for num, fun := range funList {
		for _, ind := range perms {
			if s, ok := ind.(string); ok {
				if matchCheck(s, fun) {
					return true, nil
				}
				continue
			}
			d, ok := asDict(ind)
			if !ok || len(d) != 1 {
				continue
			}
			valid, spec := single(d)
			if targeted == nil {
				ids, err := t.Minions(ctx, tgt, tgtType)
				if err != nil {
					return false, fmt.Errorf("targeting %s %s: %w", tgtType, pyStr(tgt), err)
				}
				targeted = make(map[string]bool, len(ids))
				for _, id := range ids {
					targeted[id] = true
				}
			}
			ids, err := t.Minions(ctx, valid, "compound")
			if err != nil {
				return false, fmt.Errorf("targeting the ACL's %q: %w", valid, err)
			}
			if !subset(targeted, ids) {
				continue
			}
			funArgs := pyIndex(argList, num)
			var funKwargs map[string]any
			if py.Truth(funArgs) {
				if kw, ok := asDict(pyIndex(funArgs, -1)); ok {
					if _, ok := kw["__kwarg__"]; ok {
						funKwargs = kw
						items := pySeq(funArgs)
						funArgs = append([]any(nil), items[:len(items)-1]...)
					}
				}
			}
			if funCheck(spec, fun, funArgs, funKwargs) {
				return true, nil
			}
		}
	}
	return false, nil
}

// single is the one key and value of a one-entry dict.
func single(d map[string]any) (string, any) {
	for k, v := range d {
		return k, v
	}
	return "", nil
}

func subset(targeted map[string]bool, valid []string) bool {
	v := make(map[string]bool, len(valid))
	for _, id := range valid {
		v[id] = true
	}
	for id := range targeted {
		if !v[id] {
			return false
		}
	}
	return true
}

// CheckRunner is CkMinions.runner_check: fun (module.function) is allowed
// by '@runner', '@runners', '@module', or by a dict of one of these whose
// list allows the function (the whole name under '@runner', the name
// within the module under '@module') with args, the runner's
// {'arg': [...], 'kwarg': {...}}. '@jobs' is the jobs runner's module, as
// salt-api's /jobs calls it.
func CheckRunner(perms []any, fun string, args any) bool {
	return specCheck(perms, fun, args, "runner")
}

// CheckWheel is CkMinions.wheel_check: CheckRunner's rules with '@wheel'.
func CheckWheel(perms []any, fun string, args any) bool {
	return specCheck(perms, fun, args, "wheel")
}

func specCheck(perms []any, fun string, args any, form string) (allowed bool) {
	defer catch(&allowed, form)
	if len(perms) == 0 {
		return false
	}
	comps := strings.Split(fun, ".")
	if len(comps) != 2 {
		// Salt answers a SaltInvocationError ("Check syntax"): no call.
		return false
	}
	mod, name := comps[0], comps[1]
	var argsDict map[string]any
	if args != nil {
		d, ok := asDict(args)
		if !ok {
			raise("'%s' object has no attribute 'get'", pyTypeName(args))
		}
		argsDict = d
	}
	for _, ind := range perms {
		if s, ok := ind.(string); ok {
			if s == "" {
				raise("string index out of range")
			}
			if s[0] == '@' && (s[1:] == mod || s[1:] == form || s == "@"+form+"s") {
				return true
			}
			continue
		}
		d, ok := asDict(ind)
		if !ok || len(d) != 1 {
			continue
		}
		for valid, spec := range d {
			if valid == "" {
				raise("string index out of range")
			}
			if valid[0] != '@' {
				continue
			}
			if argsDict == nil && (valid[1:] == mod || valid[1:] == form || valid == "@"+form+"s") {
				raise("'NoneType' object has no attribute 'get'")
			}
			if valid[1:] == mod && funCheck(spec, name, argsDict["arg"], argsDict["kwarg"]) {
				return true
			}
			if (valid[1:] == form || valid == "@"+form+"s") && funCheck(spec, fun, argsDict["arg"], argsDict["kwarg"]) {
				return true
			}
		}
	}
	return false
}

// funCheck is CkMinions.__fun_check: a function name regex, or a
// {regex: conditions} dict whose conditions restrict the arguments.
func funCheck(valid any, fun any, args any, kwargs any) bool {
	conds, ok := valid.([]any)
	if !ok {
		conds = []any{valid}
	}
	for _, cond := range conds {
		if s, ok := cond.(string); ok {
			if matchCheck(s, fun) {
				return true
			}
			continue
		}
		d, ok := asDict(cond)
		if !ok || len(d) != 1 {
			continue
		}
		for fname, c := range d {
			if matchCheck(fname, fun) && argsCheck(c, args, kwargs) {
				return true
			}
		}
	}
	return false
}

// argsCheck is CkMinions.__args_check: conditions {'args': [regex, ...],
// 'kwargs': {name: regex}} (or a list of them, one of which must hold):
// each positional regex must match str() of that argument, each keyword
// must be given and match; a None regex allows any value.
func argsCheck(valid any, args any, kwargs any) bool {
	conds, ok := valid.([]any)
	if !ok {
		conds = []any{valid}
	}
	for _, c := range conds {
		cond, ok := asDict(c)
		if !ok {
			continue
		}
		good := true
		if condArgs, present := cond["args"]; present {
			for i, ca := range pyIter(condArgs) {
				if args == nil || pyLen(args) <= i {
					good = false
					break
				}
				if ca == nil {
					continue
				}
				if !matchCheck(ca, pyStr(pyIndex(args, i))) {
					good = false
					break
				}
			}
		}
		if !good {
			continue
		}
		if ck, present := cond["kwargs"]; present {
			ckd, ok := asDict(ck)
			if !ok {
				raise("'%s' object has no attribute 'items'", pyTypeName(ck))
			}
			for _, k := range sortedKeys(ckd) {
				v := ckd[k]
				if kwargs == nil {
					good = false
					break
				}
				kw, ok := asDict(kwargs)
				if !ok {
					raise("kwargs of type %s", pyTypeName(kwargs))
				}
				x, in := kw[k]
				if !in {
					good = false
					break
				}
				if v == nil {
					continue
				}
				if !matchCheck(v, pyStr(x)) {
					good = false
					break
				}
			}
		}
		if good {
			return true
		}
	}
	return false
}

// matchCheck is CkMinions.match_check: Python's re.match, anchored at the
// start only (so 'test.ping' also allows 'test.pingx' in Salt, and brine
// keeps that), all-or-nothing over a list of functions. An expression that
// is no string or does not compile matches nothing.
func matchCheck(regex any, fun any) bool {
	var funs []any
	switch f := fun.(type) {
	case string:
		funs = []any{f}
	default:
		funs = pyIter(fun)
	}
	var vals []bool
	for _, f := range funs {
		rs, ok1 := regex.(string)
		fs, ok2 := f.(string)
		if !ok1 || !ok2 {
			slog.Debug("salt-api ACL: invalid regular expression", "regex", py.ReprValue(regex))
			continue
		}
		re, err := pyRegexp(`\A(?:` + rs + `)`)
		if err != nil {
			slog.Debug("salt-api ACL: invalid regular expression (Python's re or beyond Go's RE2); it matches nothing", "regex", rs, "err", err)
			continue
		}
		vals = append(vals, re.MatchString(fs))
	}
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		if !v {
			return false
		}
	}
	return true
}

// asDict is a Python dict: a map with string keys, or the map[any]any a
// YAML decoder may give.
func asDict(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		n, _ := normalize(m).(map[string]any)
		return n, true
	}
	return nil, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pySeq is a Python sequence's items: a list, or a string's characters.
func pySeq(v any) []any {
	switch s := v.(type) {
	case []any:
		return s
	case []string:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return out
	case string:
		var out []any
		for _, r := range s {
			out = append(out, string(r))
		}
		return out
	}
	return nil
}

// pyIter is iterating v in Python: a sequence's items, a dict's keys;
// anything else raises a TypeError.
func pyIter(v any) []any {
	switch v.(type) {
	case []any, []string, string:
		return pySeq(v)
	}
	if d, ok := asDict(v); ok {
		out := make([]any, 0, len(d))
		for _, k := range sortedKeys(d) {
			out = append(out, k)
		}
		return out
	}
	raise("'%s' object is not iterable", pyTypeName(v))
	return nil
}

func pyLen(v any) int {
	switch v.(type) {
	case []any, []string, string:
		return len(pySeq(v))
	}
	if d, ok := asDict(v); ok {
		return len(d)
	}
	raise("object of type '%s' has no len()", pyTypeName(v))
	return 0
}

// pyIndex is v[i] with Python's negative indexing; a dict, None or a
// number raise, as they do in Salt.
func pyIndex(v any, i int) any {
	switch v.(type) {
	case []any, []string, string:
		items := pySeq(v)
		if i < 0 {
			i += len(items)
		}
		if i < 0 || i >= len(items) {
			raise("index out of range")
		}
		return items[i]
	}
	raise("'%s' object is not subscriptable", pyTypeName(v))
	return nil
}

func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case int, int64, uint64, int32:
		return "int"
	case float64, float32:
		return "float"
	case []any, []string:
		return "list"
	}
	if _, ok := asDict(v); ok {
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// pyStr is Python's str() of a decoded value: a string itself, anything
// else its repr (mapping keys sorted: Python keeps their order).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return py.ReprValue(v)
}
