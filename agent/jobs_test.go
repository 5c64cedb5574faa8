package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/agent/grains"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/wire"
)

// testAgent is an agent with its configuration, keys and cache in a
// temporary directory, connected to nothing.
func testAgent(t *testing.T, dir string) *Agent {
	t.Helper()
	conf := "id: tester\npki_dir: pki\ncachedir: cache\nmax_return_size: 2048\n"
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, Options{Version: "test", Grains: grains.Collector{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// returns decodes the job returns queued in a's outbox.
func returns(t *testing.T, a *Agent) []wire.Return {
	t.Helper()
	items, _, errs := a.outbox.Pending(1000)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var out []wire.Return
	for _, it := range items {
		if it.Kind != "return" {
			continue
		}
		var r wire.Return
		if err := json.Unmarshal(it.Body, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func waitReturns(t *testing.T, a *Agent, n int) []wire.Return {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r := returns(t, a); len(r) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d returns queued, want %d", len(returns(t, a)), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExecuteReturnsInSaltsShape(t *testing.T) {
	a := testAgent(t, t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		job     wire.Job
		ret     string
		retcode int
		success bool
	}{
		{wire.Job{JID: "1", Fun: "test.ping"}, "true", 0, true},
		{wire.Job{JID: "2", Fun: "nope.nope"}, `"'nope.nope' is not available."`, 1, false},
		{wire.Job{JID: "3", Fun: "test.echo", Arg: jobs.PackArgs(nil, map[string]any{"bogus": 1})}, "", 1, false},
		{wire.Job{JID: "4", Fun: "cmd.run", Arg: []any{"echo hi; exit 7"}}, `"hi"`, 7, false},
		{wire.Job{JID: "5", Fun: "test.sleep", Arg: []any{int64(5)}, KillAfter: 0.2}, "", 1, false},
		{wire.Job{JID: "6", Fun: "cmd.run", Arg: []any{"head -c 5000 /dev/zero | tr '\\0' x"}}, "", 0, true},
	} {
		r := a.execute(ctx, tc.job)
		got, _ := json.Marshal(r.Return)
		if tc.ret != "" && string(got) != tc.ret || r.Retcode != tc.retcode || r.Success != tc.success || r.JID != tc.job.JID {
			t.Errorf("%s: return %s retcode %d success %v, want %s %d %v", tc.job.Fun, got, r.Retcode, r.Success, tc.ret, tc.retcode, tc.success)
		}
		switch tc.job.JID {
		case "3":
			if !strings.HasPrefix(string(got), `"Passed invalid arguments to test.echo`) {
				t.Errorf("wrong argument: %s", got)
			}
		case "5":
			if !strings.Contains(string(got), "timeout of 0.2s") {
				t.Errorf("a function that hangs: %s", got)
			}
		case "6":
			if len(got) > 2048 || !strings.Contains(string(got), "return truncated") {
				t.Errorf("an oversized return is cut with a note: %d bytes, %.80s…", len(got), got)
			}
		}
	}
}

func TestJobsRunOnceAndSurviveAKill(t *testing.T) {
	dir := t.TempDir()
	a := testAgent(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	job := wire.Job{JID: "20261124000000000001", Fun: "test.ping"}
	a.jobs.start(ctx, job, "")
	waitReturns(t, a, 1)
	a.jobs.start(ctx, job, "") // published again: recognised
	time.Sleep(100 * time.Millisecond)
	if n := len(returns(t, a)); n != 1 {
		t.Errorf("%d returns after a republished jid, want 1", n)
	}

	// kill_job ends a running job, which reports it.
	long := wire.Job{JID: "20261124000000000002", Fun: "test.sleep", Arg: []any{int64(30)}}
	a.jobs.start(ctx, long, "")
	if len(a.jobs.Running()) != 1 || a.jobs.state(long.JID).Running != true {
		t.Fatalf("running: %v", a.jobs.Running())
	}
	if !a.jobs.Signal(long.JID, true) || a.jobs.Signal("nosuchjid", true) {
		t.Error("Signal: want true for the running job, false for another")
	}
	rs := waitReturns(t, a, 2)
	if rs[1].JID != long.JID || rs[1].Success || !strings.Contains(rs[1].Return.(string), "killed") {
		t.Errorf("killed job's return: %+v", rs[1])
	}
	if st := a.jobs.state(long.JID); st.Running || !st.Done {
		t.Errorf("state after the kill: %+v", st)
	}

	// A job left in proc/ by a killed agent gets an interrupted return at
	// the next start, once; one whose return was queued gets nothing more.
	orphan := wire.Job{JID: "20261124000000000003", Fun: "cmd.run", Arg: []any{"sleep 100"}}
	b, _ := json.Marshal(orphan)
	if err := os.WriteFile(filepath.Join(dir, "cache", procDir, orphan.JID), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cache", procDir, job.JID), b, 0o600); err != nil {
		t.Fatal(err)
	}
	a2 := testAgent(t, dir)
	if err := a2.jobs.recover(); err != nil {
		t.Fatal(err)
	}
	rs = returns(t, a2)
	if len(rs) != 3 || rs[2].JID != orphan.JID || rs[2].Success || !strings.Contains(rs[2].Return.(string), "restarted") ||
		rs[2].Fun != "cmd.run" {
		t.Errorf("after recovery: %+v", rs)
	}
	if err := a2.jobs.recover(); err != nil {
		t.Fatal(err)
	}
	if n := len(returns(t, a2)); n != 3 {
		t.Errorf("a second recovery queued more returns: %d", n)
	}
	a2.jobs.start(ctx, orphan, "")
	time.Sleep(100 * time.Millisecond)
	if n := len(returns(t, a2)); n != 3 || len(a2.jobs.Running()) != 0 {
		t.Errorf("a recovered jid published again ran again")
	}
}
