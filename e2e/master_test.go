package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/internal/loopback"
	"github.com/brinehq/brine/internal/saltpeer"
	"github.com/brinehq/brine/internal/syncbuf"
)

// brineBin is the binary under test, built once by TestMain.
var brineBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "brine-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	brineBin = filepath.Join(dir, "brine")
	// Built as make build builds them (static, no build paths), brine-agent
	// beside brine where the built-in bootstrap looks for the VMs' agent:
	// the system tests run the binaries that ship, and make sizes' build
	// after them finds their packages compiled.
	for _, name := range []string{"brine", "brine-agent"} {
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, name), "../cmd/"+name)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", name, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	saltpeer.Cleanup()
	os.Exit(code)
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := loopback.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testMaster is a `brine master` process with its own config and data.
type testMaster struct {
	t       *testing.T
	confDir string
	dataDir string
	cmd     *exec.Cmd
	log     *syncbuf.Buffer
	reqAddr string
	pubAddr string
}

func newTestMaster(t *testing.T) *testMaster {
	t.Helper()
	root := t.TempDir()
	m := &testMaster{t: t, confDir: filepath.Join(root, "etc"), dataDir: filepath.Join(root, "data")}
	pub, req := freePort(t), freePort(t)
	m.reqAddr, m.pubAddr = fmt.Sprintf("127.0.0.1:%d", req), fmt.Sprintf("127.0.0.1:%d", pub)
	if err := os.MkdirAll(m.confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("id: test\ndata_dir: %s\npublish_port: %d\nret_port: %d\nlog_level: debug\nmax_event_size: 65536\n", m.dataDir, pub, req)
	if err := os.WriteFile(filepath.Join(m.confDir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *testMaster) start() {
	m.t.Helper()
	m.launch()
	c := m.client()
	c.Close()
}

// launch starts the master process without waiting for it to serve.
func (m *testMaster) launch() {
	m.t.Helper()
	m.log = new(syncbuf.Buffer)
	m.cmd = tied(exec.Command(brineBin, "master", "-c", m.confDir))
	m.cmd.Stderr = m.log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { m.stop(syscall.SIGKILL) })
}

func (m *testMaster) stop(sig syscall.Signal) {
	if m.cmd == nil || m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(sig)
	_ = m.cmd.Wait()
}

func (m *testMaster) key() []byte {
	m.t.Helper()
	key, err := gateway.LoadKey(filepath.Join(m.dataDir, "master.key"))
	if err != nil {
		m.t.Fatal(err)
	}
	return key
}

// client connects once the master is up (it creates its key on start).
func (m *testMaster) client() *gateway.Client {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(m.dataDir, "master.key")); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			c, err := gateway.Dial(ctx, m.reqAddr, m.key())
			cancel()
			if err == nil {
				return c
			}
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("master did not come up; log:\n%s", m.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run runs the brine CLI against m and returns stdout, stderr and exit code.
func (m *testMaster) run(env []string, args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.Command(brineBin, append([]string{"-c", m.confDir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(m.t, cmd)
}

// runCmd runs cmd and returns its stdout, stderr and exit code; a command
// that cannot be started fails the test.
func runCmd(t testing.TB, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatal(err)
	return "", "", -1
}

func TestEventSendAndWatch(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)

	watch := tied(exec.Command(brineBin, "-c", m.confDir, "event", "watch", "myco/*", "--count", "3", "--since", since))
	var wout, werr bytes.Buffer
	watch.Stdout, watch.Stderr = &wout, &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, args := range [][]string{
		{"myco/deploy/start", "app=web", "version=42"},
		{"other/tag", "x=1"},
		{"myco/deploy/done", `{"app": "web", "hosts": ["web1"], "note": "caf\u00e9"}`},
		{"myco/deploy/audit"},
	} {
		out, errs, code := m.run(nil, append([]string{"event", "send"}, args...)...)
		if code != 0 {
			t.Fatalf("send %v: exit %d: %s", args, code, errs)
		}
		id := strings.TrimSpace(out)
		if _, err := bus.IDTime(id); err != nil {
			t.Fatalf("send printed %q, not an event id", out)
		}
		ids = append(ids, id)
	}
	done := make(chan error, 1)
	go func() { done <- watch.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v: %s", err, werr.String())
		}
	case <-time.After(20 * time.Second):
		_ = watch.Process.Kill()
		t.Fatalf("watch did not see 3 events; got:\n%s", wout.String())
	}
	lines := strings.Split(strings.TrimSuffix(wout.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("watch printed %d lines:\n%s", len(lines), wout.String())
	}
	wantPrefix := []string{
		"myco/deploy/start\t{\"_stamp\": \"",
		"myco/deploy/done\t{\"_stamp\": \"",
		"myco/deploy/audit\t{\"_stamp\": \"",
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, wantPrefix[i]) {
			t.Errorf("line %d = %q, want prefix %q", i, l, wantPrefix[i])
		}
	}
	if !strings.HasSuffix(lines[0], `", "app": "web", "version": 42}`) || !strings.Contains(lines[1], `"hosts": ["web1"], "note": "caf\u00e9"`) {
		t.Errorf("payloads not in Salt's json.dumps form:\n%s", wout.String())
	}

	// --json prints envelopes; --since an id starts after it.
	out, errs, code := m.run(nil, "event", "watch", "myco/*", "--since", ids[0], "--count", "1", "--json")
	if code != 0 || !strings.Contains(out, `"id":"`+ids[2]+`"`) || !strings.Contains(out, `"tag":"myco/deploy/done"`) {
		t.Errorf("watch --since id --json: exit %d, %q %s", code, out, errs)
	}

	// --since all (or 0) replays from the oldest event kept; a duration
	// that points at now, or nonsense, is a usage error.
	for _, all := range []string{"all", "0"} {
		out, errs, code = m.run(nil, "event", "watch", "myco/*", "--since", all, "--count", "1", "--json")
		if code != 0 || !strings.Contains(out, `"id":"`+ids[0]+`"`) {
			t.Errorf("watch --since %s: exit %d, %q %s", all, code, out, errs)
		}
	}
	for _, bad := range []string{"0s", "-1h", "yesterday"} {
		if _, errs, code = m.run(nil, "event", "watch", "--since", bad); code != 2 || !strings.Contains(errs, "--since") {
			t.Errorf("watch --since %s: exit %d, want 2: %s", bad, code, errs)
		}
	}
}

func TestEventSendRefusals(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		msg  string
	}{
		{"reserved job tag", nil, []string{"event", "send", "salt/job/20261122/new", "fun=cmd.run"}, 1, `only the master publishes under "salt/job/"`},
		{"reserved brine tag", nil, []string{"event", "send", "brine/reactor/error"}, 1, "only the master publishes"},
		{"wrong key", []string{"BRINE_KEY=not-the-key"}, []string{"event", "send", "myco/x"}, 1, "wrong key"},
		// One rule for every command: a refused key is a failure (1), not
		// an unreachable master (3).
		{"wrong key, jobs list", []string{"BRINE_KEY=not-the-key"}, []string{"jobs", "list"}, 1, "wrong key"},
		{"wrong key, mine list", []string{"BRINE_KEY=not-the-key"}, []string{"mine", "list"}, 1, "wrong key"},
		{"wrong key, reactor list", []string{"BRINE_KEY=not-the-key"}, []string{"reactor", "list"}, 1, "wrong key"},
		{"wrong key, run", []string{"BRINE_KEY=not-the-key"}, []string{"run", "test.ping"}, 1, "wrong key"},
		{"unreachable, jobs list", nil, []string{"jobs", "list", "--master", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--timeout", "1s"}, 3, "not reachable: connection refused"},
		{"bad data", nil, []string{"event", "send", "myco/x", "[1,2]"}, 2, "neither a JSON/YAML mapping"},
		{"bad tag", nil, []string{"event", "send", "bad\x01tag"}, 2, "control character"},
		{"no tag", nil, []string{"event", "send"}, 2, "needs a TAG"},
		{"unknown flag", nil, []string{"event", "send", "x", "--nope"}, 2, "unknown flag"},
		{"unreachable", nil, []string{"event", "send", "myco/x", "--master", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--timeout", "1s"}, 3, "not reachable: connection refused"},
		{"oversize", nil, []string{"event", "send", "myco/x", "blob=" + strings.Repeat("x", 70000)}, 1, "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := m.run(tc.env, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.msg)
			}
			if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("error is not one line: %q", errs)
			}
		})
	}
}

// TestSIGKILLLosesNoAcknowledgedEvent kills the master while clients are
// publishing and checks, after a restart, that every acknowledged event is
// in the log.
func TestSIGKILLLosesNoAcknowledgedEvent(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(context.Background())
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := m.client()
			defer c.Close()
			for i := 0; ctx.Err() == nil; i++ {
				cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
				id, err := c.Publish(cctx, fmt.Sprintf("crash/%d/%d", w, i), map[string]any{"i": i})
				ccancel()
				if err != nil {
					return
				}
				mu.Lock()
				acked[id] = true
				n := len(acked)
				mu.Unlock()
				if n == 400 {
					m.stop(syscall.SIGKILL) // right after an acknowledgement
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	if len(acked) < 400 {
		t.Fatalf("only %d events acknowledged before the kill; master log:\n%s", len(acked), m.log)
	}

	m.start()
	c := m.client()
	defer c.Close()
	found := map[string]bool{}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	err := c.Watch(wctx, m.pubAddr, "crash/*", bus.Since{Time: time.Now().Add(-time.Hour)}, func(ev *bus.Event) error {
		found[ev.ID] = true
		for id := range acked {
			if !found[id] {
				return nil
			}
		}
		return errAllFound
	})
	if !errors.Is(err, errAllFound) {
		missing := 0
		for id := range acked {
			if !found[id] {
				missing++
			}
		}
		t.Fatalf("%d of %d acknowledged events missing after SIGKILL and restart (watch: %v)", missing, len(acked), err)
	}
}

var errAllFound = errors.New("all found")

func TestMasterRunsWithoutConfigAndStopsCleanly(t *testing.T) {
	dir := t.TempDir()
	cmd := tied(exec.Command(brineBin, "master", "-c", "/etc/brine", "--log-format", "json"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BRINE_DATA=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	started := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"msg":"master started"`) {
			started = true
			break
		}
	}
	if !started {
		_ = cmd.Process.Kill()
		t.Fatal("no 'master started' log line")
	}
	if _, err := os.Stat(filepath.Join(dir, "brine-data", "master.key")); err != nil {
		t.Errorf("key not created in ./brine-data: %v", err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("master exited with %v after SIGTERM", err)
		}
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("master did not stop within 15s of SIGTERM")
	}
}

func TestSIGHUPReloadsConfiguration(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	c := m.client()
	defer c.Close()
	events := make(chan *bus.Event, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = c.Watch(ctx, m.pubAddr, "brine/master/test/reload", bus.Since{Time: time.Now().Add(-time.Minute)}, func(ev *bus.Event) error {
			events <- ev
			return nil
		})
	}()
	conf := filepath.Join(m.confDir, "master")
	next := func() map[string]any {
		t.Helper()
		select {
		case ev := <-events:
			d, err := ev.DataMap()
			if err != nil {
				t.Fatal(err)
			}
			return d
		case <-time.After(10 * time.Second):
			t.Fatalf("no reload event; master log:\n%s", m.log)
		}
		return nil
	}

	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "level.conf"), []byte("log_level: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = m.cmd.Process.Signal(syscall.SIGHUP)
	if d := next(); d["success"] != true {
		t.Errorf("valid reload: %v", d)
	}

	orig, _ := os.ReadFile(conf)
	if err := os.WriteFile(conf, append(orig, []byte("ret_port: [\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = m.cmd.Process.Signal(syscall.SIGHUP)
	d := next()
	if d["success"] != false || !strings.Contains(fmt.Sprint(d["error"]), "master: line") {
		t.Errorf("broken reload: %v", d)
	}
	// The master keeps running on its previous configuration.
	if _, err := c.Publish(context.Background(), "myco/after-reload", nil); err != nil {
		t.Errorf("publish after a failed reload: %v", err)
	}
}

// TestUnknownSubcommand: a command group refuses a subcommand it does not
// have (exit 2) rather than printing its help with exit 0, and still shows
// its help when given none.
func TestUnknownSubcommand(t *testing.T) {
	for _, args := range [][]string{{"event", "fire", "x"}, {"reactor", "nosuch"}} {
		_, errs, code := runCmd(t, exec.Command(brineBin, args...))
		if code != 2 || !strings.Contains(errs, `unknown command "`+args[1]+`"`) {
			t.Errorf("brine %v: exit %d, %s", args, code, errs)
		}
	}
	out, _, code := runCmd(t, exec.Command(brineBin, "event"))
	if code != 0 || !strings.Contains(out, "send") {
		t.Errorf("brine event: exit %d, %s", code, out)
	}
}
