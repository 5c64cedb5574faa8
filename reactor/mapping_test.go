package reactor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/fnmatch"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "mapfile.yaml"), "- 'a/*':\n  - rel.sls\n  - /abs.sls\n")
	tests := []struct {
		name    string
		master  string
		want    Config
		wantErr string
	}{
		{name: "salt list", master: `
reactor:
  - 'salt/cloud/*/created':
    - /srv/reactor/add.sls
    - salt://reactor/audit.sls
  - 'salt/key': /srv/reactor/key.sls
file_roots:
  base: [/srv/salt, /srv/extra]
reactor_workers: 16
reactor_max_depth: 3
reactor_max_in_flight: 100
reactor_retry: {attempts: 2, interval: 1, max_interval: 5s}
`, want: Config{
			Mapping: []MapEntry{
				{Glob: "salt/cloud/*/created", Files: []string{"/srv/reactor/add.sls", "salt://reactor/audit.sls"}},
				{Glob: "salt/key", Files: []string{"/srv/reactor/key.sls"}},
			},
			FileRoots: map[string][]string{"base": {"/srv/salt", "/srv/extra"}},
			Workers:   16, MaxDepth: 3, MaxInFlight: 100,
			Retry: Retry{Attempts: 2, Interval: time.Second, MaxInterval: 5 * time.Second},
		}},
		{name: "path to a mapping file", master: "reactor: " + filepath.Join(dir, "mapfile.yaml") + "\nreactor_worker_threads: 10\n",
			want: Config{
				Mapping:     []MapEntry{{Glob: "a/*", Files: []string{filepath.Join(dir, "rel.sls"), "/abs.sls"}}},
				MappingFile: filepath.Join(dir, "mapfile.yaml"),
				FileRoots:   map[string][]string{"base": {"/srv/salt"}},
				Workers:     10,
			}},
		{name: "none", master: "id: m1\n", want: Config{FileRoots: map[string][]string{"base": {"/srv/salt"}}}},
		{name: "entry not a single-key map", master: "reactor:\n  - a: [x]\n    b: [y]\n", wantErr: "entry 1"},
		{name: "file list of numbers", master: "reactor:\n  - a: [1]\n", wantErr: "want paths"},
		{name: "bad retry", master: "reactor_retry: {attempts: 0}\n", wantErr: "attempts"},
		{name: "unknown retry key", master: "reactor_retry: {tries: 3}\n", wantErr: `unknown key "tries"`},
		{name: "missing mapping file", master: "reactor: /nonexistent/map.yaml\n", wantErr: "no such file"},
		{name: "mapping written as a map", master: "id: m\nreactor:\n  'a/*': [/x.sls]\n", wantErr: "master:2: reactor: written as a mapping; write it as a list"},
		{name: "negative workers", master: "reactor_workers: -5\n", wantErr: "master:1: reactor_workers: -5: want at least 1"},
		{name: "zero depth", master: "id: m\nreactor_max_depth: 0\n", wantErr: "master:2: reactor_max_depth: 0: want at least 1"},
		{name: "zero in flight", master: "reactor_max_in_flight: 0\n", wantErr: "reactor_max_in_flight: 0: want at least 1"},
		{name: "retry with its line", master: "id: m\nreactor_retry: {tries: 3}\n", wantErr: `master:2: reactor_retry: unknown key "tries"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "master")
			writeFile(t, path, tt.master)
			m, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := LoadConfig(m)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMappingMatchAndResolve(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "salt", "reactor", "audit.sls"), "a:\n  runner.test.ping: []\n")
	writeFile(t, filepath.Join(root, "env2", "reactor", "audit.sls"), "b:\n  runner.test.ping: []\n")
	writeFile(t, filepath.Join(root, "globbed", "10-one.sls"), "c:\n  runner.test.ping: []\n")
	writeFile(t, filepath.Join(root, "globbed", "20-two.sls"), "d:\n  runner.test.ping: []\n")
	plain := filepath.Join(root, "plain.sls")
	writeFile(t, plain, "e:\n  runner.test.ping: []\n")
	cfg := Config{
		FileRoots: map[string][]string{"base": {filepath.Join(root, "nope"), filepath.Join(root, "salt")}, "other": {filepath.Join(root, "env2")}},
		Mapping: []MapEntry{
			{Glob: "salt/cloud/*/created", Files: []string{"salt://reactor/audit.sls", filepath.Join(root, "globbed", "*.sls")}},
			{Glob: "salt/cloud/*", Files: []string{plain, "salt://reactor/audit.sls?saltenv=other"}},
			{Glob: "salt/cloud/[!x]*/destroyed", Files: []string{"salt://reactor/missing.sls"}},
		},
	}
	r := New(cfg, testFuncs(t))
	ids := func(tag string) ([]string, []string) {
		p := r.Plan(context.Background(), tag, nil)
		var out, errs []string
		for _, re := range p.Reactions {
			out = append(out, re.ID)
		}
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
		return out, errs
	}
	tests := []struct {
		tag     string
		want    []string
		wantErr string
	}{
		// All matching entries run, in config order; * crosses '/'.
		{tag: "salt/cloud/web1/created", want: []string{"a", "c", "d", "e", "b"}},
		{tag: "salt/cloud/a/b/created", want: []string{"a", "c", "d", "e", "b"}},
		{tag: "salt/cloud/web1/creating", want: []string{"e", "b"}},
		{tag: "salt/cloud/web1/destroyed", want: []string{"e", "b"}, wantErr: "salt://reactor/missing.sls is in no file_roots base directory"},
		{tag: "salt/cloud/xweb/destroyed", want: []string{"e", "b"}},
		{tag: "salt/key", want: nil},
	}
	for _, tt := range tests {
		got, errs := ids(tt.tag)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: reactions %v, want %v", tt.tag, got, tt.want)
		}
		if tt.wantErr == "" && len(errs) > 0 || tt.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0], tt.wantErr)) {
			t.Errorf("%s: errors %v, want %q", tt.tag, errs, tt.wantErr)
		}
	}
}

func TestTemplateCacheInvalidation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.sls")
	writeFile(t, path, "first:\n  runner.test.ping: []\n")
	r := New(Config{Mapping: []MapEntry{{Glob: "*", Files: []string{path}}}}, testFuncs(t))
	id := func() string {
		p := r.Plan(context.Background(), "t", nil)
		if len(p.Reactions) != 1 {
			t.Fatalf("plan: %+v", p)
		}
		return p.Reactions[0].ID
	}
	if got := id(); got != "first" {
		t.Fatalf("got %s", got)
	}
	tpl1, _ := r.render.template(path)
	tpl2, _ := r.render.template(path)
	if tpl1 != tpl2 {
		t.Fatal("unchanged file was recompiled")
	}
	// Same size, new content and mtime: the cache must notice.
	writeFile(t, path, "again:\n  runner.test.ping: []\n")
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	if got := id(); got != "again" {
		t.Fatalf("after edit got %s, want again", got)
	}
}

func TestReloadMappingFile(t *testing.T) {
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "reactor.yaml")
	writeFile(t, filepath.Join(dir, "a.sls"), "a:\n  runner.test.ping: []\n")
	writeFile(t, mapFile, "- 'x/*': [a.sls]\n")
	r := New(Config{MappingFile: mapFile}, testFuncs(t))
	if p := r.Plan(context.Background(), "x/1", nil); len(p.Reactions) != 1 {
		t.Fatalf("before: %+v", p)
	}
	writeFile(t, mapFile, "- 'y/*': [a.sls]\n")
	if err := r.Reload(r.Config()); err != nil {
		t.Fatal(err)
	}
	if p := r.Plan(context.Background(), "x/1", nil); len(p.Reactions) != 0 {
		t.Fatalf("old glob still mapped: %+v", p)
	}
	if p := r.Plan(context.Background(), "y/1", nil); len(p.Reactions) != 1 {
		t.Fatalf("new glob not mapped: %+v", p)
	}
	// A broken mapping file keeps the last good mapping.
	writeFile(t, mapFile, "- 'y/*': [a.sls\n")
	if err := r.Reload(r.Config()); err == nil {
		t.Fatal("broken mapping file accepted")
	}
	if p := r.Plan(context.Background(), "y/1", nil); len(p.Reactions) != 1 {
		t.Fatalf("last good mapping lost: %+v", p)
	}
}

func TestWatchPicksUpNewFilesAndMapping(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "d", "a.sls"), "a:\n  runner.test.ping: []\n")
	mapFile := filepath.Join(dir, "reactor.yaml")
	writeFile(t, mapFile, "- 'x':\n  - d/*.sls\n")
	r := New(Config{MappingFile: mapFile}, testFuncs(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Watch(ctx, 10*time.Millisecond) }()
	defer func() { cancel(); <-done }()
	count := func(tag string) int { return len(r.Plan(context.Background(), tag, nil).Reactions) }
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not reloaded", what)
			}
		}
	}
	if count("x") != 1 {
		t.Fatal("initial mapping")
	}
	writeFile(t, filepath.Join(dir, "d", "b.sls"), "b:\n  runner.test.ping: []\n")
	eventually("new file under a path glob", func() bool { return count("x") == 2 })
	writeFile(t, mapFile, "- 'y':\n  - d/*.sls\n")
	eventually("mapping file edit", func() bool { return count("x") == 0 && count("y") == 2 })

	st := r.Status()
	if len(st) != 1 || st[0].Glob != "y" || len(st[0].Files) != 2 || st[0].Files[0].Error != "" || st[0].Files[0].Size == 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestStatusReportsMissing(t *testing.T) {
	r := New(Config{Mapping: []MapEntry{{Glob: "a", Files: []string{"/nonexistent/x.sls", "/nonexistent/*.sls", "salt://nope.sls"}}}}, testFuncs(t))
	st := r.Status()
	if len(st) != 1 || len(st[0].Files) != 3 {
		t.Fatalf("status %+v", st)
	}
	for _, f := range st[0].Files {
		if f.Error == "" {
			t.Errorf("%s: no error reported", f.Spec)
		}
	}
}

func TestMatchesAndRender(t *testing.T) {
	r := New(Config{Mapping: []MapEntry{
		{Glob: "salt/cloud/*/created", Files: []string{fixture(t, "arg_kwarg.sls")}},
		{Glob: "salt/cloud/*", Files: []string{fixture(t, "empty.sls")}},
	}}, testFuncs(t))
	for tag, want := range map[string]int{"salt/cloud/a/created": 2, "salt/cloud/a": 1, "salt/key": 0} {
		if got := r.Matches(tag); got != want {
			t.Errorf("Matches(%s) = %d, want %d", tag, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.Matches("salt/cloud/a/created") }); n != 0 {
		t.Errorf("Matches allocates %v times", n)
	}
	out, err := r.Render(context.Background(), fixture(t, "arg_kwarg.sls"), "t", fixtureData)
	if err != nil || !strings.Contains(string(out), "- web-asg-0042") {
		t.Fatalf("Render: %v\n%s", err, out)
	}
}

func TestConsumerPattern(t *testing.T) {
	tests := []struct {
		globs []string
		want  string
	}{
		{nil, ""},
		{[]string{"salt/cloud/*/created"}, "salt/cloud/*"},
		{[]string{"salt/cloud/*/created", "salt/cloud/*/destroyed"}, "salt/cloud/*"},
		{[]string{"salt/cloud/*/created", "salt/key"}, "salt/*"},
		{[]string{"salt/key", "salt/key"}, "salt/key"},
		{[]string{"salt/key", "salt/auth"}, "salt/*"},
		{[]string{"salt/key", "myco/x"}, ""},
		{[]string{"*"}, ""},
		{[]string{"a[/b*"}, "a[[]/b*"},
	}
	for _, tt := range tests {
		var entries []MapEntry
		for _, g := range tt.globs {
			entries = append(entries, MapEntry{Glob: g})
		}
		got := consumerPattern(entries)
		if got != tt.want {
			t.Errorf("consumerPattern(%v) = %q, want %q", tt.globs, got, tt.want)
		}
		// The pattern must let through every tag an entry matches.
		if got != "" {
			for _, g := range tt.globs {
				tag := strings.NewReplacer("*", "x/y", "[", "[").Replace(g)
				if fnmatch.Compile(g).Match(tag) && !fnmatch.Compile(got).Match(tag) {
					t.Errorf("pattern %q drops %q, which %q matches", got, tag, g)
				}
			}
		}
	}
}
