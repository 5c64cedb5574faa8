package pkg

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinehq/brine/function"
)

// holdFuncs declares pkg.hold, pkg.unhold and pkg.get_selections, Salt's
// aptpkg functions over dpkg's selections: a held package is left alone by
// upgrades.
func (m *Manager) holdFuncs() []function.Func {
	targetsOf := []function.Param{{Name: "name", Kind: function.String}, {Name: "pkgs", Kind: function.List}, {Name: "sources", Kind: function.List}}
	return []function.Func{
		{Name: "pkg.hold", Doc: "Hold packages (name, or pkgs) so that upgrades leave them: {name: {name, changes: {old, new}, result, comment}}.",
			Params: targetsOf, VarKwargs: true, Run: m.hold(true)},
		{Name: "pkg.unhold", Doc: "Release held packages (name, or pkgs): {name: {name, changes: {old, new}, result, comment}}.",
			Params: targetsOf, VarKwargs: true, Run: m.hold(false)},
		{Name: "pkg.get_selections", Doc: "dpkg's selections of the packages matching pattern (a glob; all without): {state: [names]}, of state only when given.",
			Params: []function.Param{{Name: "pattern", Kind: function.String}, {Name: "state", Kind: function.String}}, ReadOnly: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				if _, err := m.aptOnly("pkg.get_selections"); err != nil {
					return nil, err
				}
				sel, err := m.selections(ctx, in.String("pattern"))
				if err != nil {
					return nil, err
				}
				if st := in.String("state"); st != "" {
					return map[string]any{st: listOf(sel[st])}, nil
				}
				out := map[string]any{}
				for st, names := range sel {
					out[st] = listOf(names)
				}
				return out, nil
			}},
	}
}

func listOf(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// aptOnly refuses a function of dpkg's selections on another backend.
func (m *Manager) aptOnly(fun string) (apt, error) {
	b, err := m.backend()
	if err != nil {
		return apt{}, err
	}
	a, ok := b.(apt)
	if !ok {
		return apt{}, fmt.Errorf("%s works on dpkg's selections (apt); with dnf, hold packages with its versionlock plugin", fun)
	}
	return a, nil
}

// selections is `dpkg --get-selections pattern` as Salt's
// _parse_selections reads it: state → names.
func (m *Manager) selections(ctx context.Context, pattern string) (map[string][]string, error) {
	if pattern == "" {
		pattern = "*"
	}
	res, err := m.run(ctx, nil, "dpkg", "--get-selections", pattern)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for line := range strings.SplitSeq(res.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			out[f[1]] = append(out[f[1]], f[0])
		}
	}
	return out, nil
}

// hold is Salt's aptpkg.hold (on) and unhold (off): each target's entry
// says whether it changed, as Salt's words it. A package dpkg does not
// know is an error for that target (Salt reports it held, though dpkg
// kept nothing).
func (m *Manager) hold(on bool) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		fun := "pkg.unhold"
		if on {
			fun = "pkg.hold"
		}
		name, pkgs, sources := in.String("name"), in.List("pkgs"), in.List("sources")
		switch {
		case name == "" && pkgs == nil && sources == nil:
			return nil, saltError("One of name, pkgs, or sources must be specified.")
		case pkgs != nil && sources != nil:
			return nil, saltError("Only one of pkgs or sources can be specified.")
		}
		var targets []string
		for _, list := range [][]any{pkgs, sources} {
			for i, t := range list {
				switch v := t.(type) {
				case string:
					targets = append(targets, v)
				case map[string]any:
					for k := range v {
						targets = append(targets, k)
					}
				default:
					return nil, fmt.Errorf("pkgs: item %d: want a name or {name: version}, got %T", i, t)
				}
			}
		}
		if pkgs == nil && sources == nil {
			targets = []string{name}
		}
		if _, err := m.aptOnly(fun); err != nil {
			return nil, err
		}
		for _, t := range targets {
			if err := validName(t); err != nil {
				return nil, err
			}
		}
		test := isTrue(in.ExtraKwargs["test"])
		return locked(ctx, func() (any, error) {
			out := map[string]any{}
			for _, t := range targets {
				sel, err := m.selections(ctx, t)
				if err != nil {
					return nil, err
				}
				r := map[string]any{"name": t, "changes": map[string]any{}, "result": false, "comment": ""}
				out[t] = r
				held := len(sel["hold"]) > 0
				switch {
				case len(sel) == 0:
					return nil, fmt.Errorf("%s: package %s is neither installed nor known to dpkg", fun, t)
				case held == on:
					r["result"] = true
					if on {
						r["comment"] = fmt.Sprintf("Package %s is already set to be held.", t)
					} else {
						r["comment"] = fmt.Sprintf("Package %s is already set not to be held.", t)
					}
				case test:
					r["result"] = nil
					if on {
						r["comment"] = fmt.Sprintf("Package %s is set to be held.", t)
					} else {
						r["comment"] = fmt.Sprintf("Package %s is set not to be held.", t)
					}
				default:
					old, state := currentState(sel), "install"
					if on {
						state = "hold"
					}
					// apt-mark sets dpkg's selection as Salt's dpkg
					// --set-selections does (unhold: install).
					mark := "unhold"
					if on {
						mark = "hold"
					}
					res, err := m.run(ctx, aptEnv, "apt-mark", mark, t)
					if err != nil {
						return nil, err
					}
					if res.Code != 0 {
						return nil, fmt.Errorf("%s: apt-mark %s %s: %s", fun, mark, t, strings.TrimSpace(res.Stderr+res.Stdout))
					}
					r["changes"], r["result"] = map[string]any{"old": old, "new": state}, true
					if on {
						r["comment"] = fmt.Sprintf("Package %s is now being held.", t)
					} else {
						r["comment"] = fmt.Sprintf("Package %s is no longer being held.", t)
					}
				}
			}
			return out, nil
		})
	}
}

// currentState is a target's selection before a change (the first state
// listed when a glob matched several).
func currentState(sel map[string][]string) any {
	for _, st := range []string{"hold", "install", "deinstall", "purge"} {
		if len(sel[st]) > 0 {
			return st
		}
	}
	return nil
}
