package reactor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/brinehq/brine/function"
)

// testFuncs is the builtin registry plus stand-ins for the DDNS runner
// functions, with Salt's signatures.
func testFuncs(t testing.TB) *function.Registry {
	t.Helper()
	reg := function.NewWithBuiltins()
	echo := func(_ context.Context, in *function.Input) (any, error) { return in.Func, nil }
	for _, f := range []function.Func{
		{Name: "ddns.add_host", Run: echo, Params: []function.Param{
			{Name: "zone", Kind: function.String, Required: true},
			{Name: "name", Kind: function.String, Required: true},
			{Name: "ttl", Kind: function.Int, Default: int64(300)},
			{Name: "ip", Kind: function.String, Required: true},
		}},
		{Name: "ddns.delete_host", Run: echo, Params: []function.Param{
			{Name: "zone", Kind: function.String, Required: true},
			{Name: "name", Kind: function.String, Required: true},
		}},
	} {
		if err := reg.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// fixture is the absolute path of a reaction file in testdata/reactor.
func fixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "reactor", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// planOne renders and compiles one fixture for an event.
func planOne(t testing.TB, file, tag string, data map[string]any) *Plan {
	t.Helper()
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{fixture(t, file)}}}}, testFuncs(t))
	return r.Plan(context.Background(), tag, data)
}
