package state

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// verify is what Salt's verify_high checks of the declarations' arguments
// and functions (parse checks the shape of each declaration as it reads
// it): `names` and the require, watch, prereq and onchanges requisites
// formed as lists of single-key mappings naming an id, no requisite on a
// state that requires it back, a function for each declaration. The ids
// are walked in the order of Salt's high data dictionary, as Salt does.
func (h *High) verify() []string {
	var errs []string
	// reqs is Salt's: id → {"state": module, requisite target: kind}.
	reqs := map[string]map[any]string{}
	for _, id := range h.dict {
		for _, d := range id.Decls {
			for _, g := range argGroups(d.Args) {
				first := g[0]
				if first.Key == "" {
					continue
				}
				if first.Key == "names" {
					if _, ok := first.Value.([]any); !ok {
						errs = append(errs, fmt.Sprintf("The 'names' argument in state '%s' in SLS '%s' needs to be formed as a list", id.ID, id.SLS))
					}
				}
				switch first.Key {
				case "require", "watch", "prereq", "onchanges":
				default:
					continue
				}
				list, ok := first.Value.([]any)
				if !ok {
					errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' needs to be formed as a list", first.Key, id.ID, id.SLS))
					continue
				}
				reqs[id.ID] = map[any]string{"state": d.Module}
				for _, r := range list {
					if s, ok := r.(string); ok {
						r = map[string]any{"id": s}
					}
					m, ok := r.(map[string]any)
					if !ok || len(m) == 0 {
						errs = append(errs, fmt.Sprintf("Requisite declaration %s in SLS %s is not formed as a single key dictionary", py.ReprValue(r), id.SLS))
						continue
					}
					key := sortedKeys(m)[0]
					val := m[key]
					if strings.Contains(key, ".") {
						errs = append(errs, fmt.Sprintf("Invalid requisite type '%s' in state '%s', in SLS '%s'. Requisite types must not contain dots, did you mean '%s'?", key, id.ID, id.SLS, key[:strings.Index(key, ".")]))
					}
					switch val.(type) {
					case []any, map[string]any:
						errs = append(errs, fmt.Sprintf("Illegal requisite \"%s\", please check your syntax.\n", py.ReprValue(val)))
						continue
					}
					reqs[id.ID][val] = key
					if other, ok := val.(string); ok {
						if back, ok := reqs[other]; ok {
							if kind, ok := back[id.ID]; ok && kind == d.Module && back["state"] == reqs[id.ID][val] {
								errs = append(errs, fmt.Sprintf("A recursive requisite was found, SLS \"%s\" ID \"%s\" ID \"%s\"", id.SLS, id.ID, other))
							}
						}
					}
				}
				if len(g) != 1 {
					errs = append(errs, fmt.Sprintf("Multiple dictionaries defined in argument of state '%s' in SLS '%s'", id.ID, id.SLS))
				}
			}
			if d.Fun == "" && d.Module != "require" && d.Module != "watch" {
				errs = append(errs, fmt.Sprintf("No function declared in state '%s' in SLS '%s'", id.ID, id.SLS))
			}
		}
	}
	return errs
}

// uniqueExtends is the extend declarations as Salt's
// clean_duplicate_extends leaves them: one per id and body, the first.
func (h *High) uniqueExtends() []extend {
	var out []extend
next:
	for _, e := range h.extends {
		for _, o := range out {
			if o.id == e.id && reflect.DeepEqual(o.show, e.show) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// requisiteKeywords are Salt's STATE_REQUISITE_KEYWORDS: an extension's
// argument adds to these, and replaces any other.
var requisiteKeywords = map[string]bool{
	"onchanges": true, "onchanges_any": true, "onfail": true, "onfail_any": true, "onfail_all": true,
	"onfail_stop": true, "prereq": true, "prerequired": true, "watch": true, "watch_any": true,
	"require": true, "require_any": true, "listen": true,
}

// apply applies the extend and exclude declarations as a run does
// (Salt's call_high: reconcile_extend, verify_high, then apply_exclude),
// once.
func (h *High) apply() {
	if h.applied {
		return
	}
	h.applied = true
	hadErrors := len(h.Errors) > 0
	extended := h.reconcileExtend()
	if extended && !hadErrors && len(h.Errors) == 0 {
		h.Errors = append(h.Errors, h.verify()...)
	}
	h.applyExcludes()
}

// reconcileExtend is Salt's reconcile_extend: each extension merges into
// the id it names (or the one declaration of its first module whose
// argument is that name): a function replaces the function, an argument
// replaces the one with the same first key but a requisite's list, which
// it extends; a `name` replaces `names`; anything else is appended, and a
// module the id does not declare is added (run after the others, as Salt
// gives it no order). It says whether anything was extended.
func (h *High) reconcileExtend() bool {
	if len(h.extends) == 0 {
		return false
	}
	var slsExcludes []string
	for _, x := range h.excludes {
		switch x := x.(type) {
		case string:
			slsExcludes = append(slsExcludes, x)
		case map[string]any:
			if s, ok := x["sls"].(string); ok && s != "" {
				slsExcludes = append(slsExcludes, s)
			}
		}
	}
	changed := false
	for _, e := range h.uniqueExtends() {
		if len(e.decls) == 0 {
			continue
		}
		stateType := e.decls[0].Module
		target := h.byID[e.id]
		if target == nil || target.decl(stateType) == nil {
			ids := h.findName(e.id, stateType)
			if len(ids) != 1 {
				h.Errors = append(h.Errors, fmt.Sprintf("Cannot extend ID '%s' in '%s:%s'. It is not part of the high state.\nThis is likely due to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an ID of '%s' is available\nin environment '%s' and to SLS '%s'", e.id, e.env, e.sls, e.id, e.env, e.sls))
				continue
			}
			target = ids[0]
		}
		excluded := false
		for _, x := range slsExcludes {
			excluded = excluded || x == e.sls
		}
		if excluded {
			continue
		}
		changed = true
		for _, d := range e.decls {
			into := target.decl(d.Module)
			if into == nil {
				nd := &Decl{Module: d.Module, Fun: d.Fun, Args: append([]Arg{}, d.Args...)}
				target.Decls = append(target.Decls, nd)
				continue
			}
			if d.Fun != "" {
				into.Fun = d.Fun
			}
			into.Args = mergeArgs(into.Args, d.Args)
		}
	}
	return changed
}

// mergeArgs merges an extension's arguments into a declaration's, as
// reconcile_extend does item by item.
func mergeArgs(into, ext []Arg) []Arg {
	groups := argGroups(into)
	for _, eg := range argGroups(ext) {
		first := eg[0]
		update := false
		if first.Key != "" {
			for i, g := range groups {
				if g[0].Key == "" {
					continue
				}
				if g[0].Key == first.Key {
					if requisiteKeywords[first.Key] {
						ng := append([]Arg{}, g...)
						ng[0].Value = append(append([]any{}, asList(g[0].Value)...), asList(first.Value)...)
						groups[i] = ng
					} else {
						groups[i] = eg
					}
					update = true
				}
				if first.Key == "name" && g[0].Key == "names" {
					groups[i] = eg
				}
			}
		}
		if !update {
			groups = append(groups, eg)
		}
	}
	var out []Arg
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// decl is the id's declaration of module, or nil.
func (id *ID) decl(module string) *Decl {
	for _, d := range id.Decls {
		if d.Module == module {
			return d
		}
	}
	return nil
}

// findName is Salt's find_name (not strict): the id named, or the ids
// declaring module with an argument whose value is name.
func (h *High) findName(name, module string) []*ID {
	if id := h.byID[name]; id != nil {
		return []*ID{id}
	}
	var out []*ID
	for _, id := range h.dict {
		d := id.decl(module)
		if d == nil {
			continue
		}
		for _, g := range argGroups(d.Args) {
			if len(g) == 1 && g[0].Key != "" && g[0].Value == any(name) {
				out = append(out, id)
			}
		}
	}
	return out
}

// applyExcludes is Salt's apply_exclude: it drops the ids excluded, and
// every id of an SLS excluded (a glob).
func (h *High) applyExcludes() {
	if len(h.excludes) == 0 {
		return
	}
	exSLS := map[string]bool{}
	drop := map[string]bool{}
	for _, x := range h.excludes {
		switch x := x.(type) {
		case string:
			exSLS[x] = true
		case map[string]any:
			if len(x) != 1 {
				continue
			}
			if s, ok := x["sls"]; ok {
				exSLS[scalarStr(s)] = true
			}
			if s, ok := x["id"]; ok {
				drop[scalarStr(s)] = true
			}
		}
	}
	patterns := sortedKeys(exSLS)
	for _, id := range h.IDs {
		for _, p := range patterns {
			if id.SLS != "" && fnmatch(p, id.SLS) {
				drop[id.ID] = true
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
	dict := h.dict[:0]
	for _, id := range h.dict {
		if !drop[id.ID] {
			dict = append(dict, id)
		}
	}
	h.dict = dict
}

// fnmatch is Python's fnmatch on an SLS name (* matches any text).
func fnmatch(pattern, s string) bool {
	if pattern == s {
		return true
	}
	ok, _ := path.Match(strings.ReplaceAll(pattern, "/", "\x00"), strings.ReplaceAll(s, "/", "\x00"))
	return ok
}
