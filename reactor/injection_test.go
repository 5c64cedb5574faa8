package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/master"
	"github.com/brinehq/brine/reactor"
)

// payloads are event data values that try to change a reaction's YAML
// structure: new reactions, new arguments, anchors, tags, documents.
var payloads = []string{
	"x\n  runner.event.send:\n    - tag: salt/job/123/ret/evil\n    - data: {a: 1}\ninj2:\n  runner.event.send:\n    - tag: brine/reactor/error\n    - data: {forged: 1}",
	"x\ninj3:\n  wheel.key.accept:\n    - match: '*'",
	"a: b",
	"- item",
	"- tag: salt/auth",
	"{evil: 1}",
	"[1, 2]",
	"&anchor x",
	"*alias",
	"!!python/object/apply:os.system ['id']",
	"---\nevil:\n  runner.test.arg: []",
	"...",
	"x\n...\n---\ny: 1",
	"'quoted",
	"\"double",
	"# comment",
	"x #not a comment",
	"| block\n  text",
	"> folded",
	"%TAG ! tag:evil",
	"@at",
	"`tick",
	"{{ 7*7 }}",
	"x\r\n  runner.test.arg: []",
	"\tx: y",
}

// baseData is an event with every field the example and test reaction
// files read, so that their conditionals hold.
func baseData() map[string]any {
	return map[string]any{
		"id": "web-asg-0042", "name": "web1", "act": "pend", "host": "10.0.1.11",
		"public_ips": []any{"192.0.2.10"}, "ips": []any{"10.0.0.1", "10.0.0.2"},
		"data":    map[string]any{"version": "3006.1", "n": int64(3)},
		"grains":  map[string]any{"os": "Debian"},
		"post":    map[string]any{"app": "shop", "version": "1.4.2", "user": "ci"},
		"headers": map[string]any{"X-Ci": "yes"},
		"event":   "web1 has been deployed at 10.0.1.11",
	}
}

// leaves returns the paths of every string in v.
func leaves(v any, path []string) [][]string {
	switch t := v.(type) {
	case string:
		return [][]string{slices.Clone(path)}
	case map[string]any:
		var out [][]string
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out = append(out, leaves(t[k], append(path, k))...)
		}
		return out
	case []any:
		var out [][]string
		for i, x := range t {
			out = append(out, leaves(x, append(path, fmt.Sprint(i)))...)
		}
		return out
	}
	return nil
}

// with returns a copy of data with the string at path replaced by s(old).
func with(data map[string]any, path []string, s func(old string) string) map[string]any {
	var set func(v any, path []string) any
	set = func(v any, path []string) any {
		if len(path) == 0 {
			return s(v.(string))
		}
		switch t := v.(type) {
		case map[string]any:
			c := maps.Clone(t)
			c[path[0]] = set(t[path[0]], path[1:])
			return c
		case []any:
			c := slices.Clone(t)
			var i int
			fmt.Sscan(path[0], &i)
			c[i] = set(t[i], path[1:])
			return c
		}
		return v
	}
	return set(data, path).(map[string]any)
}

// shape is what event data may not change about a reaction: its function,
// its argument names, how many positional arguments it has, and which
// arguments are mappings or lists.
func shape(r *reactor.Reaction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s args=%d", r.Call(), len(r.Args))
	for _, k := range slices.Sorted(maps.Keys(r.Kwargs)) {
		fmt.Fprintf(&b, " %s:%s", k, kindOf(r.Kwargs[k]))
	}
	for _, a := range r.Args {
		fmt.Fprintf(&b, " [%s]", kindOf(a))
	}
	if r.Tgt != nil {
		fmt.Fprintf(&b, " tgt:%s", kindOf(r.Tgt))
	}
	return b.String()
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "map"
	case []any:
		return "list"
	}
	return "scalar"
}

func reactionFiles(t *testing.T) []string {
	var files []string
	for _, dir := range []string{"../examples/reactor", "../testdata/reactor"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.sls"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d reaction files", len(files))
	}
	return files
}

func reactorFor(t *testing.T, file string) *reactor.Reactor {
	t.Helper()
	funcs, err := master.DryRunFunctions()
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	return reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "*", Files: []string{abs}}},
		FileRoots: map[string][]string{"base": {filepath.Dir(abs)}}, Retry: reactor.Retry{Attempts: 1}},
		funcs, reactor.WithLogger(slog.New(slog.DiscardHandler)))
}

// TestEventDataCannotChangeAReaction renders every example and test
// reaction file with injection payloads in every field of the event (alone,
// and appended to the field's ordinary value so that conditionals still
// hold) and in the tag, and checks that no reaction appears that ordinary
// data does not give, and that no reaction changes its function, argument
// names or the kind of an argument.
func TestEventDataCannotChangeAReaction(t *testing.T) {
	ctx := context.Background()
	base := baseData()
	for _, file := range reactionFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r := reactorFor(t, file)
			want := map[string]int{}
			for _, re := range r.Plan(ctx, "salt/test/x", base).Reactions {
				want[shape(re)]++
			}
			check := func(what, tag string, data map[string]any) {
				t.Helper()
				got := maps.Clone(want)
				for _, re := range r.Plan(ctx, tag, data).Reactions {
					s := shape(re)
					if got[s] == 0 {
						t.Errorf("%s: a reaction ordinary data does not give: %s %s\n(ordinary: %v)", what, re.ID, s, slices.Sorted(maps.Keys(want)))
						continue
					}
					got[s]--
				}
			}
			for _, path := range leaves(base, nil) {
				for i, p := range payloads {
					check(fmt.Sprintf("%s = payload %d", strings.Join(path, "."), i), "salt/test/x", with(base, path, func(string) string { return p }))
					check(fmt.Sprintf("%s += payload %d", strings.Join(path, "."), i), "salt/test/x", with(base, path, func(old string) string { return old + p }))
				}
			}
			for i, p := range payloads {
				if tag := "salt/test/" + p; bus.ValidateTag(tag) == nil {
					check(fmt.Sprintf("tag with payload %d", i), tag, base)
				}
			}
		})
	}
}

// TestInjectionCannotForgeReservedTags runs the attacks the issue reports
// end to end: a reaction echoing data['v'], and the shipped webhook
// example, fed bodies that try to fire salt/job, brine/reactor/error and
// salt/auth events.
func TestInjectionCannotForgeReservedTags(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	echo := filepath.Join(dir, "echo.sls")
	if err := os.WriteFile(echo, []byte("s3:\n  runner.test.arg:\n    - v: {{ data['v'] }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	forge := "x\n  runner.event.send:\n    - tag: salt/job/123/ret/evil\n    - data: {a: 1}\ninj2:\n  runner.event.send:\n    - tag: brine/reactor/error\n    - data: {forged: 1}"
	auth := "shop/done\n    - data: {act: accept, id: evil}\nforged:\n  runner.event.send:\n    - tag: salt/auth\n    - data:\n        act: accept"
	cases := []struct {
		file string
		tag  string
		data map[string]any
		// want is the only reaction, with its argument's value
		wantID, wantCall, wantArg string
		wantVal                   any
	}{
		{echo, "inj/x", map[string]any{"v": forge}, "s3", "runner.test.arg", "v", forge},
		{"../examples/reactor/webhook_deploy.sls", "salt/netapi/hook/deploy/shop",
			map[string]any{"post": map[string]any{"app": auth, "version": "1"}}, "announce_" + auth, "runner.event.send", "tag", "myco/deploy/" + auth + "/done"},
	}
	for _, c := range cases {
		r := reactorFor(t, c.file)
		ev, err := bus.NewEvent(c.tag, c.data, bus.Origin{Source: "brine://test"})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := ev.DataMap()
		plan := r.Plan(ctx, c.tag, data)
		if len(plan.Reactions) != 1 {
			var ids []string
			for _, re := range plan.Reactions {
				ids = append(ids, re.ID+" "+re.Call())
			}
			t.Fatalf("%s: %d reactions %v, want only %s", filepath.Base(c.file), len(plan.Reactions), ids, c.wantID)
		}
		re := plan.Reactions[0]
		if re.ID != c.wantID || re.Call() != c.wantCall || re.Kwargs[c.wantArg] != c.wantVal {
			t.Errorf("%s: reaction %q %s %s=%#v, want %q %s %#v", filepath.Base(c.file), re.ID, re.Call(), c.wantArg, re.Kwargs[c.wantArg], c.wantID, c.wantCall, c.wantVal)
		}
		rec := &bus.Recorder{}
		r.Execute(ctx, ev, plan.Reactions, rec, nil)
		for _, fired := range rec.Events() {
			d, _ := fired.DataMap()
			legit := strings.HasPrefix(fired.Tag, "salt/run/") || fired.Tag == reactor.TagError && d["stage"] == "run"
			if !legit || d["forged"] != nil || d["act"] != nil {
				t.Errorf("%s: fired %s %s", filepath.Base(c.file), fired.Tag, fired.Data)
			}
		}
	}
}
