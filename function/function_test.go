package function

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCallBinding(t *testing.T) {
	r := NewWithBuiltins()
	if err := r.Register(Func{
		Name: "ddns.add_host",
		Params: []Param{
			{Name: "zone", Kind: String, Required: true},
			{Name: "name", Kind: String, Required: true},
			{Name: "ttl", Kind: Int, Default: int64(300)},
			{Name: "ip", Kind: String},
			{Name: "replace", Kind: Bool, Default: true},
			{Name: "keyfile", Kind: String, Aliases: []string{"key_file"}},
		},
		Run: func(_ context.Context, in *Input) (any, error) {
			return map[string]any{"zone": in.String("zone"), "name": in.String("name"), "ttl": in.Int("ttl"),
				"replace": in.Bool("replace"), "keyfile": in.String("keyfile"), "has_ip": in.Has("ip")}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		fun     string
		args    []any
		kwargs  map[string]any
		want    any
		wantErr error
		errText string
	}{
		{name: "kwargs and defaults", fun: "ddns.add_host", kwargs: map[string]any{"zone": "example.com", "name": "web1"},
			want: map[string]any{"zone": "example.com", "name": "web1", "ttl": int64(300), "replace": true, "keyfile": "", "has_ip": false}},
		{name: "positional then keyword, conversions", fun: "ddns.add_host", args: []any{"example.com", 1234},
			kwargs: map[string]any{"ttl": "60", "replace": "false", "key_file": "/k"},
			want:   map[string]any{"zone": "example.com", "name": "1234", "ttl": int64(60), "replace": false, "keyfile": "/k", "has_ip": false}},
		{name: "uint64 from YAML", fun: "ddns.add_host", kwargs: map[string]any{"zone": "z", "name": "n", "ttl": uint64(5)},
			want: map[string]any{"zone": "z", "name": "n", "ttl": int64(5), "replace": true, "keyfile": "", "has_ip": false}},
		{name: "None is not given, as Salt's None defaults", fun: "ddns.add_host", args: []any{"z", "n", nil},
			kwargs: map[string]any{"ip": nil, "replace": nil, "keyfile": nil},
			want:   map[string]any{"zone": "z", "name": "n", "ttl": int64(300), "replace": true, "keyfile": "", "has_ip": false}},
		{name: "None for a required argument", fun: "ddns.add_host", kwargs: map[string]any{"zone": "z", "name": nil},
			wantErr: ErrArgumentType, errText: `argument "name": wrong argument type: want string, got null`},
		{name: "missing", fun: "ddns.add_host", kwargs: map[string]any{"zone": "example.com"},
			wantErr: ErrMissingArgument, errText: `ddns.add_host: argument "name": missing argument`},
		{name: "unknown keyword", fun: "ddns.add_host", kwargs: map[string]any{"zone": "z", "name": "n", "tll": 5},
			wantErr: ErrUnexpectedArgument, errText: `ddns.add_host: argument "tll"`},
		{name: "wrong type", fun: "ddns.add_host", kwargs: map[string]any{"zone": "z", "name": "n", "ttl": "soon"},
			wantErr: ErrArgumentType, errText: `argument "ttl": wrong argument type: want integer, got string "soon"`},
		{name: "map for string", fun: "ddns.add_host", kwargs: map[string]any{"zone": map[string]any{}, "name": "n"},
			wantErr: ErrArgumentType, errText: `argument "zone"`},
		{name: "given twice", fun: "ddns.add_host", args: []any{"z"}, kwargs: map[string]any{"zone": "z", "name": "n"},
			wantErr: ErrUnexpectedArgument, errText: "given more than once"},
		{name: "too many positional", fun: "test.sleep", args: []any{1, 2},
			wantErr: ErrUnexpectedArgument, errText: "takes 1 positional arguments, got 2"},
		{name: "unknown function", fun: "nope.nothing", wantErr: ErrUnknownFunction, errText: "nope.nothing: unknown function"},
		{name: "test.arg echoes", fun: "test.arg", args: []any{"a", 1}, kwargs: map[string]any{"k": []any{int32(1)}},
			want: map[string]any{"args": []any{"a", int64(1)}, "kwargs": map[string]any{"k": []any{int64(1)}}}},
		{name: "test.arg empty", fun: "test.arg", want: map[string]any{"args": []any{}, "kwargs": map[string]any{}}},
		{name: "test.ping", fun: "test.ping", want: true},
		{name: "test.sleep alias", fun: "test.sleep", kwargs: map[string]any{"length": 0.001}, want: true},
		{name: "test.exception", fun: "test.exception", kwargs: map[string]any{"message": "boom"}, errText: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Call(context.Background(), tt.fun, tt.args, tt.kwargs, nil)
			if tt.errText != "" || tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Call succeeded with %v, want error", got)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v is not %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("error %q does not contain %q", err, tt.errText)
				}
				if tt.wantErr != nil {
					if cerr := r.Check(tt.fun, tt.args, tt.kwargs); !errors.Is(cerr, tt.wantErr) {
						t.Errorf("Check = %v, want %v", cerr, tt.wantErr)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestEventSendFires(t *testing.T) {
	r := NewWithBuiltins()
	var gotTag string
	var gotData map[string]any
	fire := func(_ context.Context, tag string, data map[string]any) error {
		gotTag, gotData = tag, data
		return nil
	}
	if _, err := r.Call(context.Background(), "event.send", []any{"my/tag"}, map[string]any{"data": map[string]any{"a": 1}}, fire); err != nil {
		t.Fatal(err)
	}
	if gotTag != "my/tag" || !reflect.DeepEqual(gotData, map[string]any{"a": int64(1)}) {
		t.Fatalf("fired %q %v", gotTag, gotData)
	}
	_, err := r.Call(context.Background(), "event.send", []any{"my/tag"}, nil, nil)
	if !errors.Is(err, ErrNoEvents) {
		t.Fatalf("without a publisher: %v, want ErrNoEvents", err)
	}
}

func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := NewWithBuiltins().Call(ctx, "test.sleep", []any{60}, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
}

func TestRegister(t *testing.T) {
	run := func(context.Context, *Input) (any, error) { return nil, nil }
	r := NewWithBuiltins()
	tests := []struct {
		name string
		f    Func
	}{
		{"duplicate name", Func{Name: "test.ping", Run: run}},
		{"no handler", Func{Name: "x.y"}},
		{"duplicate param", Func{Name: "x.y", Run: run, Params: []Param{{Name: "a", Kind: Any}, {Name: "b", Kind: Any, Aliases: []string{"a"}}}}},
		{"no kind", Func{Name: "x.y", Run: run, Params: []Param{{Name: "a"}}}},
	}
	for _, tt := range tests {
		if err := r.Register(tt.f); err == nil {
			t.Errorf("%s: Register succeeded", tt.name)
		}
	}
	if !r.Accepts("test.sleep", "length") || r.Accepts("test.arg", "name") || r.Accepts("nope", "x") {
		t.Error("Accepts wrong")
	}
	if !r.ReadOnly("test.ping") || r.ReadOnly("event.send") || r.ReadOnly("nope") {
		t.Error("ReadOnly wrong")
	}
	if names := r.Names(); len(names) != len(Builtins) || names[0] != "event.send" {
		t.Errorf("Names() = %v", names)
	}
}
