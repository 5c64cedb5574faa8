package ps

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/beacons"
)

// sleeper copies sleep under name in a temporary directory: a process no
// other has the name of.
func sleeper(t *testing.T, name string) string {
	t.Helper()
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep is needed (coreutils): %v", err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), name)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func check(t *testing.T, b beacons.Beacon) []map[string]any {
	t.Helper()
	evs, err := b.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	var out []map[string]any
	for _, e := range evs {
		if e.Tag != "" {
			t.Errorf("event %v: tag %q, want none (Salt's ps beacon sets none)", e, e.Tag)
		}
		out = append(out, e.Data)
	}
	return out
}

// TestStartedAndKilled starts a process with a unique name (one short
// enough for comm, one cut by it), and kills it: the running and stopped
// beacons fire while their condition holds.
func TestStartedAndKilled(t *testing.T) {
	id := fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	for _, name := range []string{"bps" + id, "brine-ps-beacon-test-" + id} {
		t.Run(name, func(t *testing.T) {
			bin := sleeper(t, name)
			running, err := New(beacons.Config{"processes": map[string]any{name: "running"}})
			if err != nil {
				t.Fatal(err)
			}
			stopped, err := New(beacons.Config{"processes": map[string]any{name: "stopped"}})
			if err != nil {
				t.Fatal(err)
			}
			isRunning := []map[string]any{{name: "Running"}}
			isStopped := []map[string]any{{name: "Stopped"}}
			expect := func(when string, r, s []map[string]any) {
				t.Helper()
				if got := check(t, running); !reflect.DeepEqual(got, r) {
					t.Errorf("%s: running beacon: %v, want %v", when, got, r)
				}
				if got := check(t, stopped); !reflect.DeepEqual(got, s) {
					t.Errorf("%s: stopped beacon: %v, want %v", when, got, s)
				}
			}
			expect("before the start", nil, isStopped)
			expect("before the start, again", nil, isStopped)

			cmd := exec.Command(bin, "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			// The child is the copy once it has exec'd.
			deadline := time.Now().Add(5 * time.Second)
			for !procNames(t)[name] && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			expect("running", isRunning, nil)
			expect("running, again", isRunning, nil)

			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			expect("killed", nil, isStopped)
		})
	}
}

// procNames is Names of /proc, failing the test on an error.
func procNames(t *testing.T) map[string]bool {
	t.Helper()
	n, err := Names("/proc")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSelfNamed finds this test's own process by its name (ps.test).
func TestSelfNamed(t *testing.T) {
	if self := filepath.Base(os.Args[0]); !procNames(t)[self] {
		t.Errorf("the test's own process (%s) is not listed", self)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "processes: missing"},
		{beacons.Config{"processes": []any{"sshd"}}, "processes: want a mapping"},
		{beacons.Config{"processes": map[string]any{}}, "processes: empty"},
		{beacons.Config{"processes": map[string]any{"sshd": "Running"}}, "processes: sshd: want running or stopped, got Running"},
		{beacons.Config{"processes": map[string]any{"sshd": nil}}, "processes: sshd: want running or stopped"},
		{beacons.Config{"processes": map[string]any{"": "running"}}, "an empty process name"},
		{beacons.Config{"processes": map[string]any{"sshd": "running"}, "sshd": "running"}, "sshd: unknown option"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
