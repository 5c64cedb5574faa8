package state

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/py"
)

// reqKinds are Salt's requisites; each also has an _in form (but
// require_any and the like), and require, onchanges, onfail and watch an
// _any form. `prerequired` is internal: the state a prereq points at
// waits for the state that declared it.
var reqKinds = []string{"require", "watch", "onchanges", "onfail", "prereq", "use", "listen",
	"require_any", "watch_any", "onchanges_any", "onfail_any", "onfail_all"}

var inKinds = []string{"require_in", "watch_in", "onchanges_in", "onfail_in", "prereq_in", "use_in", "listen_in"}

// runtimeKeys are the arguments the state system reads itself and never
// passes to a state function (Salt's STATE_INTERNAL_KEYWORDS).
var runtimeKeys = map[string]bool{
	"fun": true, "state": true, "check_cmd": true, "failhard": true, "onlyif": true, "unless": true,
	"creates": true, "retry": true, "order": true, "parallel": true, "reload_modules": true,
	"reload_grains": true, "reload_pillar": true, "fire_event": true, "names": true,
	"__env__": true, "__sls__": true, "__id__": true, "__sls_included_from__": true,
	"__pub_user": true, "__pub_arg": true, "__pub_jid": true, "__pub_fun": true, "__pub_tgt": true,
	"__pub_ret": true, "__pub_pid": true, "__pub_tgt_type": true, "__prereq__": true, "onfail_stop": true,
	"prerequired": true, "name_order": true,
}

func init() {
	for _, k := range reqKinds {
		runtimeKeys[k] = true
	}
	for _, k := range inKinds {
		runtimeKeys[k] = true
	}
}

// Arg is one argument of a state declaration, in the order written.
type Arg struct {
	Key   string
	Value any
	// Joined says the argument was written in the same mapping as the one
	// before it (`- context:` with `config:` indented alike): Salt's high
	// data keeps them one item, which the compiler reads key by key.
	Joined bool
}

// An Arg with no Key (and not Joined) is an item of the list that is not
// a mapping (a number, a list): Salt keeps it in the high data and its
// compiler ignores it.

// Decl is one state declaration under an id: `pkg.installed: [args]`.
type Decl struct {
	Module, Fun string
	Args        []Arg
}

// ID is one id declaration of an SLS file with its state declarations.
type ID struct {
	ID, SLS, Env string
	Decls        []*Decl
}

// High is high data: every id of the SLS files applied, in order: what
// an SLS includes, then its own ids. Extend and exclude declarations are
// kept apart, as Salt's high data keeps them (__extend__, __exclude__):
// Show gives them so, Chunks applies them as a run does.
type High struct {
	IDs  []*ID
	byID map[string]*ID
	// Errors are compile errors: a failed render, a missing include, a
	// malformed declaration. Salt returns them instead of running.
	Errors []string

	// dict is the ids in the order of Salt's high data dictionary (an SLS's
	// own ids, then those of what it includes), which verify_high walks.
	dict     []*ID
	extends  []extend
	excludes []any
	iorder   int  // Salt's state_auto_order: the next automatic order
	applied  bool // extends and excludes applied (Chunks)
}

// extend is one id of an extend declaration: its body as Salt's high
// data shows it (__sls__, __env__, module: [args…, fun]) and as
// declarations.
type extend struct {
	id, sls, env string
	show         map[string]any
	decls        []*Decl
}

// Lookup returns the id declaration named id.
func (h *High) Lookup(id string) *ID { return h.byID[id] }

// Vars returns the Jinja context for rendering sls of saltenv: the
// state system's grains, pillar, salt and opts, with Salt's sls,
// slspath, tpldir, tplpath… (slsContext) added by the compiler.
type Vars func(saltenv string) map[string]any

// slsContext is what Salt's generate_sls_context adds to an SLS's (state
// or pillar) template context, file being the SLS's file relative to its
// root (a/b.sls, a/b/init.sls): sls, its directory as slspath, sls_path,
// slsdotpath and slscolonpath ("" at the root), as tpldir ("." at the
// root: the mysql formula's pillar.example writes salt://{{ tpldir }}/…)
// and tpldot, and the file as tplfile and tplpath.
func slsContext(file, sls string) map[string]any {
	dir := ""
	if i := strings.LastIndex(file, "/"); i >= 0 {
		dir = file[:i]
	}
	tpldir := dir
	if tpldir == "" {
		tpldir = "."
	}
	return map[string]any{
		"sls": sls, "slspath": dir,
		"sls_path":     strings.ReplaceAll(dir, "/", "_"),
		"slsdotpath":   strings.ReplaceAll(dir, "/", "."),
		"slscolonpath": strings.ReplaceAll(dir, "/", ":"),
		"tpldir":       tpldir, "tpldot": strings.ReplaceAll(dir, "/", "."),
		"tplfile": file, "tplpath": file,
	}
}

// Compiler renders SLS files into high data.
type Compiler struct {
	Renderer *Renderer
	Source   Source
	Vars     Vars
}

// Template is what state functions render templates with
// (Running.Template: file.managed's template: jinja): Jinja with the
// compiler's context for saltenv, the state's own context over it.
func (c *Compiler) Template(saltenv string) func(ctx context.Context, engine, name string, src []byte, extra map[string]any) ([]byte, error) {
	return func(ctx context.Context, engine, name string, src []byte, extra map[string]any) ([]byte, error) {
		if engine != "jinja" {
			return nil, fmt.Errorf("template engine %q is not available (brine renders jinja)", engine)
		}
		vars := map[string]any{}
		if c.Vars != nil {
			for k, v := range c.Vars(saltenv) {
				vars[k] = v
			}
		}
		for k, v := range extra {
			vars[k] = v
		}
		return c.Renderer.Jinja(ctx, c.Source, saltenv, name, src, vars)
	}
}

// slsFile finds the file of an SLS name: a/b is a/b.sls or a/b/init.sls.
func (c *Compiler) slsFile(ctx context.Context, saltenv, sls string) (string, []byte, error) {
	base := strings.ReplaceAll(sls, ".", "/")
	var errs []error
	for _, name := range []string{base + ".sls", base + "/init.sls"} {
		b, err := c.Source.Read(ctx, saltenv, name)
		if err == nil {
			return name, b, nil
		}
		if !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return "", nil, errors.Join(errs...)
	}
	return "", nil, ErrNotFound
}

// Compile renders mods (SLS names) of saltenv and what they include.
func (c *Compiler) Compile(ctx context.Context, saltenv string, mods []string) *High {
	return c.CompileEnvs(ctx, map[string][]string{saltenv: mods}, []string{saltenv})
}

// CompileEnvs renders the SLS names of several environments, envs
// giving their order (a highstate's top file names SLS in several). The
// high data is as Salt's render_highstate and verify_high leave it:
// extend and exclude declarations not applied yet (Chunks applies them).
func (c *Compiler) CompileEnvs(ctx context.Context, mods map[string][]string, envs []string) *High {
	h := &High{byID: map[string]*ID{}, iorder: autoOrderStart}
	src := newMemo(c.Source)
	cc := *c
	cc.Source = src
	done := map[string]bool{}
	for _, env := range envs {
		for _, sls := range mods[env] {
			h.dict = append(h.dict, cc.render(ctx, h, env, sls, "", done)...)
		}
	}
	h.Errors = append(h.Errors, h.verify()...)
	return h
}

// render renders one SLS and what it includes into h; it returns their
// ids in the order of Salt's high data dictionary (its own, then what it
// includes).
func (c *Compiler) render(ctx context.Context, h *High, saltenv, sls, via string, done map[string]bool) []*ID {
	key := saltenv + ":" + sls
	if done[key] {
		return nil
	}
	done[key] = true
	name, text, err := c.slsFile(ctx, saltenv, sls)
	if errors.Is(err, ErrNotFound) {
		if via != "" {
			// Salt's words exactly: scripts match on them
			h.Errors = append(h.Errors, fmt.Sprintf("Specified SLS %s in saltenv %s is not available on the salt master or through a configured fileserver", sls, saltenv))
		} else {
			h.Errors = append(h.Errors, fmt.Sprintf("No matching sls found for '%s' in env '%s'", sls, saltenv))
		}
		return nil
	}
	if err != nil {
		h.Errors = append(h.Errors, fmt.Sprintf("Unable to read SLS %s in saltenv %s: %v", sls, saltenv, err))
		return nil
	}
	vars := map[string]any{}
	if c.Vars != nil {
		for k, v := range c.Vars(saltenv) {
			vars[k] = v
		}
	}
	for k, v := range slsContext(name, sls) {
		vars[k] = v
	}
	vars["saltenv"] = saltenv
	data, err := c.Renderer.RenderSLS(ctx, c.Source, saltenv, name, text, vars)
	if err != nil {
		var re *RenderError
		if errors.As(err, &re) && via != "" && re.Via == "" {
			re.Via = "included from SLS " + via
		}
		h.Errors = append(h.Errors, err.Error())
		return nil
	}
	var includes []string
	var own []*ID
	for _, item := range data {
		key, ok := item.Key.(string)
		if !ok {
			// Salt's verify_high: the id is not text (a YAML number,
			// boolean or null).
			h.Errors = append(h.Errors, fmt.Sprintf("ID '%s' in SLS '%s' is not formed as a string, but is a %s. It may need to be quoted.", scalarStr(toPlain(item.Key)), sls, pyType(item.Key)))
			continue
		}
		switch key {
		case "include":
			includes = append(includes, c.includes(h, sls, strings.HasSuffix(name, "/init.sls"), item.Value)...)
		case "extend":
			h.addExtend(sls, saltenv, item.Value)
		case "exclude":
			list, ok := item.Value.([]any)
			if !ok {
				h.Errors = append(h.Errors, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
				continue
			}
			h.excludes = append(h.excludes, toPlain(list).([]any)...)
		default:
			if strings.HasPrefix(key, "__") {
				continue
			}
			id := &ID{ID: key, SLS: sls, Env: saltenv}
			if errs := id.parse(item.Value); len(errs) > 0 {
				h.Errors = append(h.Errors, errs...)
				continue
			}
			own = append(own, id)
		}
	}
	// Included SLS files' states come first, as Salt runs them.
	var dict []*ID
	for _, inc := range includes {
		dict = append(dict, c.render(ctx, h, saltenv, inc, sls, done)...)
	}
	var added []*ID
	for _, id := range own {
		if prev := h.byID[id.ID]; prev != nil {
			h.Errors = append(h.Errors, fmt.Sprintf("Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting ID is '%s' and is found in SLS '%s:%s' and SLS '%s:%s'", id.ID, prev.Env, prev.SLS, saltenv, sls))
			continue
		}
		h.byID[id.ID] = id
		h.IDs = append(h.IDs, id)
		added = append(added, id)
		// Salt's state_auto_order: each declaration without an order
		// gets the next, in render order (what an SLS includes first).
		for _, d := range id.Decls {
			if !hasOrder(d) {
				d.Args = append(d.Args, Arg{Key: "order", Value: int64(h.iorder)})
				h.iorder++
			}
		}
	}
	return append(added, dict...)
}

// autoOrderStart is Salt's first automatic order (HighState.iorder).
const autoOrderStart = 10000

// hasOrder says whether a declaration sets its order (a mapping whose
// first key is order, as Salt's _handle_iorder looks).
func hasOrder(d *Decl) bool {
	for _, a := range d.Args {
		if a.Key == "order" && !a.Joined {
			return true
		}
	}
	return false
}

// pyType is the name of Python's type of a YAML scalar.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int64, uint64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case yaml.MapSlice, map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// includes reads an include list: names, relative names (.foo, ..foo)
// and {sls: {key: …}} mappings (their options are not used).
func (c *Compiler) includes(h *High, sls string, isInit bool, v any) []string {
	list, ok := v.([]any)
	if !ok {
		h.Errors = append(h.Errors, fmt.Sprintf("Include Declaration in SLS %s is not formed as a list", sls))
		return nil
	}
	var out []string
	for _, x := range list {
		var name string
		switch x := x.(type) {
		case string:
			name = x
		case yaml.MapSlice:
			if len(x) == 1 {
				name = fmt.Sprint(x[0].Key)
			}
		}
		if name == "" {
			h.Errors = append(h.Errors, fmt.Sprintf("Include Declaration in SLS %s has an entry that is not an SLS name: %v", sls, toPlain(x)))
			continue
		}
		if strings.HasPrefix(name, ".") {
			name = relativeSLS(sls, name, isInit)
			if name == "" {
				h.Errors = append(h.Errors, fmt.Sprintf("Attempted relative include of '%v' within SLS '%s' goes beyond top level package", x, sls))
				continue
			}
		}
		out = append(out, name)
	}
	return out
}

// relativeSLS resolves Salt's relative include: in a.b.c (a/b/c.sls),
// ".d" is a.b.d and "..d" a.d; in a.b (a/b/init.sls) ".d" is a.b.d, the
// package being the SLS itself ("" when it climbs above the top).
func relativeSLS(sls, rel string, isInit bool) string {
	dots := len(rel) - len(strings.TrimLeft(rel, "."))
	parts := strings.Split(sls, ".")
	if isInit {
		parts = append(parts, "init")
	}
	keep := len(parts) - dots
	if keep < 0 {
		return ""
	}
	name := strings.Join(append(parts[:keep:keep], rel[dots:]), ".")
	return strings.TrimPrefix(name, ".")
}

// entry is one key of an id's (or an extension's) mapping, as Salt's
// dictionary holds it while it rewrites `pkg.installed: [args]` into
// `pkg: [args, installed]`.
type entry struct {
	key   string
	value any
	// converted: the key was module.function, its function appended.
	converted bool
}

// saltDecls is Salt's _handle_state_decls (and _handle_extend, extension)
// on one mapping: each `module.function` key whose value is a list
// becomes `module` with the function appended, popped and put back at the
// end of the dictionary (or in place of an existing `module` key) as
// Python does. It returns the entries in the dictionary's order and, for
// an id, the error of a module declared twice.
func saltDecls(body yaml.MapSlice, id, sls string, extension bool) ([]entry, []string) {
	var entries []entry
	var errs []string
	for _, item := range body {
		entries = append(entries, entry{key: fmt.Sprint(item.Key), value: item.Value})
	}
	find := func(k string) int {
		for i, e := range entries {
			if e.key == k {
				return i
			}
		}
		return -1
	}
	skeys := map[string]bool{}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.key
	}
	for _, k := range keys {
		i := find(k)
		if i < 0 || strings.HasPrefix(k, "_") {
			continue
		}
		list, ok := entries[i].value.([]any)
		if !ok {
			continue
		}
		if strings.Contains(k, ".") {
			comps := strings.Split(k, ".")
			if !extension && skeys[comps[0]] {
				errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains multiple state declarations of the same type", id, sls))
				continue
			}
			entries = append(entries[:i], entries[i+1:]...)
			e := entry{key: comps[0], value: append(append([]any{}, list...), comps[1]), converted: true}
			if j := find(comps[0]); j >= 0 {
				entries[j] = e
			} else {
				entries = append(entries, e)
			}
			skeys[comps[0]] = true
			continue
		}
		skeys[k] = true
	}
	return entries, errs
}

// parse reads an id's body as Salt's _handle_state_decls and the checks
// of verify_high that concern one declaration do: `module.fun: [args]`,
// `module: [fun, args]` or the short `module.fun` string, with Salt's
// messages.
func (id *ID) parse(v any) []string {
	switch body := v.(type) {
	case string:
		if strings.Contains(body, ".") {
			comps := strings.Split(body, ".")
			id.Decls = append(id.Decls, &Decl{Module: comps[0], Fun: comps[1]})
			return nil
		}
	case yaml.MapSlice:
		return id.parseDecls(body)
	}
	str := scalarStr(toPlain(v))
	if _, ok := v.(string); !ok {
		str = py.ReprValue(toPlain(v))
	}
	return []string{fmt.Sprintf("ID %s in SLS %s is not a dictionary", id.ID, id.SLS),
		fmt.Sprintf("The type %s in %s is not formatted as a dictionary", id.ID, str)}
}

func (id *ID) parseDecls(body yaml.MapSlice) []string {
	entries, errs := saltDecls(body, id.ID, id.SLS, false)
	for _, e := range entries {
		if strings.HasPrefix(e.key, "__") {
			continue
		}
		if e.value == nil {
			errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", id.ID, id.SLS, e.key))
			continue
		}
		list, ok := e.value.([]any)
		if !ok {
			errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' is not formed as a list", id.ID, id.SLS))
			continue
		}
		if strings.Contains(e.key, ".") {
			// module.function declared twice: reported by saltDecls.
			continue
		}
		d, funs := declOf(e.key, list)
		for _, f := range funs {
			if strings.Contains(strings.TrimSpace(f), " ") {
				errs = append(errs, fmt.Sprintf(`The function "%s" in state "%s" in SLS "%s" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a ":"`, f, id.ID, id.SLS))
			}
		}
		if len(funs) > 1 {
			errs = append(errs, fmt.Sprintf("Too many functions declared in state '%s' in SLS '%s'. Please choose one of the following: %s", id.ID, id.SLS, strings.Join(funs, ", ")))
			continue
		}
		id.Decls = append(id.Decls, d)
	}
	return errs
}

// declOf reads a declaration's list: its function names (strings) and
// its arguments (a mapping's keys, in order; other items kept as they
// are).
func declOf(module string, list []any) (*Decl, []string) {
	d := &Decl{Module: module}
	var funs []string
	for _, a := range list {
		switch a := a.(type) {
		case string:
			funs = append(funs, a)
			d.Fun = a
		case yaml.MapSlice:
			if len(a) == 0 {
				d.Args = append(d.Args, Arg{Value: map[string]any{}})
				continue
			}
			for i, kv := range a {
				d.Args = append(d.Args, Arg{Key: fmt.Sprint(kv.Key), Value: toPlain(kv.Value), Joined: i > 0})
			}
		default:
			d.Args = append(d.Args, Arg{Value: toPlain(a)})
		}
	}
	return d, funs
}

// addExtend reads an extend declaration as Salt's _handle_extend does.
func (h *High) addExtend(sls, saltenv string, v any) {
	body, ok := v.(yaml.MapSlice)
	if !ok {
		h.Errors = append(h.Errors, fmt.Sprintf("Extension value in SLS '%s' is not a dictionary", sls))
		return
	}
	for _, e := range body {
		name := scalarStr(toPlain(e.Key))
		ebody, ok := e.Value.(yaml.MapSlice)
		if !ok {
			h.Errors = append(h.Errors, fmt.Sprintf("Extension name '%s' in SLS '%s' is not a dictionary", name, sls))
			continue
		}
		ext := extend{id: name, sls: sls, env: saltenv, show: map[string]any{}}
		entries, _ := saltDecls(ebody, name, sls, true)
		for _, en := range entries {
			ext.show[en.key] = toPlain(en.value)
		}
		if s, ok := ext.show["__sls__"].(string); ok {
			ext.sls = s
		} else {
			ext.show["__sls__"] = sls
		}
		if s, ok := ext.show["__env__"].(string); ok {
			ext.env = s
		} else {
			ext.show["__env__"] = saltenv
		}
		// The dictionary's order: the keys as written, __sls__ and
		// __env__, then the module.function keys converted.
		var first []entry
		var later []entry
		for _, en := range entries {
			if en.converted {
				later = append(later, en)
			} else {
				first = append(first, en)
			}
		}
		for _, en := range append(first, later...) {
			if strings.HasPrefix(en.key, "__") {
				continue
			}
			list, ok := en.value.([]any)
			if !ok {
				list = nil
			}
			d, _ := declOf(en.key, list)
			ext.decls = append(ext.decls, d)
		}
		h.extends = append(h.extends, ext)
	}
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// Plain is v with ordered YAML mappings as plain maps and integers as
// int64, as high data and pillar hold them.
func Plain(v any) any { return toPlain(v) }

// toPlain turns ordered YAML mappings into plain maps.
func toPlain(v any) any { return py.MapLeaves(v, plainLeaf) }

// plainLeaf is toPlain of a value that is not a list or a plain map: an
// ordered mapping made a map and walked in turn, an integer made an int64.
func plainLeaf(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(v))
		for _, item := range v {
			m[fmt.Sprint(item.Key)] = toPlain(item.Value)
		}
		return m
	case uint64:
		if v <= 1<<63-1 {
			return int64(v)
		}
	case int:
		return int64(v)
	}
	return v
}

// Show is the high data as Salt's state.show_sls prints it: each id's
// module declarations as lists of the function name and the arguments
// (a mapping per item as written, Salt's automatic order last), with
// __sls__ and __env__; the extend and exclude declarations not applied, as
// __extend__ (one {id: body} per id, duplicates dropped) and __exclude__.
func (h *High) Show() map[string]any {
	out := make(map[string]any, len(h.IDs)+2)
	for _, id := range h.IDs {
		body := map[string]any{"__sls__": id.SLS, "__env__": id.Env}
		for _, d := range id.Decls {
			list := []any{}
			if d.Fun != "" {
				list = append(list, d.Fun)
			}
			for _, g := range argGroups(d.Args) {
				list = append(list, groupValue(g))
			}
			body[d.Module] = list
		}
		out[id.ID] = body
	}
	if !h.applied {
		if ext := h.uniqueExtends(); len(ext) > 0 {
			list := make([]any, len(ext))
			for i, e := range ext {
				list[i] = map[string]any{e.id: e.show}
			}
			out["__extend__"] = list
		}
		if len(h.excludes) > 0 {
			out["__exclude__"] = append([]any{}, h.excludes...)
		}
	}
	return out
}

// argGroups splits arguments into the items written: a mapping's keys
// together, a non-mapping item alone.
func argGroups(args []Arg) [][]Arg {
	var out [][]Arg
	for i, a := range args {
		if a.Joined && len(out) > 0 && args[i-1].Key != "" {
			out[len(out)-1] = append(out[len(out)-1], a)
			continue
		}
		out = append(out, []Arg{a})
	}
	return out
}

// groupValue is an item of a declaration's list as Salt's high data holds
// it.
func groupValue(g []Arg) any {
	if g[0].Key == "" {
		return g[0].Value
	}
	m := make(map[string]any, len(g))
	for _, a := range g {
		m[a.Key] = a.Value
	}
	return m
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Single is the high data of one state declaration (state.single): its
// id is its name.
func Single(d *Decl, saltenv string) *High {
	name := ""
	for _, a := range d.Args {
		if a.Key == "name" {
			name = scalarStr(a.Value)
		}
	}
	id := &ID{ID: name, SLS: "", Env: saltenv, Decls: []*Decl{d}}
	return &High{IDs: []*ID{id}, byID: map[string]*ID{name: id}}
}

// Exclude adds to the exclude declarations, as a state function's
// exclude= does (state.sls): SLS names (or globs) as "a,b", or a list of
// SLS names, {sls: …} and {id: …}. Chunks applies them.
func (h *High) Exclude(v any) {
	items, ok := v.([]any)
	if !ok {
		for _, m := range Mods(v) {
			items = append(items, m)
		}
	}
	h.excludes = append(h.excludes, items...)
}
