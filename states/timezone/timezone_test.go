package timezone

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// TestSystem sets the zone and the clock of files in a temporary
// directory, with the system's zoneinfo, and compares the comments and
// changes with Salt 3006.6's timezone.system (its Debian code).
func TestSystem(t *testing.T) {
	if _, err := os.Stat("/usr/share/zoneinfo/Europe/Paris"); err != nil {
		t.Fatalf("TestSystem needs the zoneinfo of Debian's tzdata package: %v", err)
	}
	dir := t.TempDir()
	s := &states{p: paths{localtime: filepath.Join(dir, "localtime"), timezone: filepath.Join(dir, "timezone"),
		adjtime: filepath.Join(dir, "adjtime"), zoneinfo: "/usr/share/zoneinfo"}}
	if err := os.Symlink("/usr/share/zoneinfo/Etc/UTC", s.p.localtime); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.p.adjtime, []byte("0.000000 1700000000 0.000000\n1700000000\nLOCAL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(s.funcs()); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		what     string
		test     bool
		kwargs   map[string]any
		result   string
		comment  string
		changes  map[string]any
		link     string // /etc/localtime's target afterwards
		zone     string // /etc/timezone afterwards
		adjtime3 string // /etc/adjtime's third line afterwards
	}{
		{"set, test mode", true, map[string]any{"name": "Europe/Paris"}, "None",
			"Timezone Europe/Paris needs to be set, UTC needs to be set to True", nil, "/usr/share/zoneinfo/Etc/UTC", "", "LOCAL"},
		{"set", false, map[string]any{"name": "Europe/Paris"}, "True",
			"Set timezone Europe/Paris, Set UTC to True", map[string]any{"timezone": "Europe/Paris", "utc": true},
			"/usr/share/zoneinfo/Europe/Paris", "Europe/Paris\n", "UTC"},
		{"set again", false, map[string]any{"name": "Europe/Paris"}, "True",
			"Timezone Europe/Paris already set, UTC already set to Europe/Paris", nil, "/usr/share/zoneinfo/Europe/Paris", "Europe/Paris\n", "UTC"},
		{"set again, test mode", true, map[string]any{"name": "Europe/Paris"}, "True",
			"Timezone Europe/Paris already set, UTC already set to Europe/Paris", nil, "/usr/share/zoneinfo/Europe/Paris", "Europe/Paris\n", "UTC"},
		// As Salt's: utc False does not touch the clock.
		{"utc False", false, map[string]any{"name": "Europe/Paris", "utc": false}, "True",
			"Timezone Europe/Paris already set", nil, "/usr/share/zoneinfo/Europe/Paris", "Europe/Paris\n", "UTC"},
		{"another zone, utc False", false, map[string]any{"name": "America/New_York", "utc": false}, "True",
			"Set timezone America/New_York", map[string]any{"timezone": "America/New_York"}, "/usr/share/zoneinfo/America/New_York", "America/New_York\n", "UTC"},
		{"no such zone", false, map[string]any{"name": "Nowhere/Nope"}, "False",
			`Unable to compare desired timezone 'Nowhere/Nope' to system timezone: Can't find a local timezone "Nowhere/Nope"`, nil,
			"/usr/share/zoneinfo/America/New_York", "America/New_York\n", "UTC"},
	} {
		out, err := reg.Call(state.With(context.Background(), &state.Running{Test: step.test}), "timezone.system", nil, step.kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %v, want %v", step.what, got.Changes, step.changes)
		}
		if l, _ := os.Readlink(s.p.localtime); l != step.link {
			t.Errorf("%s: localtime links to %q, want %q", step.what, l, step.link)
		}
		if b, _ := os.ReadFile(s.p.timezone); string(b) != step.zone {
			t.Errorf("%s: timezone holds %q, want %q", step.what, b, step.zone)
		}
		b, _ := os.ReadFile(s.p.adjtime)
		if want := "0.000000 1700000000 0.000000\n1700000000\n" + step.adjtime3 + "\n"; string(b) != want {
			t.Errorf("%s: adjtime holds %q, want %q", step.what, b, want)
		}
	}
	if err := os.Remove(s.p.localtime); err != nil {
		t.Fatal(err)
	}
	out, err := reg.Call(context.Background(), "timezone.system", nil, map[string]any{"name": "Europe/Paris"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(state.Result); py.Str(state.Value(got.Result)) != "False" || got.Comment != "Unable to compare desired timezone 'Europe/Paris' to system timezone: "+
		"Failed to read "+s.p.localtime+" to determine current timezone: No such file or directory" {
		t.Errorf("no localtime: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
}
