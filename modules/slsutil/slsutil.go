// Package slsutil is Salt's slsutil execution module as templates use
// it: update, merge, merge_all (Salt's dictupdate strategies), boolstr,
// and renderer, which renders a string or a salt:// file through a
// renderer pipe (jinja|yaml) with the agent's grains and pillar.
package slsutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/internal/saltyaml"
	"github.com/brinehq/brine/internal/serializers"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the slsutil functions.
func Module(env *modules.Env) []function.Func {
	strategy := []function.Param{
		{Name: "strategy", Kind: function.String, Default: "smart"},
		{Name: "renderer", Kind: function.String, Default: "yaml"},
		{Name: "merge_lists", Kind: function.Bool, Default: false},
	}
	renderer := state.NewRenderer()
	return []function.Func{
		{
			Name: "slsutil.update", ReadOnly: true,
			Doc: "Update dest with upd, recursively (recursive_update) and extending lists (merge_lists); dest itself is changed and returned.",
			Params: []function.Param{
				{Name: "dest", Kind: function.Any, Required: true}, {Name: "upd", Kind: function.Any, Required: true},
				{Name: "recursive_update", Kind: function.Bool, Default: true}, {Name: "merge_lists", Kind: function.Bool, Default: false},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				d, ok1 := in.Value("dest").(map[string]any)
				u, ok2 := in.Value("upd").(map[string]any)
				if !ok1 || !ok2 {
					return nil, jinja.PyError("Cannot update using non-dict types in dictupdate.update()")
				}
				out, order := jinja.DictUpdateOrdered(d, in.Order("dest"), u, in.Order("upd"), in.Bool("recursive_update"), in.Bool("merge_lists"))
				return in.Ordered(out, order), nil
			},
		},
		{
			Name: "slsutil.merge", ReadOnly: true,
			Doc: "obj_b merged over a copy of obj_a with a pillar merging strategy (smart, recurse, overwrite, list, aggregate, none).",
			Params: append([]function.Param{{Name: "obj_a", Kind: function.Any, Required: true}, {Name: "obj_b", Kind: function.Any, Required: true}},
				strategy...),
			Run: func(_ context.Context, in *function.Input) (any, error) {
				out, order, err := Merge(in.Value("obj_a"), in.Order("obj_a"), in.Value("obj_b"), in.Order("obj_b"),
					in.String("strategy"), in.String("renderer"), in.Bool("merge_lists"))
				return in.Ordered(out, order), err
			},
		},
		{
			Name: "slsutil.merge_all", ReadOnly: true,
			Doc:    "The dictionaries of lst merged in turn, each over the ones before, with a merging strategy.",
			Params: append([]function.Param{{Name: "lst", Kind: function.List, Required: true}}, strategy...),
			Run: func(_ context.Context, in *function.Input) (any, error) {
				var ret any = map[string]any{}
				var order *keyorder.Order
				lst := in.Order("lst")
				for i, obj := range in.List("lst") {
					var err error
					if ret, order, err = Merge(ret, order, obj, lst.Item(i), in.String("strategy"), in.String("renderer"), in.Bool("merge_lists")); err != nil {
						return nil, err
					}
				}
				return in.Ordered(ret, order), nil
			},
		},
		{
			Name: "slsutil.boolstr", ReadOnly: true, Doc: "true (or the given text) when value is truthy, else false.",
			Params: []function.Param{{Name: "value", Kind: function.Any, Required: true},
				{Name: "true", Kind: function.String, Default: "true"}, {Name: "false", Kind: function.String, Default: "false"}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if jinja.Truthy(in.Value("value")) {
					return in.String("true"), nil
				}
				return in.String("false"), nil
			},
		},
		{
			Name: "slsutil.serialize", ReadOnly: true, VarKwargs: true,
			Doc: "obj as text of serializer (yaml: block style, default_flow_style=False; json), as Salt's serializers " +
				"write it; the other keywords are the serializer's options.",
			Params: []function.Param{{Name: "serializer", Kind: function.String, Required: true},
				{Name: "obj", Kind: function.Any, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				ser, err := serializer(in.String("serializer"))
				if err != nil {
					return nil, err
				}
				obj := in.Value("obj")
				if in.String("serializer") == "json" {
					// json.dumps writes a dict in its insertion order:
					// a template's, as written (yaml's sorts its keys)
					obj = in.Ordered(obj, in.Order("obj"))
				}
				return ser.Dump(obj, options(in.ExtraKwargs))
			},
		},
		{
			Name: "slsutil.deserialize", ReadOnly: true, VarKwargs: true,
			Doc: "The data stream_or_string holds as text of serializer (yaml, json).",
			Params: []function.Param{{Name: "serializer", Kind: function.String, Required: true},
				{Name: "stream_or_string", Kind: function.String, Required: true}},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				ser, err := serializer(in.String("serializer"))
				if err != nil {
					return nil, err
				}
				if in.FromTemplate() {
					// a template iterates the mappings in the order
					// written, as Salt's deserializers' dicts keep it
					return ser.LoadOrdered([]byte(in.String("stream_or_string")))
				}
				return ser.Load([]byte(in.String("stream_or_string")))
			},
		},
		{
			Name: "slsutil.renderer", ReadOnly: true, VarKwargs: true,
			Doc: "Render string, or the salt:// file at path, through default_renderer (jinja|yaml; a #! line of " +
				"the text chooses its own) with this agent's grains and pillar: text, or data after yaml/json.",
			Params: []function.Param{{Name: "path", Kind: function.String}, {Name: "string", Kind: function.String},
				{Name: "default_renderer", Kind: function.String, Default: "jinja|yaml"}},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return render(ctx, env, renderer, in)
			},
		},
	}
}

// Merge is Salt's dictupdate.merge with its strategies. aOrder and
// bOrder are the key orders of a and b (nil for a Go map's), and the
// order returned the result's, as Salt's dicts have it.
func Merge(a any, aOrder *keyorder.Order, b any, bOrder *keyorder.Order, strategy, renderer string, mergeLists bool) (any, *keyorder.Order, error) {
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return nil, nil, jinja.PyError("Cannot update using non-dict types in dictupdate.update()")
	}
	if strategy == "smart" {
		strategy = "recurse"
		parts := strings.Split(renderer, "|")
		if parts[len(parts)-1] == "yamlex" || strings.HasPrefix(renderer, "yamlex_") {
			strategy = "aggregate"
		}
	}
	switch strategy {
	case "list":
		ret := map[string]any{}
		order := &keyorder.Order{Keys: aOrder.KeysOf(am), Sub: map[string]*keyorder.Order{}}
		for _, k := range order.Keys {
			if w, ok := bm[k]; ok {
				ret[k] = []any{am[k], w}
				order.Sub[k] = &keyorder.Order{Items: []*keyorder.Order{aOrder.At(k), bOrder.At(k)}}
			} else {
				ret[k] = am[k]
				if o := aOrder.At(k); o != nil {
					order.Sub[k] = o
				}
			}
		}
		return ret, order, nil
	case "overwrite":
		// obj_a[k] = obj_b[k] for the keys both have, then recurse
		overwritten := &keyorder.Order{Keys: aOrder.KeysOf(am), Sub: map[string]*keyorder.Order{}}
		for _, k := range overwritten.Keys {
			o := aOrder.At(k)
			if v, ok := bm[k]; ok {
				am[k], o = v, bOrder.At(k)
			}
			if o != nil {
				overwritten.Sub[k] = o
			}
		}
		aOrder = overwritten
	case "aggregate":
		// yamlex's aggregation is not in brine: merging recursively is
		// what it does for data without !aggregate tags.
	}
	out, order := jinja.DictUpdateOrdered(jinja.DeepCopy(am).(map[string]any), aOrder, bm, bOrder, true, mergeLists)
	return out, order, nil
}

// render is slsutil.renderer.
func render(ctx context.Context, env *modules.Env, r *state.Renderer, in *function.Input) (any, error) {
	saltenv := "base"
	if s, ok := in.ExtraKwargs["saltenv"].(string); ok && s != "" {
		saltenv = s
	}
	var text []byte
	name := "<string>"
	switch {
	case in.String("path") != "":
		if env.Files == nil {
			return nil, errors.New("slsutil.renderer reads salt:// files, and this agent has no master")
		}
		name = strings.TrimPrefix(in.String("path"), "salt://")
		p, err := env.Files.Cache(ctx, name, saltenv)
		if err != nil {
			return nil, err
		}
		if text, err = os.ReadFile(p); err != nil {
			return nil, err
		}
	case in.Has("string") && in.Value("string") != nil:
		text = []byte(in.String("string"))
	default:
		return nil, jinja.PyError("Must pass either path or string")
	}
	pipe := strings.Split(in.String("default_renderer"), "|")
	if bytes.HasPrefix(text, []byte("#!")) {
		line, rest, _ := bytes.Cut(text, []byte("\n"))
		pipe = strings.Split(strings.TrimSpace(string(line[2:])), "|")
		text = rest
	}
	vars := map[string]any{"saltenv": saltenv}
	if env.Grains != nil {
		vars["grains"] = env.Grains()
	}
	if p, err := modules.PillarOf(ctx, env); err == nil {
		vars["pillar"] = p
	}
	if env.Opts != nil {
		vars["opts"] = env.Opts()
	}
	if env.Functions != nil {
		vars["salt"] = jinja.Salt(env.Functions.Names(), func(fn string, args []any, kwargs map[string]any) (any, error) {
			return env.Functions.Call(ctx, fn, args, kwargs, nil)
		})
	}
	for k, v := range in.ExtraKwargs {
		if _, ok := vars[k]; !ok {
			vars[k] = v
		}
	}
	var data any = text
	for _, step := range pipe {
		step = strings.TrimSpace(step)
		b, isText := data.([]byte)
		switch step {
		case "jinja":
			if !isText {
				return nil, fmt.Errorf("the jinja renderer was given data, not text")
			}
			out, err := r.Jinja(ctx, filesSource{env.Files}, saltenv, name, b, vars)
			if err != nil {
				return nil, err
			}
			data = out
		case "yaml", "json":
			if !isText {
				return nil, fmt.Errorf("the %s renderer was given data, not text", step)
			}
			// Salt's yaml renderer is its YAML loader, its json one
			// json.loads: the mappings come in the order written
			ser, _ := serializers.Get(step)
			v, err := ser.LoadOrdered(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			data = v
		case "text":
		default:
			return nil, fmt.Errorf("renderer %q is not available (brine renders jinja, yaml, json and text)", step)
		}
	}
	if b, ok := data.([]byte); ok {
		return string(b), nil
	}
	// a template iterates the mappings in the order rendered, as
	// Salt's dicts keep it; any other caller gets Go maps
	if in.FromTemplate() {
		return data, nil
	}
	return saltyaml.Plain(data), nil
}

// filesSource reads what a rendered template imports from the master.
type filesSource struct{ files modules.Files }

func (s filesSource) Read(ctx context.Context, saltenv, name string) ([]byte, error) {
	if s.files == nil {
		return nil, fmt.Errorf("salt://%s: %w (this agent has no master)", name, state.ErrNotFound)
	}
	p, err := s.files.Cache(ctx, name, saltenv)
	if errors.Is(err, modules.ErrNoFile) {
		return nil, fmt.Errorf("salt://%s: %w", name, state.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (s filesSource) Envs(ctx context.Context) ([]string, error) {
	if s.files == nil {
		return nil, errors.New("this agent has no master")
	}
	return s.files.Envs(ctx)
}

// serializer is Salt's serializer of that name, or its error.
func serializer(name string) (serializers.Serializer, error) {
	ser, ok := serializers.Get(name)
	if !ok {
		return ser, fmt.Errorf("serializer '%s' is not available (brine has yaml and json)", name)
	}
	return ser, nil
}

// options are the serializer's keywords: Salt's clean_kwargs drops the
// __pub_* ones a job adds.
func options(kw map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range kw {
		if !strings.HasPrefix(k, "__") {
			out[k] = v
		}
	}
	return out
}
