package state

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
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
}

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
// an SLS includes, then its own ids.
type High struct {
	IDs  []*ID
	byID map[string]*ID
	// Errors are compile errors: a failed render, a missing include, a
	// malformed declaration. Salt returns them instead of running.
	Errors []string

	extends  []extend
	excludes []exclude
}

type extend struct {
	id, sls, env string
	body         yaml.MapSlice
}

type exclude struct{ sls, id string }

// Lookup returns the id declaration named id.
func (h *High) Lookup(id string) *ID { return h.byID[id] }

// Vars returns the Jinja context for rendering sls of saltenv: the
// state system's grains, pillar, salt and opts, with Salt's sls,
// slspath, sls_path, tpldir and tplpath added by the compiler.
type Vars func(saltenv string) map[string]any

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
// giving their order (a highstate's top file names SLS in several).
func (c *Compiler) CompileEnvs(ctx context.Context, mods map[string][]string, envs []string) *High {
	h := &High{byID: map[string]*ID{}}
	src := newMemo(c.Source)
	cc := *c
	cc.Source = src
	done := map[string]bool{}
	for _, env := range envs {
		for _, sls := range mods[env] {
			cc.render(ctx, h, env, sls, "", done)
		}
	}
	h.applyExtends()
	h.applyExcludes()
	return h
}

func (c *Compiler) render(ctx context.Context, h *High, saltenv, sls, via string, done map[string]bool) {
	key := saltenv + ":" + sls
	if done[key] {
		return
	}
	done[key] = true
	name, text, err := c.slsFile(ctx, saltenv, sls)
	if errors.Is(err, ErrNotFound) {
		if via != "" {
			h.Errors = append(h.Errors, fmt.Sprintf("Specified SLS %s in saltenv %s is not available on the salt master or through a configured fileserver (included from %s)", sls, saltenv, via))
		} else {
			h.Errors = append(h.Errors, fmt.Sprintf("No matching sls found for '%s' in env '%s'", sls, saltenv))
		}
		return
	}
	if err != nil {
		h.Errors = append(h.Errors, fmt.Sprintf("Unable to read SLS %s in saltenv %s: %v", sls, saltenv, err))
		return
	}
	vars := map[string]any{}
	if c.Vars != nil {
		for k, v := range c.Vars(saltenv) {
			vars[k] = v
		}
	}
	slspath := path.Dir(name)
	if slspath == "." {
		slspath = ""
	}
	vars["sls"] = sls
	vars["slspath"] = slspath
	vars["sls_path"] = strings.ReplaceAll(slspath, "/", "_")
	vars["slsdotpath"] = strings.ReplaceAll(slspath, "/", ".")
	vars["slscolonpath"] = strings.ReplaceAll(slspath, "/", ":")
	vars["tpldir"] = slspath
	vars["tplfile"] = name
	vars["tplpath"] = name
	vars["saltenv"] = saltenv
	data, err := c.Renderer.RenderSLS(ctx, c.Source, saltenv, name, text, vars)
	if err != nil {
		var re *RenderError
		if errors.As(err, &re) && via != "" && re.Via == "" {
			re.Via = "included from SLS " + via
		}
		h.Errors = append(h.Errors, err.Error())
		return
	}
	var includes []string
	var own []*ID
	for _, item := range data {
		key, ok := item.Key.(string)
		if !ok {
			h.Errors = append(h.Errors, fmt.Sprintf("ID '%v' in SLS '%s' is not formed as a string, but is type %T. It may need to be quoted.", item.Key, sls, item.Key))
			continue
		}
		switch key {
		case "include":
			includes = append(includes, c.includes(h, sls, strings.HasSuffix(name, "/init.sls"), item.Value)...)
		case "extend":
			body, ok := item.Value.(yaml.MapSlice)
			if !ok {
				h.Errors = append(h.Errors, fmt.Sprintf("Extension data in SLS '%s' is not a dictionary", sls))
				continue
			}
			for _, e := range body {
				ebody, _ := e.Value.(yaml.MapSlice)
				h.extends = append(h.extends, extend{id: fmt.Sprint(e.Key), sls: sls, env: saltenv, body: ebody})
			}
		case "exclude":
			list, ok := item.Value.([]any)
			if !ok {
				h.Errors = append(h.Errors, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
				continue
			}
			h.addExcludes(toPlain(list).([]any))
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
	for _, inc := range includes {
		c.render(ctx, h, saltenv, inc, sls, done)
	}
	for _, id := range own {
		if prev := h.byID[id.ID]; prev != nil {
			h.Errors = append(h.Errors, fmt.Sprintf("Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting ID is '%s' and is found in SLS '%s:%s' and SLS '%s:%s'", id.ID, prev.Env, prev.SLS, saltenv, sls))
			continue
		}
		h.byID[id.ID] = id
		h.IDs = append(h.IDs, id)
	}
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

// parse reads an id's body: `module.fun: [args]`, `module: [fun, args]`
// or the short `module.fun` string.
func (id *ID) parse(v any) []string { return id.parseDecls(v, false) }

// parseDecls reads an id's body; an extend block (extending) may leave
// out the function, which the extended declaration has.
func (id *ID) parseDecls(v any, extending bool) []string {
	var errs []string
	switch body := v.(type) {
	case string:
		mod, fun, ok := strings.Cut(body, ".")
		if !ok {
			return []string{fmt.Sprintf("ID '%s' in SLS '%s' is not a dictionary", id.ID, id.SLS)}
		}
		id.Decls = append(id.Decls, &Decl{Module: mod, Fun: fun})
		return nil
	case yaml.MapSlice:
		for _, item := range body {
			key := fmt.Sprint(item.Key)
			if strings.HasPrefix(key, "__") {
				continue
			}
			d := &Decl{Module: key}
			if mod, fun, ok := strings.Cut(key, "."); ok {
				d.Module, d.Fun = mod, fun
			}
			if item.Value == nil {
				if d.Fun == "" {
					errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", id.ID, id.SLS, key))
					continue
				}
				id.Decls = append(id.Decls, d)
				continue
			}
			list, ok := item.Value.([]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' is not formed as a list", id.ID, id.SLS))
				continue
			}
			for _, a := range list {
				switch a := a.(type) {
				case string:
					if d.Fun != "" {
						errs = append(errs, fmt.Sprintf("Too many functions declared in state '%s' in SLS '%s'. Please choose one of the following: %s, %s", key, id.SLS, d.Fun, a))
						continue
					}
					if strings.TrimSpace(a) != a || strings.Contains(a, " ") {
						errs = append(errs, fmt.Sprintf(`The function "%s" in state "%s" in SLS "%s" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a ":"`, a, id.ID, id.SLS))
						continue
					}
					d.Fun = a
				case yaml.MapSlice:
					if len(a) != 1 {
						errs = append(errs, fmt.Sprintf("Argument %v in state '%s' in SLS '%s' must be a single key: value (is a '-' missing?)", toPlain(a), id.ID, id.SLS))
						continue
					}
					d.Args = append(d.Args, Arg{Key: fmt.Sprint(a[0].Key), Value: toPlain(a[0].Value)})
				default:
					errs = append(errs, fmt.Sprintf("Argument %v in state '%s' in SLS '%s' is not a key: value mapping", toPlain(a), id.ID, id.SLS))
				}
			}
			if d.Fun == "" && !extending {
				errs = append(errs, fmt.Sprintf("No function declared in state '%s' in SLS '%s'", key, id.SLS))
				continue
			}
			for _, other := range id.Decls {
				if other.Module == d.Module {
					errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' declares module %s twice", id.ID, id.SLS, d.Module))
				}
			}
			id.Decls = append(id.Decls, d)
		}
		return errs
	}
	return []string{fmt.Sprintf("ID '%s' in SLS '%s' is not a dictionary", id.ID, id.SLS)}
}

// applyExtends merges extend blocks into the ids they name: an argument
// given replaces the one declared, but requisites (and `names`) are
// appended, as Salt does.
func (h *High) applyExtends() {
	for _, e := range h.extends {
		target := h.byID[e.id]
		if target == nil {
			h.Errors = append(h.Errors, fmt.Sprintf("Cannot extend ID '%s' in '%s:%s'. It is not part of the high state.\nThis is likely due to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an ID of '%s' is available\nin environment '%s' and to SLS '%s'", e.id, e.env, e.sls, e.id, e.env, e.sls))
			continue
		}
		ext := &ID{ID: e.id, SLS: e.sls}
		if errs := ext.parseDecls(e.body, true); len(errs) > 0 {
			h.Errors = append(h.Errors, errs...)
			continue
		}
		for _, d := range ext.Decls {
			var into *Decl
			for _, td := range target.Decls {
				if td.Module == d.Module {
					into = td
				}
			}
			if into == nil {
				if d.Fun == "" {
					h.Errors = append(h.Errors, fmt.Sprintf("Cannot extend ID '%s' in SLS '%s' with state '%s': it declares no function", e.id, e.sls, d.Module))
					continue
				}
				target.Decls = append(target.Decls, d)
				continue
			}
			if d.Fun != "" {
				into.Fun = d.Fun
			}
		next:
			for _, a := range d.Args {
				for i, ta := range into.Args {
					if ta.Key != a.Key {
						continue
					}
					if isReqKey(a.Key) || a.Key == "names" {
						into.Args[i].Value = append(asList(ta.Value), asList(a.Value)...)
					} else {
						into.Args[i].Value = a.Value
					}
					continue next
				}
				into.Args = append(into.Args, a)
			}
		}
	}
}

func isReqKey(k string) bool {
	for _, r := range reqKinds {
		if k == r || k == r+"_in" {
			return true
		}
	}
	return false
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

// applyExcludes drops excluded ids, and every id of an excluded SLS.
func (h *High) applyExcludes() {
	if len(h.excludes) == 0 {
		return
	}
	drop := map[string]bool{}
	for _, x := range h.excludes {
		for _, id := range h.IDs {
			if x.id == id.ID {
				drop[id.ID] = true
			}
			if x.sls != "" {
				if ok, _ := path.Match(x.sls, id.SLS); ok {
					drop[id.ID] = true
				}
			}
		}
	}
	kept := h.IDs[:0]
	for _, id := range h.IDs {
		if drop[id.ID] {
			delete(h.byID, id.ID)
			continue
		}
		kept = append(kept, id)
	}
	h.IDs = kept
}

// toPlain turns ordered YAML mappings into plain maps.
func toPlain(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(v))
		for _, item := range v {
			m[fmt.Sprint(item.Key)] = toPlain(item.Value)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = toPlain(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = toPlain(x)
		}
		return out
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
// module declarations as lists of the function name and the arguments,
// with __sls__ and __env__.
func (h *High) Show() map[string]any {
	out := make(map[string]any, len(h.IDs))
	for _, id := range h.IDs {
		body := map[string]any{"__sls__": id.SLS, "__env__": id.Env}
		for _, d := range id.Decls {
			list := []any{d.Fun}
			for _, a := range d.Args {
				list = append(list, map[string]any{a.Key: a.Value})
			}
			body[d.Module] = list
		}
		out[id.ID] = body
	}
	return out
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
			name = pyStr(a.Value)
		}
	}
	id := &ID{ID: name, SLS: "", Env: saltenv, Decls: []*Decl{d}}
	return &High{IDs: []*ID{id}, byID: map[string]*ID{name: id}}
}

// Exclude drops ids and SLS as an exclude declaration or a state
// function's exclude= does: SLS names (or globs) as "a,b", or a list of
// SLS names, {sls: …} and {id: …}.
func (h *High) Exclude(v any) {
	items, ok := v.([]any)
	if !ok {
		for _, m := range Mods(v) {
			items = append(items, m)
		}
	}
	h.addExcludes(items)
	h.applyExcludes()
}

// addExcludes reads exclude items: an SLS name, {sls: …} or {id: …}.
func (h *High) addExcludes(items []any) {
	for _, x := range items {
		switch x := x.(type) {
		case string:
			h.excludes = append(h.excludes, exclude{sls: x})
		case map[string]any:
			if s, ok := x["sls"].(string); ok {
				h.excludes = append(h.excludes, exclude{sls: s})
			}
			if s, ok := x["id"].(string); ok {
				h.excludes = append(h.excludes, exclude{id: s})
			}
		}
	}
}
