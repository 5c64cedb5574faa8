package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway"
)

// clusterOf makes n masters (m1…mn) whose embedded NATS servers form one
// JetStream cluster over loopback routes, sharing one master key, each
// with extra in its configuration. They are not started.
func clusterOf(t *testing.T, n int, extra string) []*testMaster {
	t.Helper()
	var ms []*testMaster
	var routes []string
	for range n {
		ms = append(ms, newTestMaster(t))
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	}
	key := sharedKey(t, ms[0])
	for i, m := range ms {
		conf := fmt.Sprintf("id: m%d\nbus:\n  cluster:\n    name: brine-test\n    listen: %s\n    routes: [%s]\n%s",
			i+1, routes[i], strings.Join(routes, ", "), extra)
		writeFile(t, filepath.Join(m.confDir, "master.d", "cluster.conf"), conf)
		writeFile(t, filepath.Join(m.dataDir, "master.key"), key)
	}
	return ms
}

// sharedKey is m's master key, created as its first start would, for the
// others to hold too.
func sharedKey(t *testing.T, m *testMaster) string {
	t.Helper()
	if _, err := gateway.EnsureKey(filepath.Join(m.dataDir, "master.key")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(m.dataDir, "master.key"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// execBrine is a brine command with no -c of a test master; it is
// killed after a minute.
func execBrine(args ...string) *exec.Cmd {
	cmd := tied(exec.Command(brineBin, args...))
	cmd.WaitDelay = time.Second
	go func() {
		time.Sleep(time.Minute)
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	return cmd
}

// waitFor polls ok until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, what string, ok func() bool, logs ...*testMaster) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			for _, m := range logs {
				t.Logf("master %s log:\n%s", m.confDir, m.log)
			}
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startAll starts the masters together (each waits for a quorum of the
// cluster before it serves) and waits until every one answers.
func startAll(ms ...*testMaster) {
	for _, m := range ms {
		m.launch()
	}
	for _, m := range ms {
		m.client().Close()
	}
}

// clusterStatus is `brine run manage.cluster --json` on m.
func clusterStatus(t *testing.T, m *testMaster) map[string]any {
	t.Helper()
	out, errs, code := m.run(nil, "run", "manage.cluster", "--json")
	var res struct {
		Return map[string]any `json:"return"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("brine run manage.cluster: exit %d: %s%s", code, out, errs)
	}
	return res.Return
}

// waitMasters waits until m sees exactly the live masters want.
func waitMasters(t *testing.T, m *testMaster, within time.Duration, want ...string) {
	t.Helper()
	start := time.Now()
	for {
		st := clusterStatus(t, m)
		got := fmt.Sprint(st["masters"])
		if got == fmt.Sprint(want) {
			return
		}
		if time.Since(start) > within {
			t.Fatalf("masters seen by %s: %s, want %v (after %v)\n%v", m.confDir, got, want, within, st)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestMasterCluster runs three real masters whose embedded NATS servers
// form one R3 JetStream cluster, and real agents spread over them: a key
// accepted on one master is accepted on all; a job published on any
// master reaches every agent wherever it is connected and its returns
// come back; a reaction runs once for the cluster; an event re-sent to
// another master is stored once; a killed master's agents fail over and
// the others see it gone, then it rejoins; a master with another key or
// the id of a running one is refused.
func TestMasterCluster(t *testing.T) {
	roots := t.TempDir()
	marks := filepath.Join(t.TempDir(), "reactions")
	writeFile(t, filepath.Join(roots, "reactor", "once.sls"), fmt.Sprintf(`once:
  local.cmd.run:
    - tgt: a1
    - arg:
      - echo {{ data['n'] }} >> %s
`, marks))
	steps := filepath.Join(t.TempDir(), "steps")
	writeFile(t, filepath.Join(roots, "orch", "slow.sls"), fmt.Sprintf(`one:
  salt.function:
    - name: cmd.run
    - tgt: a1
    - arg:
      - echo one >> %[1]s
two:
  salt.function:
    - name: cmd.run
    - tgt: a2
    - arg:
      - sleep 4; echo two >> %[1]s
    - require:
      - salt: one
three:
  salt.function:
    - name: cmd.run
    - tgt: a1
    - arg:
      - echo three >> %[1]s
    - require:
      - salt: two
`, steps))
	ms := clusterOf(t, 3, fmt.Sprintf("file_roots:\n  base: [%s]\nreactor:\n  - 'test/cluster/once':\n    - salt://reactor/once.sls\n", roots))
	m1, m2, m3 := ms[0], ms[1], ms[2]
	start := time.Now()
	startAll(ms...)
	t.Logf("three masters up and clustered in %v", time.Since(start).Round(time.Millisecond))

	waitMasters(t, m1, 10*time.Second, "m1", "m2", "m3")
	st := clusterStatus(t, m1)
	if st["quorum"] != true || st["clustered"] != true || st["name"] != "brine-test" || st["leader"] == "" {
		t.Fatalf("cluster status: %v", st)
	}
	if peers, _ := st["peers"].([]any); len(peers) != 2 {
		t.Fatalf("event stream replicas besides the leader: %v", st["peers"])
	}

	// Agents on different masters; a3 fails over from m3 to m1.
	a1 := newTestAgent(t, m1, "a1", "127.0.0.1", "").start()
	a2 := newTestAgent(t, m2, "a2", "127.0.0.1", "").start()
	a3 := newTestAgent(t, m3, "a3", masterList(m3, m1), "master_type: failover\nmaster_alive_interval: 10\n").start()
	for _, a := range []*testAgent{a1, a2, a3} {
		a.waitLog(logWaiting, 1)
	}
	// Accepted on m1: accepted on every master.
	if out, errs, code := m1.run(nil, "key", "-A", "-y"); code != 0 {
		t.Fatalf("brine key -A on m1: %s%s", out, errs)
	}
	for _, a := range []*testAgent{a1, a2, a3} {
		a.waitLog(logAccepted, 1)
	}
	if l := keyList(t, m3); fmt.Sprint(l["minions"]) != "[a1 a2 a3]" {
		t.Fatalf("keys seen by m3: %v", l)
	}

	// A job from any master reaches the agents of every master.
	for _, m := range ms {
		pingAll(t, m, "[a1 a2 a3]")
	}
	if up := manageUp(t, m2); fmt.Sprint(up) != "[a1 a2 a3]" {
		t.Fatalf("manage.up on m2: %v", up)
	}

	// A reaction runs once for the cluster, whichever master stores its
	// event; an event re-sent to another master is stored once.
	evs := watchEvents(t, m2, start)
	for i, m := range ms {
		if out, errs, code := m.run(nil, "event", "send", "test/cluster/once", fmt.Sprintf(`{"n": %d}`, i)); code != 0 {
			t.Fatalf("event fire: %s%s", out, errs)
		}
	}
	waitFor(t, 30*time.Second, "three reactions", func() bool { return lines(marks) >= 3 }, ms...)
	time.Sleep(2 * time.Second)
	if got := lines(marks); got != 3 {
		t.Fatalf("three events on three masters ran %d reactions, want 3", got)
	}
	if out, errs, code := a2.call("event.send", "test/cluster/app", `{"from": "a2"}`); code != 0 {
		t.Fatalf("event.send: %s%s", out, errs)
	}
	evs.wait(t, "a2's event on m2's log", tagIs("test/cluster/app", nil))

	// An orchestration runs on m3 and m3 dies during its second step: one
	// of the others resumes it from that step once m3's leases expire.
	orch := execBrine("-c", m3.confDir, "run", "state.orchestrate", "orch.slow")
	if err := orch.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the orchestration's first step", func() bool { return lines(steps) >= 1 }, m3)
	time.Sleep(time.Second)

	// m3 killed: its agent fails over to m1, the others see it gone, a job
	// still reaches every agent.
	m3.stop(syscall.SIGKILL)
	killed := time.Now()
	defer orch.Wait()
	defer orch.Process.Kill()
	back := a3.waitLine(2, failoverBound, logAccepted)
	t.Logf("a3 accepted by m1 %v after m3's SIGKILL", back.Round(time.Millisecond))
	waitMasters(t, m1, 30*time.Second, "m1", "m2")
	t.Logf("m1 saw m3 gone %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
	pingAll(t, m2, "[a1 a2 a3]")
	t.Logf("jobs reach every agent %v after m3's death", time.Since(killed).Round(time.Millisecond))

	waitFor(t, 60*time.Second, "the orchestration resumed on another master", func() bool {
		b, _ := os.ReadFile(steps)
		return strings.Contains(string(b), "three")
	}, m1, m2)
	t.Logf("orchestration finished elsewhere %v after its master's death", time.Since(killed).Round(time.Millisecond))
	if b, _ := os.ReadFile(steps); strings.Count(string(b), "one") != 1 || strings.Count(string(b), "three") != 1 {
		t.Fatalf("steps run: %q, want one and three once (two at least once)", b)
	}
	if !strings.Contains(m1.log.String()+m2.log.String(), "resuming an orchestration its master did not finish") {
		t.Fatal("no master says it resumed the orchestration")
	}

	// m3 restarts on its data and rejoins.
	m3.launch()
	m3.client().Close()
	waitMasters(t, m1, 30*time.Second, "m1", "m2", "m3")

	// A fourth master with another key, or with a running master's id, is
	// refused with a clear error.
	m4 := clusterOf(t, 1, "")[0]
	conf := fmt.Sprintf("id: m4\nbus:\n  cluster:\n    name: brine-test\n    listen: 127.0.0.1:%d\n    routes: [%s]\n",
		freePort(t), routeOf(t, m1))
	writeFile(t, filepath.Join(m4.confDir, "master.d", "cluster.conf"), conf)
	out, errs, code := runCmd(t, execBrine("master", "-c", m4.confDir))
	if code == 0 || !strings.Contains(errs, "is not the one the masters of this bus use") {
		t.Fatalf("a master with another key: exit %d: %s%s", code, out, errs)
	}
	writeFile(t, filepath.Join(m4.dataDir, "master.key"), sharedKey(t, m1))
	writeFile(t, filepath.Join(m4.confDir, "master.d", "cluster.conf"), strings.Replace(conf, "id: m4", "id: m2", 1))
	out, errs, code = runCmd(t, execBrine("master", "-c", m4.confDir))
	if code == 0 || !strings.Contains(errs, `another master with id "m2" is running`) {
		t.Fatalf("a master with a running master's id: exit %d: %s%s", code, out, errs)
	}
}

// pingAll runs `brine exec '*' test.ping` on m and wants the answers of
// want. An agent that is switching masters is between connections for a
// moment, so a miss is published again, twice at most.
func pingAll(t *testing.T, m *testMaster, want string) {
	t.Helper()
	rets, errs, code := execJSON(t, m, "*", "test.ping", "-t", "15")
	for try := 0; try < 2 && code != 0; try++ {
		time.Sleep(time.Second)
		rets, errs, code = execJSON(t, m, "*", "test.ping", "-t", "15")
	}
	if code != 0 || keysOf(rets) != want {
		t.Fatalf("brine exec '*' test.ping via %s: exit %d: %v\n%s\nlog:\n%s", m.confDir, code, rets, errs, m.log)
	}
}

// routeOf is the cluster route address in m's configuration.
func routeOf(t *testing.T, m *testMaster) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.confDir, "master.d", "cluster.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "listen: "); ok {
			return v
		}
	}
	t.Fatal("no listen in cluster.conf")
	return ""
}

func lines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return len(slices.DeleteFunc(strings.Split(string(b), "\n"), func(s string) bool { return s == "" }))
}
