package file

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/serializers"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// serializeFunc declares file.serialize: a file holding a data set as
// YAML or JSON, written as Salt's serializers write it (so that a file
// Salt wrote is left alone), and, with merge_if_exists, merged into what
// the file holds.
func (s *states) serializeFunc() function.Func {
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return function.Func{
		Name: "file.serialize", Doc: "Keep a file holding dataset (or the pillar value dataset_pillar) serialized as YAML or JSON.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, anyp("dataset", nil),
			anyp("dataset_pillar", nil), anyp("user", nil), anyp("group", nil), anyp("mode", nil), anyp("backup", ""),
			boolp("makedirs", false), boolp("show_changes", true), boolp("create", true), boolp("merge_if_exists", false),
			anyp("encoding", nil), anyp("encoding_errors", "strict"), anyp("serializer", nil), anyp("serializer_opts", nil),
			anyp("deserializer_opts", nil)},
		VarKwargs: true,
		Run:       func(ctx context.Context, in *function.Input) (any, error) { return s.serializeState(ctx, in), nil },
	}
}

func (s *states) serializeState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.serialize")
	}
	if !in.Bool("create") {
		if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
			return state.Succeeded(name, fmt.Sprintf("File %s is not present and is not set for creation", name), nil)
		}
	}
	formatter := in.ExtraKwargs["formatter"]
	if py.Truth(in.Value("serializer")) && py.Truth(formatter) {
		return state.Failed(name, "Only one of serializer and formatter are allowed")
	}
	kind := "yaml"
	if v := in.Value("serializer"); py.Truth(v) {
		kind = strings.ToLower(py.Str(v))
	} else if py.Truth(formatter) {
		kind = strings.ToLower(py.Str(formatter))
	}
	dataset, pillarKey := in.Value("dataset"), in.Value("dataset_pillar")
	if py.Truth(dataset) && py.Truth(pillarKey) {
		return state.Failed(name, "Only one of 'dataset' and 'dataset_pillar' is permitted")
	}
	if py.Truth(pillarKey) {
		data, err := modules.PillarOf(ctx, s.env)
		if err != nil {
			return state.Failed(name, "Unable to read the pillar: %v", err)
		}
		dataset = pillarGet(data, py.Str(pillarKey))
	}
	if dataset == nil {
		return state.Failed(name, "Neither 'dataset' nor 'dataset_pillar' was defined")
	}
	ser, ok := serializers.Get(kind)
	if !ok {
		return state.Failed(name, "The %s serializer could not be found. It either does not exist or its prerequisites are not installed.", kind)
	}
	user, err := dictList(in.Value("serializer_opts"))
	if err != nil {
		return state.Failed(name, "serializer_opts: %v", err)
	}
	// Salt's file.serialize defaults, which serializer_opts update
	opts := map[string]any{}
	switch kind {
	case "json":
		opts = map[string]any{"indent": int64(2), "separators": []any{",", ": "}, "sort_keys": true}
	case "yaml":
		opts = map[string]any{"default_flow_style": false}
	}
	maps.Copy(opts, user)
	var existing map[string]any
	if in.Bool("merge_if_exists") {
		if raw, err := os.ReadFile(name); err == nil {
			old, err := ser.Load(raw)
			if err != nil {
				return state.Failed(name, "Failed to deserialize existing data: %v", err)
			}
			if old != nil {
				merged := mergeRecurse(old, dataset)
				if py.Equal(old, merged) {
					return state.Succeeded(name, fmt.Sprintf("The file %s is in the correct state", name), nil)
				}
				existing, _ = old.(map[string]any)
				if _, isMap := merged.(map[string]any); !isMap {
					existing = nil
				}
				dataset = merged
			}
		}
	}
	if enc := in.Value("encoding"); py.Truth(enc) {
		// Salt writes the file in that encoding, and lets YAML keep
		// characters past ASCII as they are.
		if e := strings.ToLower(strings.ReplaceAll(py.Str(enc), "-", "")); e != "utf8" {
			return state.Failed(name, "encoding %s is not supported: brine writes files as UTF-8", py.Str(enc))
		}
		if _, set := opts["allow_unicode"]; !set && kind == "yaml" {
			opts["allow_unicode"] = true
		}
	}
	text, err := ser.Dump(dataset, opts)
	if err != nil {
		return state.Failed(name, "Failed to serialize the dataset as %s: %v", kind, err)
	}
	text += "\n"
	r := s.managed(ctx, managedOpts{name: name, contents: text, user: in.Value("user"), group: in.Value("group"),
		mode: in.Value("mode"), backup: in.Value("backup"), makedirs: in.Bool("makedirs"), replace: true, create: true,
		showChanges: in.Bool("show_changes"), contentsNewline: true, delimiter: ":", allowEmpty: true, follow: true,
		verbatim: true})
	if test && (r.Result == nil || *r.Result) {
		// Salt words file.managed's test return its own way.
		if len(r.Changes) > 0 {
			r = state.Pending(name, fmt.Sprintf("Dataset will be serialized and stored into %s", name), r.Changes)
			if !in.Bool("show_changes") {
				r.Changes["diff"] = "<show_changes=False>"
			}
		} else {
			r = state.Succeeded(name, fmt.Sprintf("The file %s is in the correct state", name), nil)
		}
	}
	if existing != nil {
		if r.Changes == nil {
			r.Changes = map[string]any{}
		}
		r.Changes["diff"] = recursiveDiff(existing, dataset.(map[string]any))
	}
	return r
}

// pillarGet is pillar.get's key:sub:key lookup.
func pillarGet(data map[string]any, key string) any {
	var cur any = data
	for _, part := range strings.Split(key, ":") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

// dictList is Salt's repack_dictlist: a list of one-key mappings (or a
// mapping) as one mapping.
func dictList(v any) (map[string]any, error) {
	switch t := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return maps.Clone(t), nil
	case []any:
		out := map[string]any{}
		for _, item := range t {
			m, ok := item.(map[string]any)
			if !ok || len(m) != 1 {
				return nil, fmt.Errorf("each item must be a mapping of one key, not %s", py.Str(item))
			}
			for k, x := range m {
				out[k] = x
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("a list of mappings is expected, not %s", py.Str(v))
}

// mergeRecurse is Salt's dictupdate.merge_recurse: dataset merged into a
// copy of the file's data, mappings recursively, lists replaced.
func mergeRecurse(old, upd any) any {
	om, ok1 := old.(map[string]any)
	um, ok2 := upd.(map[string]any)
	if !ok1 || !ok2 {
		return upd
	}
	return jinja.DictUpdate(jinja.DeepCopy(om).(map[string]any), um, true, false)
}

// noValue is Salt's dictdiffer NONE_VALUE: the side of a key that is not
// there.
const noValue = "<_null_>"

// recursiveDiff is Salt's RecursiveDictDiffer(old, new).diffs: per key
// that differs, {old, new} (a key on one side only has "<_null_>" on the
// other), nested mappings compared key by key.
func recursiveDiff(old, new map[string]any) map[string]any {
	out := map[string]any{}
	for k, nv := range new {
		ov, ok := old[k]
		switch {
		case !ok:
			out[k] = map[string]any{"new": nv, "old": noValue}
		default:
			om, ok1 := ov.(map[string]any)
			nm, ok2 := nv.(map[string]any)
			if ok1 && ok2 {
				if d := recursiveDiff(om, nm); len(d) > 0 {
					out[k] = d
				}
			} else if !py.Equal(ov, nv) {
				out[k] = map[string]any{"new": nv, "old": ov}
			}
		}
	}
	for k, ov := range old {
		if _, ok := new[k]; !ok {
			out[k] = map[string]any{"new": noValue, "old": ov}
		}
	}
	return out
}
