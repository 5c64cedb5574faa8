package state

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// Chunk is one state to run, Salt's low chunk: one function of one id for
// one name.
type Chunk struct {
	State, Fun, Name string
	ID, SLS, Env     string
	// Args are the arguments as declared, requisites included, name
	// excluded; ArgOrder their keys in the order written.
	Args     map[string]any
	ArgOrder []string
	// Order is where the chunk runs when requisites do not decide.
	Order float64
	// Tag is Salt's key of the chunk's result:
	// {state}_|-{id}_|-{name}_|-{fun}.
	Tag string

	seq       int   // declaration order, for ties
	reqs      []req // resolved requisites
	nameOrder int   // its place in `names` (1 on), 0 without
	rawName   any   // a name of `names` that is not text, as written
}

// Low is the chunk as Salt's low data (state.show_lowstate).
func (c *Chunk) Low() map[string]any {
	m := make(map[string]any, len(c.Args)+7)
	for k, v := range c.Args {
		m[k] = v
	}
	m["state"], m["fun"], m["name"] = c.State, c.Fun, c.Name
	// An argument named __id__, __sls__ or __env__ is the chunk's, as in
	// Salt's compile_high_data, which sets the id's before the arguments
	// (the php formula's pkgrepo.managed writes - __env__: [{LC_ALL: …}]).
	for k, v := range map[string]string{"__id__": c.ID, "__sls__": c.SLS, "__env__": c.Env} {
		if _, ok := c.Args[k]; !ok {
			m[k] = v
		}
	}
	if c.rawName != nil {
		m["name"] = c.rawName
	}
	m["order"] = orderValue(c.Order)
	return m
}

func orderValue(f float64) any {
	if f == math.Trunc(f) {
		return int64(f)
	}
	return f
}

// Tag builds Salt's result key.
func Tag(state, id, name, fun string) string {
	return state + "_|-" + id + "_|-" + name + "_|-" + fun
}

// Chunks turns high data into the low chunks a run runs, as Salt's
// call_high does: the extend declarations merged and the excluded ids
// dropped (once), then Salt's compile_high_data (one chunk per function
// and name, in Salt's order: `order`, then state, name and function);
// requisite_in declarations become requisites of the states they name.
// Errors (an extension of an id not in the high data, a malformed
// requisite) are added to h.Errors.
func (h *High) Chunks() []*Chunk {
	h.apply()
	chunks := h.compile()
	if len(h.Errors) > 0 {
		// Salt's call_high stops at the errors of extend and
		// verify_high, before requisite_in.
		return chunks
	}
	h.Errors = append(h.Errors, requisiteIns(chunks)...)
	h.Errors = append(h.Errors, applyUse(chunks)...)
	return chunks
}

// LowChunks is the low chunks as Salt's state.show_low_sls gives them:
// compile_high_data of the high data as rendered, extend and exclude
// declarations not applied and requisite_in left on the chunk declaring
// it.
func (h *High) LowChunks() []*Chunk {
	return h.compile()
}

// compile is Salt's compile_high_data: a chunk per function of each
// declaration and per name of its `names` (the same name once; a mapping
// {name: [{arg: value}]} adds arguments to its chunk), each argument
// mapping's keys in order (a later one wins), `state` not passed, a
// `name` that is not text giving the id; then order_chunks.
func (h *High) compile() []*Chunk {
	var chunks []*Chunk
	seq := 0
	ids := h.dict
	if ids == nil {
		ids = h.IDs
	}
	// In the order of Salt's high data dictionary, which order_chunks'
	// cap and its ties depend on.
	for _, id := range ids {
		for _, d := range id.Decls {
			if d.Fun == "" {
				continue
			}
			args := map[string]any{}
			var names []any
			for _, a := range d.Args {
				switch a.Key {
				case "":
				case "names":
					for _, n := range asList(a.Value) {
						dup := false
						for _, o := range names {
							dup = dup || reflect.DeepEqual(o, n)
						}
						if !dup {
							names = append(names, n)
						}
					}
				case "state":
				case "name":
					if _, ok := a.Value.(string); !ok {
						args["name"] = id.ID
						continue
					}
					args["name"] = a.Value
				default:
					args[a.Key] = a.Value
				}
			}
			name := id.ID
			if n, ok := args["name"].(string); ok {
				name = n
			}
			delete(args, "name")
			if names == nil {
				chunks = append(chunks, newChunk(id, d, name, args, seq))
				seq++
				continue
			}
			for i, n := range names {
				cargs := make(map[string]any, len(args)+1)
				for k, v := range args {
					cargs[k] = v
				}
				nm := n
				if m, ok := n.(map[string]any); ok && len(m) >= 1 {
					// - names: [{name: [{arg: value}]}]: per-name args.
					k := sortedKeys(m)[0]
					nm = k
					for _, a := range asList(m[k]) {
						if am, ok := a.(map[string]any); ok {
							for ak, av := range am {
								cargs[ak] = av
							}
						}
					}
				}
				c := newChunk(id, d, scalarStr(nm), cargs, seq)
				if _, ok := nm.(string); !ok {
					c.rawName = nm
				}
				c.nameOrder = i + 1
				chunks = append(chunks, c)
				seq++
			}
		}
	}
	orderChunks(chunks)
	return chunks
}

func newChunk(id *ID, d *Decl, name string, args map[string]any, seq int) *Chunk {
	order := make([]string, 0, len(d.Args))
	for _, a := range d.Args {
		if a.Key != "" {
			order = append(order, a.Key)
		}
	}
	env := id.Env
	if s, ok := args["__env__"].(string); ok {
		// Salt's state run takes the low chunk's __env__ as the saltenv
		// its functions see (State.call's inject_globals).
		env = s
	}
	return &Chunk{State: d.Module, Fun: d.Fun, Name: name, ID: id.ID, SLS: id.SLS, Env: env,
		Args: args, ArgOrder: order, Tag: Tag(d.Module, id.ID, name, d.Fun), seq: seq}
}

// scalarStr is str() of a scalar of SLS data (a name, a requisite's target,
// an onlyif function, a retry's until) as the state engine prints it. It
// is py.Str but for floats, which print in Go's shortest decimal without
// an exponent: 1.0 is "1" here where Python's str gives "1.0". Names and
// requisite targets built with it must match each other, so it is kept
// apart from py.Str rather than changing every compiled id.
func scalarStr(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		if v {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// orderChunks is Salt's order_chunks: a cap 100 above the largest
// whole-number order; chunks without an order (a declaration an extension
// added, state.single's) at the cap, `last` a million after it, `first` 0,
// negative orders counted back from `last`; a name's place in `names` adds
// a ten-thousandth to a chunk with an order; then sorted by order, and by
// state, name and function (as text) where orders are equal. Declarations rendered from SLS files
// have Salt's automatic order (state_auto_order: 10000 on, in render
// order).
func orderChunks(chunks []*Chunk) {
	limit := 1.0
	for _, c := range chunks {
		if f, ok := wholeNumber(c.Args["order"]); ok && f > limit-1 && f > 0 {
			limit = f + 100
		}
	}
	for _, c := range chunks {
		o, has := c.Args["order"]
		switch {
		case !has:
			// Salt's order_chunks gives it the cap and nothing more: its
			// place in `names` is not added, the names sort as text.
			c.Order = limit
			continue
		default:
			if f, ok := py.Number(o); ok {
				c.Order = f
			} else if o == "last" {
				c.Order = limit + 1000000
			} else if o == "first" {
				c.Order = 0
			} else {
				c.Order = limit
			}
		}
		if c.nameOrder > 0 {
			c.Order += float64(c.nameOrder) / 10000
		}
		if c.Order < 0 {
			c.Order = limit + 1000000 + c.Order
		}
	}
	sort.SliceStable(chunks, func(i, j int) bool {
		if chunks[i].Order != chunks[j].Order {
			return chunks[i].Order < chunks[j].Order
		}
		a, b := chunks[i].State+scalarStr(chunks[i].nameValue())+chunks[i].Fun, chunks[j].State+scalarStr(chunks[j].nameValue())+chunks[j].Fun
		if a != b {
			return a < b
		}
		return chunks[i].seq < chunks[j].seq
	})
}

func (c *Chunk) nameValue() any {
	if c.rawName != nil {
		return c.rawName
	}
	return c.Name
}

// wholeNumber is an order Salt counts in its cap: an int (not a float).
func wholeNumber(v any) (float64, bool) {
	if _, isFloat := v.(float64); isFloat {
		return 0, false
	}
	return py.Number(v)
}

// req is one requisite of a chunk: its kind and what it names.
type req struct {
	kind   string // require, watch, onchanges, onfail, prereq, listen, use, prerequired; _any, onfail_all
	state  string // module, "sls" or "id"
	target string // id or name (a glob), or an SLS
}

func (r req) String() string { return r.state + ": " + r.target }

// reqList reads a requisite argument: a list of {module: id} (or plain
// ids, which Salt reads as {id: …}).
func reqList(v any) ([]req, error) {
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		list = []any{v}
	}
	var out []req
	for _, x := range list {
		switch x := x.(type) {
		case string:
			out = append(out, req{state: "id", target: x})
		case map[string]any:
			if len(x) != 1 {
				return nil, fmt.Errorf("requisite declaration %v must be a single key: value", x)
			}
			for k, t := range x {
				// Salt's trim_req: pkg.installed is pkg.
				out = append(out, req{state: strings.SplitN(k, ".", 2)[0], target: scalarStr(t)})
			}
		default:
			return nil, fmt.Errorf("requisite declaration %v is not {module: id}", x)
		}
	}
	return out, nil
}

// matches says whether chunk c is one a requisite names: by module and
// id or name (globs allowed), by SLS, or by id whatever the module.
func (r req) matches(c *Chunk) bool {
	switch r.state {
	case "sls":
		return globEq(r.target, c.SLS)
	case "id":
		return globEq(r.target, c.ID) || globEq(r.target, c.Name)
	}
	if r.state != c.State {
		return false
	}
	return globEq(r.target, c.ID) || globEq(r.target, c.Name)
}

// chunkIndex finds the chunks a requisite may name without matching it
// against every chunk: a run checks each chunk's requisites, and a
// highstate of n states each requiring another was n² matches (a
// thousand file states spent ~60 ms in them).
type chunkIndex struct {
	pos           map[*Chunk]int
	id, name, sls map[string][]*Chunk
}

func newChunkIndex(chunks []*Chunk) *chunkIndex {
	ix := &chunkIndex{pos: make(map[*Chunk]int, len(chunks)), id: map[string][]*Chunk{},
		name: map[string][]*Chunk{}, sls: map[string][]*Chunk{}}
	for i, c := range chunks {
		ix.pos[c] = i
		ix.id[c.ID] = append(ix.id[c.ID], c)
		if c.Name != c.ID {
			ix.name[c.Name] = append(ix.name[c.Name], c)
		}
		ix.sls[c.SLS] = append(ix.sls[c.SLS], c)
	}
	return ix
}

// candidates returns, in run order, the chunks of all that r may match:
// all of them when its target is a pattern, else those whose id, name or
// SLS it is. r.matches still decides (the module, for one).
func (ix *chunkIndex) candidates(all []*Chunk, r req) []*Chunk {
	if strings.ContainsAny(r.target, `*?[\`) {
		return all
	}
	if r.state == "sls" {
		return ix.sls[r.target]
	}
	ids, names := ix.id[r.target], ix.name[r.target]
	if len(names) == 0 {
		return ids
	}
	if len(ids) == 0 {
		return names
	}
	// A chunk whose name is another's id: both lists, merged in order.
	out := make([]*Chunk, 0, len(ids)+len(names))
	i, j := 0, 0
	for i < len(ids) || j < len(names) {
		switch {
		case j == len(names) || i < len(ids) && ix.pos[ids[i]] < ix.pos[names[j]]:
			out = append(out, ids[i])
			i++
		case i == len(ids) || ix.pos[names[j]] < ix.pos[ids[i]]:
			out = append(out, names[j])
			j++
		default: // the same chunk
			out = append(out, ids[i])
			i, j = i+1, j+1
		}
	}
	return out
}

func globEq(pattern, s string) bool {
	if pattern == s {
		return true
	}
	if !strings.ContainsAny(pattern, "*?[") {
		return false
	}
	return fnmatch(pattern, s)
}

// requisiteIns resolves every chunk's requisites, its own first, then
// those the X_in of other states give it (Salt's requisite_in extends the
// states named, after their own). An X_in is a list or a single {module:
// id} mapping (anything else is ignored, as Salt ignores it); an item that
// is a bare id (or name) that no state has is ignored too, as in Salt,
// while a {module: id} naming nothing is an error.
func requisiteIns(chunks []*Chunk) []string {
	var errs []string
	for _, c := range chunks {
		for _, kind := range reqKinds {
			v, ok := c.Args[kind]
			if !ok {
				continue
			}
			// verify refuses a require, watch, prereq or onchanges that is
			// not a list; Salt iterates any other requisite as it is: a
			// string's characters and a mapping's keys are ids (each
			// naming, most likely, nothing: the state then fails with
			// Salt's "The following requisites were not found"), and a
			// use that is not a list is ignored.
			switch v.(type) {
			case string, map[string]any:
				if kind == "use" {
					continue
				}
				v = pyIter(v)
			}
			rs, err := reqList(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' needs to be formed as a list: %v", kind, c.ID, c.SLS, err))
				continue
			}
			for _, r := range rs {
				r.kind = kind
				c.reqs = append(c.reqs, r)
			}
		}
	}
	var byID map[string]*Chunk
	for _, c := range chunks {
		for _, kind := range inKinds {
			v, ok := c.Args[kind]
			if !ok || kind == "listen_in" {
				// listen_in is Salt's call_listen's, after the run.
				continue
			}
			var items []any
			switch v := v.(type) {
			case []any:
				items = v
			case map[string]any:
				for _, k := range sortedKeys(v) {
					items = append(items, map[string]any{k: v[k]})
				}
			default:
				continue
			}
			base := strings.TrimSuffix(kind, "_in")
			for _, item := range items {
				var r req
				switch item := item.(type) {
				case string:
					if byID == nil {
						byID = firstByID(chunks)
					}
					t := byID[item]
					if t == nil {
						for _, o := range chunks {
							if o.Name == item {
								t = o
							}
						}
					}
					if t == nil {
						continue
					}
					r = req{state: t.State, target: t.ID}
				case map[string]any:
					if len(item) != 1 {
						errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' is invalid: %s is not a single {module: id}", kind, c.ID, c.SLS, py.ReprValue(item)))
						continue
					}
					for k, t := range item {
						r = req{state: strings.SplitN(k, ".", 2)[0], target: scalarStr(t)}
					}
				default:
					continue
				}
				found := false
				for _, t := range inTargets(chunks, r) {
					if t == c {
						continue
					}
					found = true
					t.reqs = append(t.reqs, req{kind: base, state: c.State, target: c.ID})
				}
				// An sls requisite_in naming an SLS with no states in this
				// run extends nothing, which Salt does not report.
				if !found && r.state != "sls" {
					// once per missing id and SLS, as Salt's extend
					// mapping holds each id once
					msg := fmt.Sprintf("Cannot extend ID '%s' in '%s:%s'. It is not part of the high state.\nThis is likely due to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an ID of '%s' is available\nin environment '%s' and to SLS '%s'", r.target, c.Env, c.SLS, r.target, c.Env, c.SLS)
					if !slices.Contains(errs, msg) {
						errs = append(errs, msg)
					}
				}
			}
		}
	}
	// A prereq makes the state it names wait for the one declaring it.
	for _, c := range chunks {
		for _, r := range c.reqs {
			if r.kind != "prereq" {
				continue
			}
			for _, t := range chunks {
				if t != c && r.matches(t) {
					t.reqs = append(t.reqs, req{kind: "prerequired", state: c.State, target: c.ID})
				}
			}
		}
	}
	return errs
}

// inTargets are the chunks a requisite_in (watch_in, require_in…) of
// r extends, as Salt's requisite_in and reconcile_extend find them: the
// state of that module whose id is r's target; else the one whose name
// is, when exactly one id has it (ntp-formula's watch_in service: ntp
// extends the state with id ntp, not also ntpd, whose name is ntp); an
// sls or id requisite matches as r does.
func inTargets(chunks []*Chunk, r req) []*Chunk {
	var out []*Chunk
	if r.state == "sls" || r.state == "id" {
		for _, t := range chunks {
			if r.matches(t) {
				out = append(out, t)
			}
		}
		return out
	}
	for _, t := range chunks {
		if t.State == r.state && t.ID == r.target {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	id := ""
	for _, t := range chunks {
		if t.State != r.state || t.Name != r.target {
			continue
		}
		if id != "" && t.ID != id {
			return nil // several ids: Salt cannot extend
		}
		id = t.ID
	}
	for _, t := range chunks {
		if id != "" && t.State == r.state && t.ID == id {
			out = append(out, t)
		}
	}
	return out
}

// pyIter is what Python's `for x in v` goes through: a string's
// characters, a mapping's keys (sorted here), a list's items.
func pyIter(v any) []any {
	var out []any
	switch v := v.(type) {
	case string:
		for _, r := range v {
			out = append(out, string(r))
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			out = append(out, k)
		}
	case []any:
		out = v
	}
	return out
}

// firstByID is, for each id, the chunk of the module it declares first
// (Salt names a bare id in an X_in by that module).
func firstByID(chunks []*Chunk) map[string]*Chunk {
	out := map[string]*Chunk{}
	for _, c := range chunks {
		if o := out[c.ID]; o == nil || c.seq < o.seq {
			out[c.ID] = c
		}
	}
	return out
}

// useIgnored are the arguments `use` does not copy (Salt's requisite_in:
// its req_in_all, name and names); every other argument of the state used
// that the state using it does not set is copied, onlyif and unless
// included.
var useIgnored = map[string]bool{"require_in": true, "watch_in": true, "onfail_in": true, "onchanges_in": true,
	"use": true, "use_in": true, "prereq": true, "prereq_in": true, "require": true, "watch": true, "onfail": true,
	"onfail_stop": true, "onchanges": true, "name": true, "names": true}

// applyUse copies, for every `use` requisite, the arguments of the state
// named that the chunk does not set itself (not its name, nor
// requisites).
func applyUse(chunks []*Chunk) []string {
	var errs []string
	for _, c := range chunks {
		for _, r := range c.reqs {
			if r.kind != "use" {
				continue
			}
			found := false
			for _, t := range chunks {
				if t == c || !r.matches(t) {
					continue
				}
				found = true
				for k, v := range t.Args {
					if useIgnored[k] {
						continue
					}
					if _, ok := c.Args[k]; !ok {
						c.Args[k] = v
					}
				}
			}
			if !found {
				errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' uses '%s', which is not part of the high state", c.ID, c.SLS, r))
			}
		}
	}
	return errs
}

// DropRequisites makes the chunk run on its own (state.sls_id).
func (c *Chunk) DropRequisites() { c.reqs = nil }
