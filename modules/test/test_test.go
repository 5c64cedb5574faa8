package test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

func registry(t *testing.T) *function.Registry {
	t.Helper()
	env := &modules.Env{Version: "1.2.3", Opts: func() map[string]any { return map[string]any{"id": "web01"} },
		Grains: func() map[string]any { return map[string]any{"os": "Debian"} }}
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestFunctions(t *testing.T) {
	reg := registry(t)
	pub := map[string]any{"__pub_jid": "20240101", "x": int64(1)}
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
	}{
		{fun: "test.ping", want: true},
		{fun: "test.true", want: true},
		{fun: "test.false", want: false},
		{fun: "test.echo", args: []any{"foo bar"}, want: "foo bar"},
		{fun: "test.echo", args: []any{3}, want: int64(3)},
		{fun: "test.echo", err: "missing argument"},
		{fun: "test.version", want: "1.2.3"},
		{fun: "test.arg", args: []any{1, "two"}, kwargs: pub,
			want: map[string]any{"args": []any{int64(1), "two"}, "kwargs": map[string]any{"__pub_jid": "20240101", "x": int64(1)}}},
		{fun: "test.arg", want: map[string]any{"args": []any{}, "kwargs": map[string]any{}}},
		{fun: "test.arg_clean", args: []any{1}, kwargs: pub,
			want: map[string]any{"args": []any{int64(1)}, "kwargs": map[string]any{"x": int64(1)}}},
		{fun: "test.arg_type", args: []any{1, "a", nil}, kwargs: map[string]any{"l": []any{}},
			want: map[string]any{"args": []any{"<class 'int'>", "<class 'str'>", "<class 'NoneType'>"},
				"kwargs": map[string]any{"l": "<class 'list'>"}}},
		{fun: "test.kwarg", kwargs: pub, want: map[string]any{"__pub_jid": "20240101", "x": int64(1)}},
		{fun: "test.fib", args: []any{-1}, err: "Negative number is not allowed: -1"},
		{fun: "test.fib", args: []any{93}, err: "too large"},
		{fun: "test.fib", args: []any{"ten"}, err: "wrong argument type"},
		{fun: "test.collatz", args: []any{0}, err: "positive"},
		{fun: "test.exception", err: "Test Exception"},
		{fun: "test.exception", args: []any{"Oh noes!"}, err: "Oh noes!"},
		{fun: "test.assertion", args: []any{true}, want: nil},
		{fun: "test.assertion", args: []any{""}, err: "AssertionError"},
		{fun: "test.outputter", args: []any{map[string]any{"a": 1}}, want: map[string]any{"a": int64(1)}},
		{fun: "test.get_opts", want: map[string]any{"id": "web01"}},
		{fun: "test.opts_pkg", want: map[string]any{"id": "web01", "grains": map[string]any{"os": "Debian"}}},
		{fun: "test.cross_test", args: []any{"test.echo", []any{"hi"}}, want: "hi"},
		{fun: "test.cross_test", args: []any{"test.nope"}, err: "unknown function"},
		{fun: "test.sleep", args: []any{0}, want: true},
		{fun: "test.rand_sleep", args: []any{0}, want: true},
		{fun: "test.rand_sleep", args: []any{-1}, err: "negative"},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.fun, tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, %v; want %#v", tc.fun, tc.args, tc.kwargs, got, err, tc.want)
		}
	}
}

func TestFibAndCollatz(t *testing.T) {
	reg := registry(t)
	for n, want := range map[int64]int64{0: 0, 1: 1, 2: 1, 10: 55, 92: 7540113804746346429} {
		got, err := reg.Call(context.Background(), "test.fib", []any{n}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pair := got.([]any)
		if pair[0] != want {
			t.Errorf("test.fib %d = %v, want %d", n, pair[0], want)
		}
		if s, ok := pair[1].(float64); !ok || s < 0 {
			t.Errorf("test.fib %d: elapsed %v", n, pair[1])
		}
	}
	got, err := reg.Call(context.Background(), "test.collatz", []any{6}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if steps := got.([]any)[0]; !reflect.DeepEqual(steps, []any{int64(6), int64(3), int64(10), int64(5), int64(16), int64(8), int64(4), int64(2)}) {
		t.Errorf("test.collatz 6 = %v", steps)
	}
}

func TestRetcode(t *testing.T) {
	reg := registry(t)
	for _, tc := range []struct {
		args []any
		want int64
	}{{nil, 42}, {[]any{3}, 3}, {[]any{0}, 0}} {
		ctx, rc := modules.WithRetcode(context.Background())
		rc.Store(-1)
		got, err := reg.Call(ctx, "test.retcode", tc.args, nil, nil)
		if err != nil || got != true || rc.Load() != tc.want {
			t.Errorf("test.retcode %v = %v, %v; retcode %d, want %d", tc.args, got, err, rc.Load(), tc.want)
		}
	}
}

func TestSleepEndsWithTheJob(t *testing.T) {
	reg := registry(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	killed := errors.New("killed")
	time.AfterFunc(50*time.Millisecond, func() { cancel(killed) })
	start := time.Now()
	_, err := reg.Call(ctx, "test.sleep", []any{30}, nil, nil)
	if !errors.Is(err, killed) || time.Since(start) > 5*time.Second {
		t.Fatalf("test.sleep after cancel: %v after %v", err, time.Since(start))
	}
	start = time.Now()
	if got, err := reg.Call(context.Background(), "test.sleep", []any{"0.05"}, nil, nil); got != true || err != nil ||
		time.Since(start) < 50*time.Millisecond {
		t.Fatalf("test.sleep 0.05 = %v, %v after %v", got, err, time.Since(start))
	}
}
