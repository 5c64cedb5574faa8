package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

// failoverBound is the longest an agent may take to be connected to
// another master once its master died: the goal of issue 21.
const failoverBound = 10 * time.Second

// twoMasters starts two independent masters (each its own bus, data and
// key store) holding the same master key, as masters serving the same
// agents do: the agent pins the master's key, so it trusts both. Both
// accept keys on sight (auto_accept), which stands for an operator who
// accepted the agent's key on each.
func twoMasters(t *testing.T) (*testMaster, *testMaster) {
	t.Helper()
	a, b := newTestMaster(t), newTestMaster(t)
	for name, m := range map[string]*testMaster{"master-a": a, "master-b": b} {
		writeFile(t, filepath.Join(m.confDir, "master.d", "failover.conf"), "id: "+name+"\nauto_accept: true\n")
	}
	a.start()
	key, err := os.ReadFile(filepath.Join(a.dataDir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dataDir, "master.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	return a, b
}

// masterList is the agent's `master:` value naming ms by address and
// port, Salt's master:port syntax.
func masterList(ms ...*testMaster) string {
	var q []string
	for _, m := range ms {
		q = append(q, "'"+m.reqAddr+"'")
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// endpoint is how the agent's log names m (the space ends the port).
func endpoint(m *testMaster) string { return "master=tcp://" + m.reqAddr + " " }

// waitLine waits until n lines of the agent's log hold every part, and
// returns how long that took.
func (a *testAgent) waitLine(n int, within time.Duration, parts ...string) time.Duration {
	a.t.Helper()
	start := time.Now()
	for {
		count := 0
		for line := range strings.SplitSeq(a.log.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				count++
			}
		}
		if count >= n {
			return time.Since(start)
		}
		select {
		case <-a.exited:
			a.t.Fatalf("agent %s exited (%v) before logging %q %d time(s):\n%s", a.id, a.err, parts, n, a.log)
		default:
		}
		if time.Since(start) > within {
			a.t.Fatalf("agent %s: %q not logged %d time(s) within %s:\n%s", a.id, parts, n, within, a.log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pingVia runs `brine exec ID test.ping` on m and wants the agent's True.
func pingVia(t *testing.T, m *testMaster, id, what string) {
	t.Helper()
	rets, errs, code := execJSON(t, m, id, "test.ping", "-t", "10")
	if code != 0 || rets[id] != true {
		t.Fatalf("%s: brine exec %s test.ping: exit %d, %v\n%s\nmaster log:\n%s", what, id, code, rets, errs, m.log)
	}
}

// TestAgentFailover runs two real masters and real agents: master_type
// failover moves an agent to the other master within 10 s of its master
// being killed or stopped (SIGSTOP: its connections stay open, only the
// liveness check notices), master_failback returns it to the first, and
// hot multi-master (master_type str) serves jobs from both masters while
// the agent's own events are stored by one.
func TestAgentFailover(t *testing.T) {
	ma, mb := twoMasters(t)

	t.Run("failover", func(t *testing.T) {
		ag := newTestAgent(t, ma, "fo01", masterList(ma, mb),
			"master_type: failover\nmaster_failback: True\nmaster_failback_interval: 1\n").start()
		ag.waitLine(1, 30*time.Second, logAccepted, endpoint(ma))
		pingVia(t, ma, "fo01", "connected to A")

		// (a) A is killed: its connections close, the agent moves to B.
		ma.stop(syscall.SIGKILL)
		took := ag.waitLine(1, 30*time.Second, logAccepted, endpoint(mb))
		t.Logf("SIGKILL of master A: agent connected to master B %v later", took.Round(time.Millisecond))
		if took > failoverBound {
			t.Errorf("failover after SIGKILL took %v, want at most %v", took, failoverBound)
		}
		ag.waitLine(1, time.Second, `msg="failing over to master"`, "from=tcp://"+ma.reqAddr+" ", "to=tcp://"+mb.reqAddr+" ")
		pingVia(t, mb, "fo01", "failed over to B")

		// master_failback: A back, the agent returns to it.
		ma.start()
		took = ag.waitLine(2, 30*time.Second, logAccepted, endpoint(ma))
		t.Logf("master A restarted: agent back on it %v later (master_failback_interval 1)", took.Round(time.Millisecond))
		ag.waitLine(1, time.Second, `msg="failing over to master"`, "from=tcp://"+mb.reqAddr+" ", "to=tcp://"+ma.reqAddr+" ", "master_failback")
		pingVia(t, ma, "fo01", "failed back to A")

		// (b) A is stopped, not killed: its kernel keeps the connection
		// open, and only the liveness check (master_alive_interval, 3 s
		// by default in failover mode) notices.
		if err := ma.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		cont := func() { _ = ma.cmd.Process.Signal(syscall.SIGCONT) }
		t.Cleanup(cont)
		took = ag.waitLine(2, 30*time.Second, logAccepted, endpoint(mb))
		t.Logf("SIGSTOP of master A: agent connected to master B %v later (master_alive_interval 3)", took.Round(time.Millisecond))
		if took > failoverBound {
			t.Errorf("failover after SIGSTOP took %v, want at most %v", took, failoverBound)
		}
		ag.waitLine(1, time.Second, `msg="failing over to master"`, "master_alive_interval")
		pingVia(t, mb, "fo01", "failed over to B after SIGSTOP")

		// A resumes: failback again.
		cont()
		ag.waitLine(3, 30*time.Second, logAccepted, endpoint(ma))
		pingVia(t, ma, "fo01", "failed back to A after SIGCONT")
		ag.stop()
	})

	t.Run("hot", func(t *testing.T) {
		t0 := time.Now()
		evA, evB := watchEvents(t, ma, t0), watchEvents(t, mb, t0)
		ag := newTestAgent(t, ma, "hot01", masterList(ma, mb), "").start()
		ag.waitLine(1, 30*time.Second, logAccepted, endpoint(ma))
		ag.waitLine(1, 30*time.Second, logAccepted, endpoint(mb))
		// Jobs from either master run and return to it.
		pingVia(t, ma, "hot01", "hot, via A")
		pingVia(t, mb, "hot01", "hot, via B")

		// The agent's own messages go to one master, the first of the
		// list: a job from B sends an event, which A stores, and B
		// gets the job's return.
		rets, errs, code := execJSON(t, mb, "hot01", "event.send", "test/failover/hot", `{"n": 1}`, "-t", "10")
		if code != 0 || rets["hot01"] != true {
			t.Fatalf("brine exec hot01 event.send via B: exit %d, %v\n%s", code, rets, errs)
		}
		evA.wait(t, "test/failover/hot on A", tagIs("test/failover/hot", map[string]any{"id": "hot01"}))
		evB.sync(t)
		evA.sync(t)
		// The start events go over the first connection up, which may
		// be B's if A answered later; the event sent once both were up
		// goes to A.
		for _, tag := range []string{"test/failover/hot", "salt/minion/hot01/start", "minion_start"} {
			onA, _ := evA.all(func(ev *bus.Event, d map[string]any) bool { return ev.Tag == tag && d["id"] == "hot01" })
			onB, _ := evB.all(func(ev *bus.Event, d map[string]any) bool { return ev.Tag == tag && d["id"] == "hot01" })
			if len(onA)+len(onB) != 1 || (tag == "test/failover/hot" && len(onA) != 1) {
				t.Errorf("%s stored %d time(s) by A and %d by B, want once\nA:\n%s\nB:\n%s", tag, len(onA), len(onB), evA.tags(), evB.tags())
			}
		}
		if evs, _ := evB.all(func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/hot01") && d["fun"] == "event.send"
		}); len(evs) != 1 {
			t.Errorf("the event.send job's return: %d on B, want 1\n%s", len(evs), evB.tags())
		}

		// A dies: B carries the agent's events from then on.
		ma.stop(syscall.SIGKILL)
		ag.waitLine(1, 30*time.Second, logLost, endpoint(ma))
		rets, errs, code = execJSON(t, mb, "hot01", "event.send", "test/failover/hot2", "-t", "10")
		if code != 0 || rets["hot01"] != true {
			t.Fatalf("brine exec hot01 event.send via B, A dead: exit %d, %v\n%s", code, rets, errs)
		}
		evB.wait(t, "test/failover/hot2 on B", tagIs("test/failover/hot2", map[string]any{"id": "hot01"}))
		if out := ag.log.String(); strings.Count(out, endpoint(mb)+"masters=") != 1 {
			t.Errorf("the connection to B was not kept while A died:\n%s", out)
		}
	})
}
