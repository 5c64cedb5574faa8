package alternatives

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
)

// TestFunctions runs the functions against update-alternatives over a
// temporary alternatives directory, in the order a formula would.
func TestFunctions(t *testing.T) {
	if _, err := exec.LookPath("update-alternatives"); err != nil {
		t.Fatalf("TestFunctions needs update-alternatives (Debian's dpkg): %v", err)
	}
	dir := t.TempDir()
	tool := Tool{Command: "update-alternatives", Altdir: filepath.Join(dir, "alternatives"), Admindir: filepath.Join(dir, "admin")}
	for _, d := range []string{tool.Altdir, tool.Admindir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2, link := filepath.Join(dir, "php8.2"), filepath.Join(dir, "php8.3"), filepath.Join(dir, "php")
	for _, p := range []string{p1, p2} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reg := function.New()
	if err := reg.RegisterAll(Funcs(func() Tool { return tool }, tool.Altdir)); err != nil {
		t.Fatal(err)
	}
	call := func(fun string, kwargs map[string]any) any {
		t.Helper()
		out, err := reg.Call(context.Background(), fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return out
	}
	name := map[string]any{"name": "brine-php"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"name": "brine-php"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		what, fun string
		kwargs    map[string]any
		want      any    // compared as is, unless contains
		contains  string // the answer holds this text
	}{
		{"nothing installed", "alternatives.show_current", name, false, ""},
		{"no master link", "alternatives.show_link", name, false, ""},
		{"not registered", "alternatives.check_exists", with("path", p1), false, ""},
		{"not installed", "alternatives.check_installed", with("path", p1), false, ""},
		{"display, none", "alternatives.display", name, nil, "no alternatives for brine-php"},
		{"install", "alternatives.install", with("link", link, "path", p1, "priority", 10), nil, "using " + p1 + " to provide " + link},
		{"install another", "alternatives.install", with("link", link, "path", p2, "priority", 20), nil, "using " + p2},
		{"current", "alternatives.show_current", name, p2, ""},
		{"link", "alternatives.show_link", name, link, ""},
		{"registered", "alternatives.check_exists", with("path", p1), true, ""},
		{"installed", "alternatives.check_installed", with("path", p2), true, ""},
		{"display", "alternatives.display", name, nil, "link currently points to " + p2},
		{"set", "alternatives.set", with("path", p1), nil, "using " + p1 + " to provide " + link + " (brine-php) in manual mode"},
		{"current after set", "alternatives.show_current", name, p1, ""},
		{"auto", "alternatives.auto", name, nil, "in auto mode"},
		{"current after auto", "alternatives.show_current", name, p2, ""},
		{"set, unknown path", "alternatives.set", with("path", filepath.Join(dir, "nope")), nil, "alternative " + filepath.Join(dir, "nope") + " for brine-php not registered"},
		{"remove", "alternatives.remove", with("path", p2), nil, ""},
		{"current after remove", "alternatives.show_current", name, p1, ""},
	} {
		got := call(tc.fun, tc.kwargs)
		if tc.contains != "" {
			if s, _ := got.(string); !strings.Contains(s, tc.contains) {
				t.Errorf("%s: %s answered %#v, want text holding %q", tc.what, tc.fun, got, tc.contains)
			}
			continue
		}
		if tc.want != nil && got != tc.want {
			t.Errorf("%s: %s answered %#v, want %#v", tc.what, tc.fun, got, tc.want)
		}
	}
}

// TestNotAvailable: without the alternatives directory the module is not
// available, in Salt's words.
func TestNotAvailable(t *testing.T) {
	reg := function.New()
	missing := filepath.Join(t.TempDir(), "alternatives")
	if err := reg.RegisterAll(Funcs(func() Tool { return For(nil) }, missing)); err != nil {
		t.Fatal(err)
	}
	_, err := reg.Call(context.Background(), "alternatives.show_current", nil, map[string]any{"name": "php"}, nil)
	want := "alternatives.show_current is not available: Cannot load alternatives module: " + missing + " dir not found"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestFor(t *testing.T) {
	for _, tc := range []struct {
		family, want string
	}{{"Debian", "update-alternatives"}, {"RedHat", "alternatives"}, {"", "update-alternatives"}} {
		if got := For(map[string]any{"os_family": tc.family}).Command; got != tc.want {
			t.Errorf("os_family %q: %s, want %s", tc.family, got, tc.want)
		}
	}
}
