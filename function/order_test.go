package function

import (
	"context"
	"reflect"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestOrdered: a caller that gives ordered mappings (a template's dicts,
// as yaml.MapSlice) gets them back in their order through a function
// that returns them; the function itself sees Go maps; a caller that
// gives Go maps gets Go maps.
func TestOrdered(t *testing.T) {
	r := New()
	var seen any
	if err := r.Register(Func{Name: "test.echo", Params: []Param{{Name: "v", Kind: Any, Required: true}, {Name: "m", Kind: Map}},
		Run: func(_ context.Context, in *Input) (any, error) {
			seen = in.Value("v")
			return in.Ordered(in.Value("v"), in.Order("v")), nil
		}}); err != nil {
		t.Fatal(err)
	}
	ordered := yaml.MapSlice{{Key: "z", Value: 1}, {Key: "a", Value: []any{yaml.MapSlice{{Key: "y", Value: 1}, {Key: "b", Value: 2}}}}}
	plain := map[string]any{"z": int64(1), "a": []any{map[string]any{"y": int64(1), "b": int64(2)}}}
	tests := []struct {
		name         string
		args         []any
		kwargs       map[string]any
		want         any
		wantMapSlice bool
	}{
		{"ordered in, ordered out", []any{ordered}, nil, ordered, true},
		{"by keyword", nil, map[string]any{"v": ordered}, ordered, true},
		{"another argument ordered: v's maps sorted", []any{plain, yaml.MapSlice{{Key: "k", Value: 1}}}, nil,
			yaml.MapSlice{{Key: "a", Value: []any{yaml.MapSlice{{Key: "b", Value: int64(2)}, {Key: "y", Value: int64(1)}}}}, {Key: "z", Value: int64(1)}}, true},
		{"Go maps in, Go maps out", []any{plain}, nil, plain, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Call(context.Background(), "test.echo", tt.args, tt.kwargs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, isMap := seen.(map[string]any); !isMap {
				t.Errorf("the function saw %T, want a Go map", seen)
			}
			if _, isSlice := got.(yaml.MapSlice); isSlice != tt.wantMapSlice {
				t.Errorf("got %T", got)
			}
			g, _ := yaml.MarshalWithOptions(got, yaml.JSON())
			w, _ := yaml.MarshalWithOptions(tt.want, yaml.JSON())
			if string(g) != string(w) {
				t.Errorf("got %s, want %s", g, w)
			}
		})
	}
	// a Map parameter given an ordered mapping is a Go map
	if err := r.Check("test.echo", []any{1, ordered}, nil); err != nil {
		t.Errorf("an ordered mapping for a Map parameter: %v", err)
	}
	if !reflect.DeepEqual(normalize(ordered), plain) {
		t.Errorf("normalize(%v) = %#v, want %#v", ordered, normalize(ordered), plain)
	}
}

// TestFromTemplate: the keyword jinja.Salt adds (TemplateCall) tells the
// function a template called it and is no argument, not even to a
// function that takes any keyword.
func TestFromTemplate(t *testing.T) {
	r := New()
	var in *Input
	if err := r.Register(Func{Name: "test.kw", VarKwargs: true, Params: []Param{{Name: "k", Kind: String}},
		Run: func(_ context.Context, i *Input) (any, error) { in = i; return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		kwargs   map[string]any
		template bool
	}{
		{"a template's call", map[string]any{"k": "v", "x": 1, TemplateCall: true}, true},
		{"another caller's", map[string]any{"k": "v", "x": 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.Call(context.Background(), "test.kw", nil, tc.kwargs, nil); err != nil {
				t.Fatal(err)
			}
			if in.FromTemplate() != tc.template {
				t.Errorf("FromTemplate() = %v, want %v", in.FromTemplate(), tc.template)
			}
			if want := map[string]any{"x": int64(1)}; !reflect.DeepEqual(in.ExtraKwargs, want) || in.String("k") != "v" {
				t.Errorf("k = %q, extra keywords %v; want v, %v", in.String("k"), in.ExtraKwargs, want)
			}
		})
	}
	// a function without keywords takes a template's call
	if err := r.Register(Func{Name: "test.none", Run: func(context.Context, *Input) (any, error) { return nil, nil }}); err != nil {
		t.Fatal(err)
	}
	if err := r.Check("test.none", nil, map[string]any{TemplateCall: true}); err != nil {
		t.Errorf("test.none from a template: %v", err)
	}
}
