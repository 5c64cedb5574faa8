package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNoMasterExitsUnreachable: every client command gives up on a master
// that is not there within its timeout, saying which address and why,
// with exit status 3. `brine run` waits up to ten minutes for a job, but
// only connectTimeout (10 s) for the master.
func TestNoMasterExitsUnreachable(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens there
	conf := t.TempDir()
	cases := []struct {
		name  string
		args  []string
		limit time.Duration
	}{
		{"run", []string{"run", "test.ping", "--timeout", "1s"}, time.Second},
		{"run, default timeout", []string{"run", "test.ping"}, connectTimeout},
		{"exec", []string{"exec", "*", "test.ping"}, connectTimeout},
		{"jobs list", []string{"jobs", "list", "--timeout", "1s"}, time.Second},
		{"key list", []string{"key", "-L", "--timeout", "1s"}, time.Second},
		{"event send", []string{"event", "send", "myco/x", "--timeout", "1s"}, time.Second},
		{"event watch", []string{"event", "watch", "--timeout", "1s"}, time.Second},
		{"mine list", []string{"mine", "list", "--timeout", "1s"}, time.Second},
		{"reactor dlq", []string{"reactor", "dlq", "--timeout", "1s"}, time.Second},
		{"slack status", []string{"slack", "status", "--timeout", "1s"}, time.Second},
	}
	// In parallel: each waits out its timeout, doing nothing.
	var wg sync.WaitGroup
	for _, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(brineBin, append([]string{"-c", conf, "--master", addr}, tc.args...)...)
			cmd.Env = append(os.Environ(), "BRINE_KEY=test-key")
			start := time.Now()
			_, errs, code := runCmd(t, cmd)
			took := time.Since(start)
			// refused, or, when the machine is so loaded that the time
			// ran out before the first attempt was answered, timed out
			want := "brine: master " + addr + " not reachable: connection refused\n"
			if code != exitUnreachable || errs != want && errs != "brine: master "+addr+" not reachable: timed out\n" {
				t.Errorf("%s: exit %d, stderr %q; want exit 3 and %q", tc.name, code, errs, want)
			}
			if took < tc.limit-100*time.Millisecond || took > tc.limit+2*time.Second {
				t.Errorf("%s: gave up after %s, want after its timeout, %s", tc.name, took.Round(time.Millisecond), tc.limit)
			}
		}()
	}
	wg.Wait()
}

// TestPublishPortIsNotTheRequestPort: a client or an agent given the
// master's publish port says so, at once, instead of waiting out its
// timeout; an agent given a dead port says "connection refused" within a
// second or so.
func TestPublishPortIsNotTheRequestPort(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	start := time.Now()
	_, errs, code := m.run(nil, "run", "test.ping", "--master", m.pubAddr)
	want := "brine: master " + m.pubAddr + " not reachable: " + m.pubAddr + " is the master's publish port, not its request port\n"
	if code != exitUnreachable || errs != want {
		t.Errorf("run against the publish port: exit %d, stderr %q; want exit 3 and %q", code, errs, want)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("run against the publish port took %s", took)
	}

	// brine event watch reaches the request port, then the publish port.
	_, reqPort, _ := strings.Cut(m.reqAddr, ":")
	dead := freePort(t)
	for _, tc := range []struct {
		port  string
		want  string
		limit time.Duration
	}{
		{reqPort, m.reqAddr + " is the master's request port, not its publish port", 3 * time.Second},
		{fmt.Sprint(dead), "connection refused", 13 * time.Second},
	} {
		start := time.Now()
		_, errs, code := m.run(nil, "event", "watch", "--publish-port", tc.port)
		host, _, _ := strings.Cut(m.reqAddr, ":")
		want := "brine: master " + host + ":" + tc.port + " not reachable: " + tc.want + "\n"
		if code != exitUnreachable || errs != want {
			t.Errorf("watch --publish-port %s: exit %d, stderr %q; want exit 3 and %q", tc.port, code, errs, want)
		}
		if took := time.Since(start); took > tc.limit {
			t.Errorf("watch --publish-port %s took %s", tc.port, took)
		}
	}

	for _, tc := range []struct{ name, addr, want string }{
		{"publish port", m.pubAddr, m.pubAddr + " is the master's publish port, not its request port"},
		{"dead port", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAgent(t, &testMaster{reqAddr: tc.addr}, "lost", "127.0.0.1", "")
			start := time.Now()
			a.start()
			a.waitLog("master not reachable", 1)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("the agent said nothing for %s", took.Round(time.Millisecond))
			}
			line := ""
			for l := range strings.Lines(a.log.String()) {
				if strings.Contains(l, "master not reachable") {
					line = l
					break
				}
			}
			if !strings.Contains(line, tc.addr) || !strings.Contains(line, tc.want) {
				t.Errorf("agent log line %q, want the address and %q", line, tc.want)
			}
		})
	}
}
