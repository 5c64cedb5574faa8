// Package pkg is Salt's pkg state module: pkg.installed, pkg.latest,
// pkg.removed and pkg.purged, with Salt's arguments, changes and
// comments.
//
// The states decide what to do from what is installed and call the pkg
// execution functions (pkg.install, pkg.remove, pkg.purge, pkg.list_pkgs,
// pkg.latest_version, pkg.version_cmp) through the agent's registry, as
// Salt's states call __salt__: the package manager is driven by one piece
// of code, whichever backend (apt, dnf) the machine has.
package pkg

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the pkg states for env's agent.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	version := function.Param{Name: "version", Kind: function.String}
	refresh := function.Param{Name: "refresh", Kind: function.Bool}
	fromrepo := function.Param{Name: "fromrepo", Kind: function.String}
	skipVerify := function.Param{Name: "skip_verify", Kind: function.Bool, Default: false}
	pkgs := function.Param{Name: "pkgs", Kind: function.Any}
	normalize := function.Param{Name: "normalize", Kind: function.Bool, Default: true}
	ignoreEpoch := function.Param{Name: "ignore_epoch", Kind: function.Bool, Default: false}
	return []function.Func{
		{Name: "pkg.installed",
			Doc: "Ensure packages are installed (name, or pkgs: names or {name: version}; a version may be exact, " +
				"a prefix ending in *, or compared: >=1.2, <2); installed packages are not upgraded unless their version does not match.",
			Params: []function.Param{name, version, refresh, fromrepo, skipVerify,
				{Name: "skip_suggestions", Kind: function.Bool, Default: false},
				pkgs,
				{Name: "sources", Kind: function.Any},
				{Name: "allow_updates", Kind: function.Bool, Default: false},
				{Name: "pkg_verify", Kind: function.Any},
				normalize, ignoreEpoch,
				{Name: "reinstall", Kind: function.Bool, Default: false},
				{Name: "update_holds", Kind: function.Bool, Default: false},
				{Name: "install_recommends", Kind: function.Bool, Default: true},
				{Name: "hold", Kind: function.Any},
			},
			VarKwargs: true, Run: s.installed},
		{Name: "pkg.latest",
			Doc:       "Ensure packages are installed at the newest version the package manager offers.",
			Params:    []function.Param{name, refresh, fromrepo, skipVerify, pkgs, {Name: "watch_flags", Kind: function.Bool, Default: true}, {Name: "install_recommends", Kind: function.Bool, Default: true}},
			VarKwargs: true, Run: s.latest},
		{Name: "pkg.removed",
			Doc:       "Ensure packages are not installed (their configuration may remain).",
			Params:    []function.Param{name, version, pkgs, normalize, ignoreEpoch},
			VarKwargs: true, Run: s.uninstall("remove")},
		{Name: "pkg.purged",
			Doc:       "Ensure packages are not installed and their configuration is gone.",
			Params:    []function.Param{name, version, pkgs, normalize, ignoreEpoch},
			VarKwargs: true, Run: s.uninstall("purge")},
	}
}

type states struct{ env *modules.Env }

// call runs an execution function of the agent.
func (s *states) call(ctx context.Context, fun string, args []any, kwargs map[string]any) (any, error) {
	return s.env.Call(ctx, fun, args, kwargs)
}

// target is one package a state names, with the version wanted ("" for
// any).
type target struct{ name, version string }

// targets reads name and pkgs as Salt's _repack_pkgs: pkgs (names, or
// {name: version} mappings) wins over name. ok is false for a malformed
// pkgs.
func targets(name, version string, pkgs any) ([]target, bool) {
	if pkgs == nil {
		return []target{{name: name, version: version}}, true
	}
	list, ok := pkgs.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	var out []target
	for _, p := range list {
		switch t := p.(type) {
		case string:
			out = append(out, target{name: t})
		case map[string]any:
			if len(t) != 1 {
				return nil, false
			}
			for k, v := range t {
				tg := target{name: k}
				if v != nil {
					tg.version = fmt.Sprint(v)
				}
				out = append(out, tg)
			}
		default:
			return nil, false
		}
	}
	return out, true
}

func names(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// desired is Salt's _get_desired_pkg: name=version, or name>=version when
// the version carries its comparison.
func desired(t target) string {
	switch {
	case t.version == "":
		return t.name
	case strings.HasPrefix(t.version, "<") || strings.HasPrefix(t.version, ">") || strings.HasPrefix(t.version, "="):
		return t.name + t.version
	}
	return t.name + "=" + t.version
}

func summary(ts []target) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = desired(t)
	}
	return strings.Join(out, ", ")
}

// versionSpec is Salt's form of a wanted version: an optional < or >, an
// optional =, the version.
var versionSpec = regexp.MustCompile(`^([<>])?(=)?([^<>=]+)$`)

// spec splits a wanted version into its comparison ("==" when none) and
// version.
func spec(v string) (op, ver string, ok bool) {
	m := versionSpec.FindStringSubmatch(v)
	if m == nil {
		return "", "", false
	}
	op = m[1] + m[2]
	if op == "" || op == "=" {
		op = "=="
	}
	return op, m[3], true
}

// listPkgs is pkg.list_pkgs with versions as lists.
func (s *states) listPkgs(ctx context.Context, removed bool) (map[string][]string, error) {
	out, err := s.call(ctx, "pkg.list_pkgs", nil, map[string]any{"versions_as_list": true, "removed": removed})
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("pkg.list_pkgs returned %T", out)
	}
	pkgs := make(map[string][]string, len(m))
	for n, vs := range m {
		l, _ := vs.([]any)
		for _, v := range l {
			pkgs[n] = append(pkgs[n], fmt.Sprint(v))
		}
	}
	return pkgs, nil
}

// fulfills is Salt's _fulfills_version_spec: whether one of versions
// compares to want as op says; "==" matches want as a glob ("2.10*").
func (s *states) fulfills(ctx context.Context, versions []string, op, want string, ignoreEpoch bool) (bool, error) {
	for _, v := range versions {
		if op == "==" {
			if ok, err := path.Match(want, v); ok || (err != nil && v == want) {
				return true, nil
			}
			continue
		}
		out, err := s.call(ctx, "pkg.version_cmp", []any{v, want}, map[string]any{"ignore_epoch": ignoreEpoch})
		if err != nil {
			return false, err
		}
		c, _ := out.(int64)
		ok := map[string]bool{"==": c == 0, ">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0}[op]
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// change runs fun (pkg.install, remove or purge) and gives what it
// changed and the packages installed after it; when fun fails, the
// state's answer is fail, in Salt's words for doing it.
func (s *states) change(ctx context.Context, name, fun, doing string, kwargs map[string]any) (changes map[string]any, now map[string][]string, fail any, err error) {
	out, err := s.call(ctx, fun, nil, kwargs)
	if err != nil {
		return nil, nil, state.Failed(name, "%s", errComment(doing, err)), nil
	}
	changes, _ = out.(map[string]any)
	now, err = s.listPkgs(ctx, false)
	return changes, now, nil, err
}

// errComment is the comment of a failed pkg function: the package
// manager's report as Salt's CommandExecutionError gives it, or what
// went wrong prefixed with doing.
func errComment(doing string, err error) string {
	var arg *function.ArgError
	if errors.As(err, &arg) || !strings.HasPrefix(err.Error(), "Problem encountered") {
		return fmt.Sprintf("An error was encountered while %s package(s): %v", doing, err)
	}
	return err.Error()
}

func (s *states) installed(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	if in.Value("sources") != nil {
		if in.Value("pkgs") != nil {
			return state.Failed(name, `Only one of "pkgs" and "sources" is permitted.`), nil
		}
		return state.Failed(name, "The sources argument is not supported"), nil
	}
	if v := in.Value("pkg_verify"); v != nil && v != false {
		return state.Failed(name, "The pkg_verify argument is not supported"), nil
	}
	if l, ok := in.Value("pkgs").([]any); ok && len(l) == 0 {
		return state.Succeeded(name, "No packages to install provided", nil), nil
	}
	version := in.String("version")
	refresh := in.Bool("refresh")
	if version == "latest" {
		// The newest version, or the installed one when it is that.
		out, err := s.call(ctx, "pkg.latest_version", []any{name}, map[string]any{"refresh": refresh, "fromrepo": in.String("fromrepo")})
		if err != nil {
			return state.Failed(name, "An error was encountered while checking the newest available version of package(s): %v", err), nil
		}
		refresh = false
		if version, _ = out.(string); version == "" {
			if out, err = s.call(ctx, "pkg.version", []any{name}, nil); err != nil {
				return state.Failed(name, "%v", err), nil
			}
			version, _ = out.(string)
		}
	}
	want, ok := targets(name, version, in.Value("pkgs"))
	if !ok {
		return state.Failed(name, "Invalidly formatted 'pkgs' parameter. See minion log."), nil
	}
	cur, err := s.listPkgs(ctx, false)
	if err != nil {
		return nil, err
	}
	// Salt's installed() packs a lone name (and version) into pkgs, so
	// its "Package x is already installed" shortcut is never reached: one
	// package already there is "All specified packages are already
	// installed", as for several.
	reinstall := in.Bool("reinstall")

	// What pkg.install is to do: packages missing or at a version that
	// does not match, and (reinstall) those that do.
	var todo, again []target
	var problems []string
	versionSpec := false
	for _, t := range want {
		cver := cur[t.name]
		switch {
		case len(cver) == 0:
			todo = append(todo, t)
			continue
		case t.version == "":
			if reinstall {
				again = append(again, t)
			}
			continue
		}
		versionSpec = true
		op, ver, ok := spec(t.version)
		if !ok {
			problems = append(problems, fmt.Sprintf("Invalid version specification '%s'.", t.version))
			continue
		}
		if in.Bool("allow_updates") {
			op = ">="
		}
		ok, err := s.fulfills(ctx, cver, op, ver, in.Bool("ignore_epoch"))
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			todo = append(todo, t)
		case reinstall:
			again = append(again, t)
		}
	}
	if len(problems) > 0 {
		return state.Failed(name, "%s", strings.Join(problems, " ")), nil
	}
	if len(todo) == 0 && len(again) == 0 {
		msg := "All specified packages are already installed"
		if versionSpec {
			msg += " and are at the desired version"
		}
		return s.holdInstalled(ctx, in, want, state.Succeeded(name, msg, nil)), nil
	}

	if state.From(ctx).Test {
		changes := map[string]any{}
		var comment []string
		if len(todo) > 0 {
			for _, t := range todo {
				changes[t.name] = map[string]any{"new": "installed", "old": ""}
			}
			comment = append(comment, "The following packages would be installed/updated: "+summary(todo))
		}
		if len(again) > 0 {
			for _, t := range again {
				changes[t.name] = map[string]any{"new": "installed", "old": ""}
			}
			comment = append(comment, "The following packages would be reinstalled: "+summary(again))
		}
		return state.Pending(name, strings.Join(comment, "\n"), changes), nil
	}

	// apt installs an exact version or the candidate: a compared version
	// is installed as the candidate, when that one matches.
	var argv []any
	for _, t := range append(slices.Clone(todo), again...) {
		op, ver, _ := spec(t.version)
		switch {
		case t.version == "":
			argv = append(argv, t.name)
		case op == "==" && !strings.ContainsAny(ver, "*?["):
			argv = append(argv, map[string]any{t.name: ver})
		default:
			if refresh {
				if _, err := s.call(ctx, "pkg.refresh_db", nil, nil); err != nil {
					return state.Failed(name, "%s", errComment("installing", err)), nil
				}
				refresh = false
			}
			out, err := s.call(ctx, "pkg.latest_version", []any{t.name},
				map[string]any{"refresh": false, "show_installed": true, "fromrepo": in.String("fromrepo")})
			if err != nil {
				return state.Failed(name, "%s", errComment("installing", err)), nil
			}
			cand, _ := out.(string)
			ok, err := s.fulfills(ctx, []string{cand}, op, ver, in.Bool("ignore_epoch"))
			if err != nil {
				return nil, err
			}
			if cand == "" || !ok {
				return state.Failed(name, "No version of package '%s' matching '%s' is available (the candidate is '%s')", t.name, t.version, cand), nil
			}
			argv = append(argv, map[string]any{t.name: cand})
		}
	}
	kwargs := map[string]any{
		"pkgs": argv, "refresh": refresh, "skip_verify": in.Bool("skip_verify"),
		"install_recommends": in.Bool("install_recommends"), "reinstall": len(again) > 0,
	}
	if f := in.String("fromrepo"); f != "" {
		kwargs["fromrepo"] = f
	}
	changes, now, fail, err := s.change(ctx, name, "pkg.install", "installing", kwargs)
	if fail != nil || err != nil {
		return fail, err
	}

	var modified, notModified, failed []target
	for _, t := range want {
		good := len(now[t.name]) > 0
		if good && t.version != "" {
			op, ver, _ := spec(t.version)
			if good, err = s.fulfills(ctx, now[t.name], op, ver, in.Bool("ignore_epoch")); err != nil {
				return nil, err
			}
		}
		isTodo := slices.ContainsFunc(todo, func(x target) bool { return x.name == t.name })
		isAgain := slices.ContainsFunc(again, func(x target) bool { return x.name == t.name })
		switch {
		case !good && isTodo:
			failed = append(failed, t)
		case good && isTodo:
			modified = append(modified, t)
		case good && !isAgain:
			notModified = append(notModified, t)
		}
	}
	var comment []string
	if len(failed) > 0 {
		comment = append(comment, "The following packages failed to install/update: "+summary(failed))
	}
	if n := len(modified); n > 0 {
		if sum := summary(modified); len(sum) < 20 {
			comment = append(comment, "The following packages were installed/updated: "+sum)
		} else {
			comment = append(comment, fmt.Sprintf("%d targeted %s installed/updated.", n, plural(n)))
		}
	}
	if n := len(notModified); n > 20 {
		comment = append(comment, fmt.Sprintf("%d targeted %s already installed", n, plural(n)))
	} else if n > 0 {
		comment = append(comment, "The following packages were already installed: "+summary(notModified))
	}
	// pkg.install succeeded: what was to be reinstalled was.
	for _, t := range again {
		comment = append(comment, fmt.Sprintf("Package %s was reinstalled.", desired(t)))
	}
	ok = len(failed) == 0
	if in.Has("hold") {
		holds, err := s.hold(ctx, in, want)
		if err != nil {
			return state.Result{Name: name, Changes: changes, Result: state.Bool(false), Comment: strings.Join(append(comment, err.Error()), "\n")}, nil
		}
		if changes == nil {
			changes = map[string]any{}
		}
		// Salt's order: held changes merged into the install's, then
		// the comments of those already held, then of those that failed
		for _, h := range holds {
			if len(h.changes) == 0 {
				continue
			}
			comment = append(comment, h.comment)
			if c, had := changes[h.name].(map[string]any); had {
				c["new"] = joinChange(c["new"], h.changes["new"])
				c["old"] = joinChange(c["old"], h.changes["old"])
			} else {
				changes[h.name] = map[string]any{"new": py.Str(h.changes["new"])}
			}
		}
		for _, h := range holds {
			if len(h.changes) == 0 && h.result != nil && *h.result {
				comment = append(comment, h.comment)
			}
		}
		for _, h := range holds {
			if h.result == nil || !*h.result {
				comment = append(comment, h.comment)
				ok = false
			}
		}
	}
	return state.Result{Name: name, Changes: changes, Result: state.Bool(ok), Comment: strings.Join(comment, "\n")}, nil
}

// holdResult is one package's entry of pkg.hold's or pkg.unhold's return.
type holdResult struct {
	name, comment string
	changes       map[string]any
	result        *bool
}

// hold runs pkg.hold (hold: True) or pkg.unhold (False) over the
// targets, as Salt's pkg.installed does when hold is given, in test mode
// too (the function then says what it would do).
func (s *states) hold(ctx context.Context, in *function.Input, want []target) ([]holdResult, error) {
	fun := "pkg.unhold"
	if jinja.Truthy(in.Value("hold")) {
		fun = "pkg.hold"
	}
	kw := map[string]any{"pkgs": py.List(names(want))}
	if state.From(ctx).Test {
		kw["test"] = true
	}
	out, err := s.call(ctx, fun, nil, kw)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	var holds []holdResult
	for _, t := range want {
		e, _ := m[t.name].(map[string]any)
		if e == nil {
			continue
		}
		h := holdResult{name: t.name, comment: py.Str(e["comment"])}
		h.changes, _ = e["changes"].(map[string]any)
		if b, isBool := e["result"].(bool); isBool {
			h.result = state.Bool(b)
		}
		holds = append(holds, h)
	}
	return holds, nil
}

// holdInstalled is Salt's pkg.installed with hold given when every target
// is installed already: the hold applied, each package's comment added
// after a period, its result the state's.
func (s *states) holdInstalled(ctx context.Context, in *function.Input, want []target, r state.Result) state.Result {
	if !in.Has("hold") {
		return r
	}
	holds, err := s.hold(ctx, in, want)
	if err != nil {
		return state.Failed(r.Name, "%v", err)
	}
	// Salt's order: those the hold changed, those already so, those failed
	for _, pass := range []func(h holdResult) bool{
		func(h holdResult) bool { return len(h.changes) > 0 },
		func(h holdResult) bool { return len(h.changes) == 0 && h.result != nil && *h.result },
		func(h holdResult) bool { return h.result == nil || !*h.result },
	} {
		for _, h := range holds {
			if !pass(h) {
				continue
			}
			r.Comment += ".\n" + h.comment
			r.Result = h.result
			if len(h.changes) > 0 {
				if r.Changes == nil {
					r.Changes = map[string]any{}
				}
				r.Changes[h.name] = h.changes
			}
		}
	}
	return r
}

// joinChange appends a hold's old or new selection to the install's,
// on a line of its own, as Salt does.
func joinChange(cur, add any) string {
	c, a := py.Str(cur), py.Str(add)
	if cur == nil || c == "" {
		return a
	}
	return c + "\n" + a
}

// plural is "package was" or "packages were".
func plural(n int) string {
	if n == 1 {
		return "package was"
	}
	return "packages were"
}

func (s *states) latest(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	if v, ok := in.ExtraKwargs["sources"]; ok && v != nil {
		return state.Failed(name, `The "sources" parameter is not supported.`), nil
	}
	var want []string
	if p := in.Value("pkgs"); p != nil {
		if l, ok := p.([]any); ok && len(l) == 0 {
			return state.Succeeded(name, "No packages to install provided", nil), nil
		}
		ts, ok := targets(name, "", p)
		if !ok {
			return state.Failed(name, `Invalidly formatted "pkgs" parameter. See minion log.`), nil
		}
		want = names(ts)
	} else {
		want = []string{name}
	}
	args := make([]any, len(want))
	for i, n := range want {
		args[i] = n
	}
	kwargs := map[string]any{"refresh": in.Bool("refresh")}
	if f := in.String("fromrepo"); f != "" {
		kwargs["fromrepo"] = f
	}
	availOut, err := s.call(ctx, "pkg.latest_version", args, kwargs)
	if err != nil {
		return state.Failed(name, "An error was encountered while checking the newest available version of package(s): %v", err), nil
	}
	cur, err := s.listPkgs(ctx, false)
	if err != nil {
		return nil, err
	}
	avail := map[string]string{}
	switch t := availOut.(type) {
	case string:
		avail[want[0]] = t
	case map[string]any:
		for k, v := range t {
			avail[k] = fmt.Sprint(v)
		}
	}
	todo := map[string]string{}
	var problems, upToDate []string
	for _, n := range want {
		switch {
		case avail[n] != "":
			todo[n] = avail[n]
		case len(cur[n]) == 0:
			problems = append(problems, fmt.Sprintf("No information found for '%s'.", n))
		default:
			upToDate = append(upToDate, n)
		}
	}
	if len(problems) > 0 {
		return state.Failed(name, "%s", strings.Join(problems, " ")), nil
	}
	if len(todo) == 0 {
		switch {
		case len(want) > 10:
			return state.Succeeded(name, fmt.Sprintf("All %d packages are up-to-date.", len(want)), nil), nil
		case len(want) > 1:
			return state.Succeeded(name, fmt.Sprintf("All packages are up-to-date (%s).", strings.Join(slices.Sorted(slices.Values(want)), ", ")), nil), nil
		}
		return state.Succeeded(name, fmt.Sprintf("Package %s is already up-to-date", want[0]), nil), nil
	}
	if in.Value("pkgs") == nil {
		upToDate = nil
	}
	slices.Sort(upToDate)
	todoNames := slices.Sorted(func(yield func(string) bool) {
		for n := range todo {
			if !yield(n) {
				return
			}
		}
	})

	if state.From(ctx).Test {
		changes := map[string]any{}
		for _, n := range todoNames {
			changes[n] = map[string]any{"old": strings.Join(cur[n], ","), "new": todo[n]}
		}
		comment := []string{"The following packages would be installed/upgraded: " + strings.Join(todoNames, ", ")}
		if n := len(upToDate); n > 10 {
			comment = append(comment, fmt.Sprintf("%d packages are already up-to-date", n))
		} else if n > 0 {
			l := make([]string, n)
			for i, p := range upToDate {
				l[i] = fmt.Sprintf("%s (%s)", p, strings.Join(cur[p], ","))
			}
			comment = append(comment, "The following packages are already up-to-date: "+strings.Join(l, ", "))
		}
		return state.Pending(name, strings.Join(comment, "\n"), changes), nil
	}

	pkgs := make([]any, len(todoNames))
	for i, n := range todoNames {
		pkgs[i] = map[string]any{n: todo[n]}
	}
	kwargs = map[string]any{"pkgs": pkgs, "refresh": false, "skip_verify": in.Bool("skip_verify"), "install_recommends": in.Bool("install_recommends")}
	if f := in.String("fromrepo"); f != "" {
		kwargs["fromrepo"] = f
	}
	out, err := s.call(ctx, "pkg.install", nil, kwargs)
	if err != nil {
		return state.Failed(name, "An error was encountered while installing package(s): %v", err), nil
	}
	changes, _ := out.(map[string]any)
	if len(changes) == 0 {
		var comment string
		switch {
		case len(todo) > 10:
			comment = fmt.Sprintf("%d targeted packages failed to update. See debug log for details.", len(todo))
		case len(todo) > 1:
			comment = fmt.Sprintf("The following targeted packages failed to update. See debug log for details: (%s).", strings.Join(todoNames, ", "))
		default:
			comment = fmt.Sprintf("Package %s failed to update.", todoNames[0])
		}
		return state.Failed(name, "%s", comment), nil
	}
	var failed, done []string
	for _, n := range todoNames {
		c, _ := changes[n].(map[string]any)
		if c == nil || fmt.Sprint(c["new"]) != todo[n] {
			failed = append(failed, n)
		} else {
			done = append(done, n)
		}
	}
	var comment []string
	if len(failed) > 0 {
		comment = append(comment, "The following packages failed to update: "+strings.Join(failed, ", "))
	}
	if len(done) > 0 {
		comment = append(comment, "The following packages were successfully installed/upgraded: "+strings.Join(done, ", "))
	}
	if n := len(upToDate); n > 10 {
		comment = append(comment, fmt.Sprintf("%d packages were already up-to-date ", n))
	} else if n > 0 {
		comment = append(comment, "The following packages were already up-to-date: "+strings.Join(upToDate, ", "))
	}
	return state.Result{Name: name, Changes: changes, Result: state.Bool(len(failed) == 0), Comment: strings.Join(comment, " ")}, nil
}

// uninstall is Salt's _uninstall: pkg.removed (action "remove") and
// pkg.purged ("purge").
func (s *states) uninstall(action string) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		name := in.String("name")
		want, ok := targets(name, in.String("version"), in.Value("pkgs"))
		if !ok {
			return state.Failed(name, "Invalidly formatted pkgs parameter. See minion log."), nil
		}
		cur, err := s.listPkgs(ctx, false)
		if err != nil {
			return nil, err
		}
		var todo, problems []string
		versionSpec := false
		for _, t := range want {
			cver := cur[t.name]
			switch {
			case len(cver) == 0:
				continue
			case t.version == "":
				todo = append(todo, t.name)
				continue
			}
			versionSpec = true
			op, ver, ok := spec(t.version)
			if !ok {
				problems = append(problems, fmt.Sprintf("Invalid version specification '%s'.", t.version))
				continue
			}
			match, err := s.fulfills(ctx, cver, op, ver, in.Bool("ignore_epoch"))
			if err != nil {
				return nil, err
			}
			if match {
				todo = append(todo, t.name)
			}
		}
		if len(problems) > 0 {
			return state.Failed(name, "%s", strings.Join(problems, " ")), nil
		}
		var confOnly map[string][]string
		if action == "purge" {
			// A removed package whose configuration remains is purged too.
			if confOnly, err = s.listPkgs(ctx, true); err != nil {
				return nil, err
			}
			for _, t := range want {
				if len(confOnly[t.name]) > 0 && !slices.Contains(todo, t.name) {
					todo = append(todo, t.name)
				}
			}
		}
		slices.Sort(todo)
		if len(todo) == 0 {
			msg := "All specified packages are already absent"
			if versionSpec {
				msg = "All specified packages (matching specified versions) are already absent"
			}
			return state.Succeeded(name, msg, nil), nil
		}
		if state.From(ctx).Test {
			changes := map[string]any{}
			for _, n := range todo {
				changes[n] = map[string]any{"new": action + "d", "old": ""}
			}
			return state.Pending(name, fmt.Sprintf("The following packages will be %sd: %s.", action, strings.Join(todo, ", ")), changes), nil
		}
		changes, now, fail, err := s.change(ctx, name, "pkg."+action, "removing", map[string]any{"pkgs": py.List(todo)})
		if fail != nil || err != nil {
			return fail, err
		}
		var nowConf map[string][]string
		if action == "purge" {
			if nowConf, err = s.listPkgs(ctx, true); err != nil {
				return nil, err
			}
		}
		var failed []string
		for _, n := range todo {
			if len(now[n]) > 0 || len(nowConf[n]) > 0 {
				failed = append(failed, n)
			}
		}
		if len(failed) > 0 {
			return state.Result{Name: name, Changes: changes, Result: state.Bool(false),
				Comment: fmt.Sprintf("The following packages failed to %s: %s.", action, strings.Join(failed, ", "))}, nil
		}
		var notInstalled []string
		for _, t := range want {
			if !slices.Contains(todo, t.name) {
				notInstalled = append(notInstalled, t.name)
			}
		}
		slices.Sort(notInstalled)
		comment := fmt.Sprintf("All targeted packages were %sd.", action)
		if len(notInstalled) > 0 {
			comment = fmt.Sprintf("The following packages were not installed: %s The following packages were %sd: %s.",
				strings.Join(notInstalled, ", "), action, strings.Join(todo, ", "))
		}
		return state.Succeeded(name, comment, changes), nil
	}
}
