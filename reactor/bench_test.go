package reactor

import (
	"context"
	"testing"
)

func BenchmarkPlan(b *testing.B) {
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{fixture(b, "arg_kwarg.sls")}}}}, testFuncs(b))
	ctx := context.Background()
	for b.Loop() {
		if p := r.Plan(ctx, "salt/test", fixtureData); len(p.Reactions) != 1 {
			b.Fatal(p.Errors)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	r := New(Config{}, testFuncs(b))
	path := fixture(b, "arg_kwarg.sls")
	ctx := context.Background()
	for b.Loop() {
		if _, err := r.Render(ctx, path, "salt/test", fixtureData); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatch1000(b *testing.B) {
	var m []MapEntry
	for i := range 1000 {
		m = append(m, MapEntry{Glob: "salt/cloud/web" + string(rune('a'+i%26)) + "*/" + string(rune('a'+i/26)) + "/created"})
	}
	r := New(Config{Mapping: m}, testFuncs(b))
	for b.Loop() {
		r.Matches("salt/cloud/webq12/c/created")
	}
}
