package host

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

type call struct {
	id, fun string
	kwargs  map[string]any
}

type want struct {
	result   any
	comment  string
	changes  map[string]any
	warnings []string
}

// TestHosts runs the SLS Salt 3006.6 was run on (salt-call --local, with
// hosts.file set to a copy of the same file) three times, test mode first,
// and holds Salt's returns and the file it left after each run.
func TestHosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	orig := "127.0.0.1\tlocalhost\n# The following lines are desirable for IPv6 capable hosts\n" +
		"::1     localhost ip6-localhost ip6-loopback\n\n10.0.0.5 old.example old # legacy box\n10.0.0.9 moved\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{Opts: func() map[string]any { return map[string]any{"hosts.file": path} }})); err != nil {
		t.Fatal(err)
	}
	sls := []call{
		{"web", "host.present", map[string]any{"name": "web", "ip": "10.0.0.7"}},
		{"web_comment", "host.present", map[string]any{"name": "db", "ip": "10.0.0.5", "comment": "database"}},
		{"moved", "host.present", map[string]any{"name": "moved", "ip": "10.0.0.10", "clean": true}},
		{"already", "host.present", map[string]any{"name": "localhost", "ip": "127.0.0.1"}},
		{"warn", "host.present", map[string]any{"name": "old", "ip": "10.0.0.6"}},
		{"gone", "host.absent", map[string]any{"name": "ip6-loopback", "ip": "::1"}},
		{"gone_already", "host.absent", map[string]any{"name": "nothere", "ip": "10.0.0.5"}},
		{"only", "host.only", map[string]any{"name": "10.0.0.5", "hostnames": []any{"a.example", "a"}}},
		{"only_same", "host.only", map[string]any{"name": "127.0.0.1", "hostnames": "localhost"}},
	}
	localhostWarn := []string{"Host localhost present for IP address ::1. To get rid of this warning, either run this state " +
		"with 'clean' set to True to remove localhost from ::1, or add ::1 to the 'ip' argument."}
	oldWarn := []string{"Host old present for IP address 10.0.0.5. To get rid of this warning, either run this state with " +
		"'clean' set to True to remove old from 10.0.0.5, or add 10.0.0.5 to the 'ip' argument."}
	added := func(addr, name string) map[string]any {
		return map[string]any{"added": map[string]any{addr: []any{name}}}
	}
	dbChanges := map[string]any{"added": map[string]any{"10.0.0.5": []any{"db"}},
		"comment_added": map[string]any{"10.0.0.5": []any{"database"}}}
	movedChanges := map[string]any{"added": map[string]any{"10.0.0.10": []any{"moved"}},
		"removed": map[string]any{"10.0.0.9": []any{"moved"}}}
	runs := []struct {
		test  bool
		wants []want
		file  string
	}{
		{true, []want{
			{nil, "Host web (10.0.0.7) would be added", added("10.0.0.7", "web"), nil},
			{nil, "Host db (10.0.0.5) would be added\nComment for 10.0.0.5 (database) would be added", dbChanges, nil},
			{nil, "Host moved (10.0.0.10) would be added\nHost moved (10.0.0.9) would be removed", movedChanges, nil},
			{true, "Host localhost (127.0.0.1) already present", nil, localhostWarn},
			{nil, "Host old (10.0.0.6) would be added", added("10.0.0.6", "old"), oldWarn},
			{nil, "Host ip6-loopback (::1) needs to be removed", nil, nil},
			{true, "Host nothere (10.0.0.5) already absent", nil, nil},
			{nil, `Would change 10.0.0.5 from "old.example old" to "a.example a"`, nil, nil},
			{true, `IP address 127.0.0.1 already set to "localhost"`, nil, nil},
		}, orig},
		{false, []want{
			{true, "Added host web (10.0.0.7)", added("10.0.0.7", "web"), nil},
			{true, "Added host db (10.0.0.5)\nSet comment for host 10.0.0.5 (database)", dbChanges, nil},
			{true, "Added host moved (10.0.0.10)\nRemoved host moved (10.0.0.9)", movedChanges, nil},
			{true, "Host localhost (127.0.0.1) already present", nil, localhostWarn},
			{true, "Added host old (10.0.0.6)", added("10.0.0.6", "old"), oldWarn},
			{true, "Removed host ip6-loopback (::1)", map[string]any{"host": "ip6-loopback"}, nil},
			{true, "Host nothere (10.0.0.5) already absent", nil, nil},
			{true, `successfully changed 10.0.0.5 from "old.example old db" to "a.example a"`,
				map[string]any{"10.0.0.5": map[string]any{"old": "old.example old db", "new": "a.example a"}}, nil},
			{true, `IP address 127.0.0.1 already set to "localhost"`, nil, nil},
		}, "127.0.0.1\t\tlocalhost\n# The following lines are desirable for IPv6 capable hosts\n::1\t\tlocalhost ip6-localhost \n" +
			"10.0.0.5\t\ta.example a\n10.0.0.7\t\tweb\n10.0.0.10\t\tmoved\n10.0.0.6\t\told\n"},
		{false, []want{
			{true, "Host web (10.0.0.7) already present", nil, nil},
			{true, "Added host db (10.0.0.5)\nSet comment for host 10.0.0.5 (database)", dbChanges, nil},
			{true, "Host moved (10.0.0.10) already present", nil, nil},
			{true, "Host localhost (127.0.0.1) already present", nil, localhostWarn},
			{true, "Host old (10.0.0.6) already present", nil, nil},
			{true, "Host ip6-loopback (::1) already absent", nil, nil},
			{true, "Host nothere (10.0.0.5) already absent", nil, nil},
			{true, `successfully changed 10.0.0.5 from "a.example a db" to "a.example a"`,
				map[string]any{"10.0.0.5": map[string]any{"old": "a.example a db", "new": "a.example a"}}, nil},
			{true, `IP address 127.0.0.1 already set to "localhost"`, nil, nil},
		}, "127.0.0.1\t\tlocalhost\n# The following lines are desirable for IPv6 capable hosts\n::1\t\tlocalhost ip6-localhost\n" +
			"10.0.0.5\t\ta.example a\n10.0.0.7\t\tweb\n10.0.0.10\t\tmoved\n10.0.0.6\t\told\n"},
	}
	for n, run := range runs {
		for i, c := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test, ID: c.id})
			out, err := reg.Call(ctx, c.fun, nil, c.kwargs, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, w := out.(state.Result), run.wants[i]
			if state.Value(r.Result) != w.result || r.Comment != w.comment || !reflect.DeepEqual(r.Warnings, w.warnings) ||
				!(reflect.DeepEqual(r.Changes, w.changes) || len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("run %d, %s: got %v %q %#v %q\nwant %v %q %#v %q", n+1, c.id, state.Value(r.Result), r.Comment, r.Changes,
					r.Warnings, w.result, w.comment, w.changes, w.warnings)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != run.file {
			t.Errorf("run %d left the hosts file\n%q\nwant\n%q", n+1, b, run.file)
		}
	}
}

// TestHostsFileMissing: Salt's hosts module creates the file (its
// directory must exist) when a name is added.
func TestHostsFileMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{Opts: func() map[string]any { return map[string]any{"hosts.file": path} }})); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fun     string
		kwargs  map[string]any
		result  any
		comment string
	}{
		{"host.absent", map[string]any{"name": "web", "ip": "10.0.0.7"}, true, "Host web (10.0.0.7) already absent"},
		{"host.present", map[string]any{"name": "web", "ip": "10.0.0.7"}, true, "Added host web (10.0.0.7)"},
	} {
		out, err := reg.Call(state.With(context.Background(), &state.Running{}), c.fun, nil, c.kwargs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := out.(state.Result); state.Value(r.Result) != c.result || r.Comment != c.comment {
			t.Errorf("%s: got %v %q, want %v %q", c.fun, state.Value(r.Result), r.Comment, c.result, c.comment)
		}
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "10.0.0.7\t\tweb\n" {
		t.Errorf("hosts file holds %q (%v)", b, err)
	}
}
