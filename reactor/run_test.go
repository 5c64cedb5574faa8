package reactor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/reactor"
	"github.com/brinehq/brine/reactor/kvdlq"
)

func openBus(t *testing.T, dir string) *natsbus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: dir})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	return b
}

// recorder keeps every event of the bus since it started, in log order.
type recorder struct {
	mu     sync.Mutex
	events []*bus.Event
}

func record(t *testing.T, b bus.Bus) *recorder {
	t.Helper()
	rec := &recorder{}
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Since: bus.Since{AfterSeq: 0, Time: time.Now().Add(-time.Minute)}},
		func(ev *bus.Event) {
			rec.mu.Lock()
			rec.events = append(rec.events, ev)
			rec.mu.Unlock()
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return rec
}

// matching returns the recorded events whose tag matches the glob.
func (rec *recorder) matching(glob string) []*bus.Event {
	g := fnmatch.Compile(glob)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []*bus.Event
	for _, ev := range rec.events {
		if g.Match(ev.Tag) {
			out = append(out, ev)
		}
	}
	return out
}

func (rec *recorder) waitFor(t *testing.T, glob string, n int) []*bus.Event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := rec.matching(glob)
		if len(evs) >= n {
			return evs
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d events %s, got %d", n, glob, len(evs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func data(t *testing.T, ev *bus.Event) map[string]any {
	t.Helper()
	m, err := ev.DataMap()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func publish(t *testing.T, b bus.Bus, tag string, d map[string]any) *bus.Event {
	t.Helper()
	ev, err := bus.NewEvent(tag, d, bus.Origin{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "reactor", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// start runs r on b until the test ends or stop is called.
func start(t *testing.T, r *reactor.Reactor, b bus.Bus, dlq reactor.DeadLetters) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, b, dlq) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestRunJobsEventsAndErrors(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	dir := t.TempDir()
	good := writeFile(t, dir, "good.sls", `
echo:
  runner.test.arg:
    - arg: [{{ data['id'] }}]
    - kwarg: {n: {{ data['n'] }}}
fire:
  runner.event.send:
    - tag: myco/forwarded/{{ data['id'] }}
    - data: {orig: {{ tag }}}
`)
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{
		{Glob: "myco/start/*", Files: []string{good, fixture(t, "broken_yaml.sls"), fixture(t, "cmd_alias.sls")}},
	}}, function.NewWithBuiltins())
	start(t, r, b, nil)
	ev := publish(t, b, "myco/start/web1", map[string]any{"id": "web1", "n": 7})

	rets := rec.waitFor(t, "salt/run/*/ret", 2)
	news := rec.matching("salt/run/*/new")
	if len(news) != 2 || len(rets) != 2 {
		t.Fatalf("%d new and %d ret events, want 2 each", len(news), len(rets))
	}
	byReaction := map[string]map[string]any{}
	for _, ret := range rets {
		d := data(t, ret)
		jid, _ := d["jid"].(string)
		if len(jid) != 20 || !jobs.IsJID(jid) || ret.Tag != "salt/run/"+jid+"/ret" {
			t.Errorf("ret %s: jid %v", ret.Tag, d["jid"])
		}
		if d["user"] != "Reactor" || d["success"] != true || d["cause"] != ev.ID || d["attempts"] != int64(1) {
			t.Errorf("ret %s: %v", ret.Tag, d)
		}
		if _, ok := d["duration"].(float64); !ok {
			t.Errorf("ret %s: duration %v", ret.Tag, d["duration"])
		}
		if ret.Cause != ev.ID || ret.Depth != 1 {
			t.Errorf("ret %s: cause %s depth %d", ret.Tag, ret.Cause, ret.Depth)
		}
		byReaction[d["reaction"].(string)] = d
	}
	echo := byReaction["echo"]
	if echo["fun"] != "runner.test.arg" {
		t.Errorf("echo fun %v", echo["fun"])
	}
	wantRet := `{"args":["web1"],"kwargs":{"n":7}}`
	if got, _ := json.Marshal(echo["return"]); string(got) != wantRet {
		t.Errorf("echo return %s, want %s", got, wantRet)
	}
	if got, _ := json.Marshal(echo["fun_args"]); string(got) != `["web1",{"n":7}]` {
		t.Errorf("echo fun_args %s", got)
	}
	fwd := rec.waitFor(t, "myco/forwarded/web1", 1)[0]
	if fwd.Cause != ev.ID || fwd.Depth != 1 || data(t, fwd)["orig"] != "myco/start/web1" {
		t.Errorf("event.send fired %+v", fwd)
	}

	// The broken file and the local reaction are reported on the bus, and did
	// not stop the good file.
	errs := rec.waitFor(t, reactor.TagError, 2)
	stages := map[string]map[string]any{}
	for _, e := range errs {
		d := data(t, e)
		stages[d["stage"].(string)] = d
		if d["tag"] != "myco/start/web1" || d["event"] != ev.ID || e.Cause != ev.ID {
			t.Errorf("error event %v", d)
		}
	}
	if y := stages["yaml"]; y == nil || y["file"] != fixture(t, "broken_yaml.sls") || y["line"] != int64(4) {
		t.Errorf("yaml error event %v", y)
	}
	if run := stages["run"]; run == nil || run["id"] != "highstate_new_minion" ||
		!strings.Contains(run["message"].(string), "no executor for local reactions") {
		t.Errorf("run error event %v", run)
	}
	// Counters move when Publish returns, which may be after subscribers saw the event.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s := r.Stats().Snapshot()
		if s["succeeded"] == 2 && s["errors"] == 2 && s["events"] == 1 && s["failed"] == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %v", s)
		}
	}
}

// TestRunAtLeastOnce closes the bus under the reactor in the middle of a
// burst, so what was in flight is never acknowledged, restarts both on the
// same data, and checks that every event was reacted to.
func TestRunAtLeastOnce(t *testing.T) {
	const n = 400
	dir := t.TempDir()
	b1 := openBus(t, dir)
	var (
		mu   sync.Mutex
		seen = map[int64]int{}
	)
	reg := function.NewWithBuiltins()
	if err := reg.Register(function.Func{
		Name:   "test.record",
		Params: []function.Param{{Name: "n", Kind: function.Int, Required: true}},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			time.Sleep(time.Millisecond)
			mu.Lock()
			seen[in.Int("n")]++
			mu.Unlock()
			return true, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "rec.sls", "rec:\n  runner.test.record:\n    - n: {{ data['n'] }}\n")
	// A crashed master's unacknowledged events come back after AckWait.
	cfg := reactor.Config{Workers: 4, MaxInFlight: 16, AckWait: 2 * time.Second, Mapping: []reactor.MapEntry{{Glob: "burst/*", Files: []string{file}}}}
	for i := range n {
		publish(t, b1, fmt.Sprintf("burst/%d", i), map[string]any{"n": i})
	}
	stop := start(t, reactor.New(cfg, reg), b1, nil)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	for count() < n/4 {
		time.Sleep(time.Millisecond)
	}
	// Crash: the bus goes away under the running reactor, nothing in
	// flight is acknowledged or handed back.
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	stop()
	if c := count(); c >= n {
		t.Fatalf("all %d reacted before the stop; the test proves nothing", c)
	}

	b2 := openBus(t, dir)
	defer b2.Close()
	start(t, reactor.New(cfg, reg), b2, nil)
	deadline := time.Now().Add(60 * time.Second)
	for count() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range int64(n) {
		if seen[i] == 0 {
			t.Errorf("event %d lost", i)
		}
	}
}

func TestRunLoopProtection(t *testing.T) {
	tests := []struct {
		name    string
		glob    string
		file    string
		trigger string
		loops   int // chains cut
	}{
		{name: "reaction fires its own trigger", glob: "loop/*",
			file: "again:\n  runner.event.send:\n    - tag: loop/again\n", trigger: "loop/start", loops: 1},
		{name: "two reactions on salt/run/*/new run each other's jobs", glob: "salt/run/*/new",
			// kick's job starts two chains (each reaction reacts to it).
			file: "audit:\n  runner.test.arg:\n    - arg: [{{ data['jid'] }}]\n", trigger: "", loops: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const maxDepth = 4
			b := openBus(t, t.TempDir())
			defer b.Close()
			rec := record(t, b)
			file := writeFile(t, t.TempDir(), "loop.sls", tt.file)
			kick := writeFile(t, t.TempDir(), "kick.sls", "kick:\n  runner.test.ping: []\n")
			mapping := []reactor.MapEntry{{Glob: tt.glob, Files: []string{file}}, {Glob: "kick", Files: []string{kick}}}
			if tt.trigger == "" {
				// A reaction never reacts to its own job (TestRunOwnJob):
				// the chain needs a second one, which reacts to the
				// first's job and whose job the first reacts to.
				mapping = append(mapping, reactor.MapEntry{Glob: "salt/run/*/new",
					Files: []string{writeFile(t, t.TempDir(), "second.sls", "second:\n  runner.test.ping: []\n")}})
			}
			r := reactor.New(reactor.Config{MaxDepth: maxDepth, Mapping: mapping}, function.NewWithBuiltins())
			start(t, r, b, nil)
			trigger := tt.trigger
			if trigger == "" {
				trigger = "kick" // its job's salt/run/<jid>/new starts the chain
			}
			publish(t, b, trigger, nil)
			loop := rec.waitFor(t, reactor.TagLoop, tt.loops)
			time.Sleep(300 * time.Millisecond) // a runaway chain would go on
			if loops := rec.matching(reactor.TagLoop); len(loops) != tt.loops {
				t.Fatalf("%d loop events, want %d", len(loops), tt.loops)
			}
			d := data(t, loop[0])
			if d["depth"] != int64(maxDepth+1) || d["max_depth"] != int64(maxDepth) {
				t.Errorf("loop event %v", d)
			}
			rets := rec.matching("salt/run/*/ret")
			for _, ret := range rets {
				if ret.Depth > maxDepth+1 {
					t.Errorf("job at depth %d past max_depth %d", ret.Depth, maxDepth)
				}
			}
			if got := r.Stats().LoopsCut.Load(); got != uint64(tt.loops) {
				t.Errorf("loops cut %d", got)
			}
		})
	}
}

// TestRunOwnJob checks that a reaction to job events does not react to
// the job it started itself: an audit of every job runs once per job.
func TestRunOwnJob(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	audit := writeFile(t, t.TempDir(), "audit.sls", "audit:\n  runner.test.arg:\n    - arg: [{{ data['jid'] }}]\n")
	kick := writeFile(t, t.TempDir(), "kick.sls", "kick:\n  runner.test.ping: []\n")
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{
		{Glob: "salt/run/*/new", Files: []string{audit}}, {Glob: "kick", Files: []string{kick}},
	}}, function.NewWithBuiltins())
	start(t, r, b, nil)
	publish(t, b, "kick", nil)
	rec.waitFor(t, "salt/run/*/ret", 2)
	time.Sleep(500 * time.Millisecond) // a runaway chain would go on
	if n := len(rec.matching("salt/run/*/new")); n != 2 {
		t.Errorf("%d jobs, want 2: kick's and one audit of it", n)
	}
	if n := len(rec.matching(reactor.TagLoop)); n != 0 {
		t.Errorf("%d loop notices, want none", n)
	}
}

func TestRunRequisites(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "req", Files: []string{fixture(t, "requisites.sls")}}}},
		function.NewWithBuiltins())
	start(t, r, b, nil)
	publish(t, b, "req", nil)
	skipped := rec.waitFor(t, reactor.TagSkipped, 2)
	rets := rec.waitFor(t, "salt/run/*/ret", 4)
	time.Sleep(100 * time.Millisecond)
	if n := len(rec.matching("salt/run/*/ret")); n != 4 {
		t.Fatalf("%d jobs ran, want 4 (first, broken, after_first, cleanup_on_failure)", n)
	}
	success := map[string]bool{}
	for _, ret := range rets {
		d := data(t, ret)
		success[d["reaction"].(string)] = d["success"].(bool)
	}
	want := map[string]bool{"first": true, "broken": false, "after_first": true, "cleanup_on_failure": true}
	for id, ok := range want {
		if got, ran := success[id]; !ran || got != ok {
			t.Errorf("%s: ran %v success %v, want success %v", id, ran, got, ok)
		}
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		d := data(t, s)
		reasons[d["id"].(string)] = d["reason"].(string)
	}
	if !strings.Contains(reasons["after_broken"], "require: runner: broken failed") ||
		!strings.Contains(reasons["not_needed"], "onfail: no requisite failed") {
		t.Errorf("skip reasons %v", reasons)
	}
	// after_first started only after first returned.
	var firstRet, afterNew uint64
	for _, ev := range rec.matching("salt/run/*") {
		d := data(t, ev)
		switch {
		case d["reaction"] == "first" && strings.HasSuffix(ev.Tag, "/ret"):
			firstRet = ev.Seq
		case d["reaction"] == "after_first" && strings.HasSuffix(ev.Tag, "/new"):
			afterNew = ev.Seq
		}
	}
	if firstRet == 0 || afterNew < firstRet {
		t.Errorf("after_first new at seq %d, first ret at %d", afterNew, firstRet)
	}
}

func TestRunRetryDeadLetterRedrive(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	kv, err := b.Bucket(context.Background(), kvdlq.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	dlq := kvdlq.New(kv)
	var healthy atomic.Bool
	var calls, lastTTL atomic.Int64
	reg := function.NewWithBuiltins()
	if err := reg.Register(function.Func{
		Name:   "ddns.add_host",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, {Name: "ttl", Kind: function.Int}},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			calls.Add(1)
			lastTTL.Store(in.Int("ttl"))
			if !healthy.Load() {
				return nil, errors.New("connection refused")
			}
			return map[string]any{"added": in.String("name"), "ttl": in.Int("ttl")}, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "dns.sls", `
add_dns:
  runner.ddns.add_host:
    - name: {{ data['name'] }}
    - ttl: 300
    - retry: {attempts: 3, interval: 10ms, max_interval: 40ms}
`)
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "salt/cloud/*/created", Files: []string{file}}}}, reg)
	start(t, r, b, dlq)
	ev := publish(t, b, "salt/cloud/web1/created", map[string]any{"name": "web1"})

	ret := data(t, rec.waitFor(t, "salt/run/*/ret", 1)[0])
	if ret["success"] != false || ret["attempts"] != int64(3) || !strings.Contains(ret["return"].(string), "connection refused") {
		t.Fatalf("ret %v", ret)
	}
	if calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", calls.Load())
	}
	errEv := data(t, rec.waitFor(t, reactor.TagError, 1)[0])
	if errEv["stage"] != "run" || errEv["id"] != "add_dns" || errEv["line"] != int64(3) {
		t.Errorf("error event %v", errEv)
	}
	var list []*reactor.DeadLetter
	for deadline := time.Now().Add(10 * time.Second); len(list) == 0 && time.Now().Before(deadline); {
		if list, err = r.DeadLetters(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(list) != 1 || list[0].Attempts != 3 || list[0].Event.ID != ev.ID || list[0].Reaction.Kwargs["ttl"] != int64(300) {
		t.Fatalf("dead letters %+v", list)
	}
	id := list[0].ID

	// Still failing: redrive keeps it, with the attempts added up.
	if res, err := r.Redrive(context.Background(), id, false); err != nil || res.Status == reactor.Succeeded || res.From != reactor.FromFiles {
		t.Fatalf("redrive while failing: %v %v", res.Status, err)
	}
	if dl, err := dlq.Get(context.Background(), id); err != nil || dl.Attempts != 4 {
		t.Fatalf("after failed redrive: %+v %v", dl, err)
	}

	// The file is fixed (ttl 600): redrive renders it again, unless told
	// to replay the recorded call.
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(file), "dns.sls", strings.Replace(string(src), "ttl: 300", "ttl: 600", 1))
	if res, _ := r.Redrive(context.Background(), id, true); res.From != reactor.AsRecorded || lastTTL.Load() != 300 {
		t.Errorf("as-recorded redrive ran ttl %d from %q, want the recorded 300", lastTTL.Load(), res.From)
	}
	healthy.Store(true)
	res, err := r.Redrive(context.Background(), id, false)
	if err != nil || res.Status != reactor.Succeeded || res.From != reactor.FromFiles {
		t.Fatalf("redrive: %v %v from %q", res.Status, err, res.From)
	}
	if ret, _ := res.Return.(map[string]any); ret["ttl"] != int64(600) {
		t.Errorf("redrive ran %v, want the fixed file's ttl 600", res.Return)
	}
	if list, _ := r.DeadLetters(context.Background()); len(list) != 0 {
		t.Fatalf("still dead-lettered: %+v", list)
	}
	rets := rec.waitFor(t, "salt/run/*/ret", 3)
	last := rets[len(rets)-1]
	if d := data(t, last); d["success"] != true || last.Cause != ev.ID || d["cause"] != ev.ID {
		t.Errorf("redriven ret %v cause %s", d, last.Cause)
	}
	if _, err := r.Redrive(context.Background(), id, false); !errors.Is(err, reactor.ErrNotFound) {
		t.Errorf("redrive of a removed letter: %v", err)
	}
}

func TestMain(m *testing.M) {
	// Reactions fail on purpose here; their log lines are noise.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

func TestRunReloadChangesWhatIsConsumed(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	file := writeFile(t, t.TempDir(), "r.sls", "echo:\n  runner.test.arg:\n    - arg: [{{ tag }}]\n")
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "first/*", Files: []string{file}}}}, function.NewWithBuiltins())
	start(t, r, b, nil)
	publish(t, b, "first/1", nil)
	rec.waitFor(t, "salt/run/*/ret", 1)
	cfg := r.Config()
	cfg.Mapping = []reactor.MapEntry{{Glob: "second/*", Files: []string{file}}}
	if err := r.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	publish(t, b, "second/1", nil)
	publish(t, b, "first/2", nil)
	rec.waitFor(t, "salt/run/*/ret", 2)
	time.Sleep(200 * time.Millisecond)
	rets := rec.matching("salt/run/*/ret")
	var got []string
	for _, ret := range rets {
		got = append(got, data(t, ret)["return"].(map[string]any)["args"].([]any)[0].(string))
	}
	if strings.Join(got, ",") != "first/1,second/1" {
		t.Fatalf("reacted to %v, want first/1 then second/1 (first/2 is unmapped now)", got)
	}
}

// TestRunWorkersBoundFunctions checks the pool: never more functions at once
// than workers, and every event still reacted to (back-pressure, no drop).
func TestRunWorkersBoundFunctions(t *testing.T) {
	const workers, n = 3, 40
	b := openBus(t, t.TempDir())
	defer b.Close()
	var running, peak, done atomic.Int64
	reg := function.NewWithBuiltins()
	if err := reg.Register(function.Func{
		Name: "test.busy",
		Run: func(ctx context.Context, _ *function.Input) (any, error) {
			now := running.Add(1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			done.Add(1)
			return true, nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "busy.sls", "busy:\n  runner.test.busy: []\n")
	r := reactor.New(reactor.Config{Workers: workers, MaxInFlight: 8, Mapping: []reactor.MapEntry{{Glob: "busy/*", Files: []string{file}}}}, reg)
	start(t, r, b, nil)
	for i := range n {
		publish(t, b, fmt.Sprintf("busy/%d", i), nil)
	}
	for deadline := time.Now().Add(30 * time.Second); done.Load() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d reacted", done.Load(), n)
		}
	}
	if p := peak.Load(); p > workers || p < 2 {
		t.Errorf("peak concurrency %d, want 2..%d", p, workers)
	}
}

// TestRunHookCausedJobUser checks that a reaction to a webhook runs as the
// hook's user, hook:<path>, as Salt's salt-api jobs do.
func TestRunHookCausedJobUser(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	file := writeFile(t, t.TempDir(), "hook.sls", "ping:\n  runner.test.ping: []\n")
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "salt/netapi/hook/*", Files: []string{file}}}}, function.NewWithBuiltins())
	start(t, r, b, nil)
	publish(t, b, "salt/netapi/hook/ci/build", map[string]any{"body": "{}"})
	for _, ev := range append(rec.waitFor(t, "salt/run/*/ret", 1), rec.matching("salt/run/*/new")...) {
		if d := data(t, ev); d["user"] != "hook:ci/build" {
			t.Errorf("%s: user %v, want hook:ci/build", ev.Tag, d["user"])
		}
	}
}
