package function

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/keyorder"
)

// Kind is the type a parameter accepts. Values arrive from YAML, JSON or a
// command line, so conversions that cannot lose meaning are made (a YAML
// `ttl: "300"` is an Int, a `name: 1234` is a String); anything else is an
// ErrArgumentType naming what was expected.
type Kind int

// Parameter kinds.
const (
	Any    Kind = iota + 1 // any value
	String                 // string; numbers are formatted
	Int                    // int64; integral floats and numeric strings convert
	Number                 // float64 or int64; numeric strings convert
	Bool                   // bool; "true"/"false" strings convert
	List                   // []any
	Map                    // map[string]any
)

var kindNames = [...]string{Any: "any", String: "string", Int: "integer", Number: "number", Bool: "boolean", List: "list", Map: "mapping"}

// String names the kind as argument errors show it.
func (k Kind) String() string {
	if k >= Any && k <= Map {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func (k Kind) convert(v any) (any, error) {
	bad := func() (any, error) {
		return nil, fmt.Errorf("%w: want %s, got %s", ErrArgumentType, k, describe(v))
	}
	switch k {
	case Any:
		return v, nil
	case String:
		switch t := v.(type) {
		case string:
			return t, nil
		case int64:
			return strconv.FormatInt(t, 10), nil
		case float64:
			return strconv.FormatFloat(t, 'g', -1, 64), nil
		}
	case Int:
		switch t := v.(type) {
		case int64:
			return t, nil
		case float64:
			if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
				return int64(t), nil
			}
		case string:
			if i, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64); err == nil {
				return i, nil
			}
		}
	case Number:
		switch t := v.(type) {
		case int64, float64:
			return t, nil
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
				return f, nil
			}
		}
	case Bool:
		switch t := v.(type) {
		case bool:
			return t, nil
		case string:
			if b, err := strconv.ParseBool(t); err == nil {
				return b, nil
			}
		}
	case List:
		if t, ok := v.([]any); ok {
			return t, nil
		}
	case Map:
		if t, ok := v.(map[string]any); ok {
			return t, nil
		}
	}
	return bad()
}

func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		return fmt.Sprintf("string %q", t)
	case int64:
		return fmt.Sprintf("integer %d", t)
	case float64:
		return fmt.Sprintf("number %g", t)
	case bool:
		return fmt.Sprintf("boolean %t", t)
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// normalize brings decoded values to the few types handlers see: int64,
// float64, string, bool, nil, []any and map[string]any. An ordered
// mapping (yaml.MapSlice, a template's dict) becomes a map; its order is
// the Input's (Input.Order).
func normalize(v any) any {
	switch t := v.(type) {
	case int:
		return int64(t)
	case int8:
		return int64(t)
	case int16:
		return int64(t)
	case int32:
		return int64(t)
	case uint:
		return uintValue(uint64(t))
	case uint8:
		return int64(t)
	case uint16:
		return int64(t)
	case uint32:
		return int64(t)
	case uint64:
		return uintValue(t)
	case float32:
		return float64(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalize(x)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = normalize(x)
		}
		return out
	case yaml.MapSlice:
		out := make(map[string]any, len(t))
		for _, it := range t {
			out[fmt.Sprint(it.Key)] = normalize(it.Value)
		}
		return out
	}
	return v
}

// hasOrder tells whether v holds an ordered mapping (yaml.MapSlice).
func hasOrder(v any) bool {
	switch t := v.(type) {
	case yaml.MapSlice:
		return true
	case []any:
		for _, x := range t {
			if hasOrder(x) {
				return true
			}
		}
	}
	return false
}

func uintValue(u uint64) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

// Input is a call's checked arguments. Getters return the zero value for an
// absent optional argument; the kinds were checked when the call was bound.
type Input struct {
	// Func is the name the function was called by.
	Func string
	// Extra holds positional arguments beyond the parameters (VarArgs).
	Extra []any
	// ExtraKwargs holds keywords that are not parameters (VarKwargs).
	ExtraKwargs map[string]any

	args map[string]any
	fire FireFunc
	// ordered holds the arguments given as ordered mappings (or lists
	// of them), as given: a template's dicts, whose order Python keeps.
	ordered map[string]any
	// template is set when a template made the call (TemplateCall).
	template bool
}

// TemplateCall is the keyword jinja.Salt adds to every call a template
// makes; bind takes it off, so that no function sees it as an argument.
// It is how a function that reads a mapping itself (a formula's
// defaults.yaml, a rendered map file) knows its caller iterates what it
// returns as Python's dicts, in insertion order, when the arguments
// carry no ordered mapping to tell it (defaults.get('x:y') takes text).
const TemplateCall = "__brine_template__"

// FromTemplate tells whether a template made the call (TemplateCall): a
// function that reads YAML or JSON itself then returns its mappings as
// yaml.MapSlices in the order they were written, which the template
// iterates as Salt's dicts; any other caller gets Go maps.
func (in *Input) FromTemplate() bool { return in.template }

// Has reports whether the argument was given or has a default.
func (in *Input) Has(name string) bool { _, ok := in.args[name]; return ok }

// Value returns an argument as bound.
func (in *Input) Value(name string) any { return in.args[name] }

// String returns a String argument.
func (in *Input) String(name string) string { s, _ := in.args[name].(string); return s }

// Int returns an Int argument.
func (in *Input) Int(name string) int64 { i, _ := in.args[name].(int64); return i }

// Float returns a Number argument as float64.
func (in *Input) Float(name string) float64 {
	switch t := in.args[name].(type) {
	case int64:
		return float64(t)
	case float64:
		return t
	}
	return 0
}

// Bool returns a Bool argument.
func (in *Input) Bool(name string) bool { b, _ := in.args[name].(bool); return b }

// List returns a List argument.
func (in *Input) List(name string) []any { l, _ := in.args[name].([]any); return l }

// Map returns a Map argument.
func (in *Input) Map(name string) map[string]any { m, _ := in.args[name].(map[string]any); return m }

// Order is the key order of an argument given as an ordered mapping (a
// template's dict, yaml.MapSlice) or a list holding them; nil when it
// was given as a Go map (its keys read sorted) or holds no mapping.
func (in *Input) Order(name string) *keyorder.Order { return keyorder.Of(in.ordered[name]) }

// Ordered is what a function returns, v, for its caller: when the
// caller gave ordered mappings (a template, which iterates what it gets
// back as Python's dicts keep their insertion order), v with its maps
// yaml.MapSlices in the order o (keyorder.MapSlices); else v itself, so
// that a caller that gave Go maps gets Go maps.
func (in *Input) Ordered(v any, o *keyorder.Order) any {
	if len(in.ordered) == 0 {
		return v
	}
	return keyorder.MapSlices(v, o)
}

// Fire fires an event caused by this call: the caller (the reactor) links it
// to the event that triggered the call, which is what loop protection follows.
func (in *Input) Fire(ctx context.Context, tag string, data map[string]any) error {
	if in.fire != nil {
		return in.fire(ctx, tag, data)
	}
	if fire, ok := ctx.Value(fireKey{}).(FireFunc); ok {
		return fire(ctx, tag, data)
	}
	return fmt.Errorf("%s: %w", in.Func, ErrNoEvents)
}

type fireKey struct{}

// WithFire returns a context whose calls fire events with fire when their
// caller gave none: an orchestration's steps call functions through the
// state system, and their events belong to the orchestration's job.
func WithFire(ctx context.Context, fire FireFunc) context.Context {
	return context.WithValue(ctx, fireKey{}, fire)
}
