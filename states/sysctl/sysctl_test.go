package sysctl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/state"
)

// netnsEnv marks the test process re-run inside a new network namespace,
// where net.* parameters are the namespace's own: setting them changes
// nothing outside it.
const netnsEnv = "BRINE_SYSCTL_TEST_NETNS"

// TestPresent re-runs TestPresentInNetns in a network namespace of its
// own (unshare -n), so that it sets real kernel values safely.
func TestPresent(t *testing.T) {
	if os.Getenv(netnsEnv) != "" {
		t.Skip("running inside the namespace: TestPresentInNetns is the test")
	}
	testenv.NeedRoot(t, "sysctl.present's test sets kernel values in a network namespace of its own: run it as root")
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("sysctl.present's test needs unshare (util-linux) to make a network namespace")
	}
	before, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "-n", os.Args[0], "-test.run=^TestPresentInNetns$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPresentInNetns") {
		t.Fatalf("in a network namespace: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); string(after) != string(before) {
		t.Fatalf("the host's net.ipv4.ip_forward changed from %q to %q", before, after)
	}
}

// TestPresentInNetns holds what Salt 3006.6 returned and wrote, run the
// same way (salt-call --local under unshare -n), twice, test mode first.
func TestPresentInNetns(t *testing.T) {
	if os.Getenv(netnsEnv) == "" {
		t.Skip("runs inside TestPresent's network namespace only")
	}
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.conf")
	if err := os.WriteFile(existing, []byte("# mine\nnet.ipv4.ip_forward = 0\nvm.x=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	newConf := filepath.Join(dir, "sub", "new.conf")
	reg := function.New()
	if err := reg.RegisterAll(Module(nil)); err != nil {
		t.Fatal(err)
	}
	sls := []map[string]any{
		{"name": "net.ipv4.ip_forward", "value": int64(1), "config": newConf},
		{"name": "net.ipv4.ip_forward", "value": int64(1), "config": existing},
		{"name": "net.ipv4.tcp_rmem", "value": "4096 87380   6291456", "config": existing},
		{"name": "net.ipv4.nope", "value": int64(1), "config": existing},
	}
	type want struct {
		result  any
		comment string
		changes map[string]any
	}
	runs := []struct {
		test  bool
		wants []want
	}{
		{true, []want{
			{nil, "Sysctl option net.ipv4.ip_forward set to be changed to 1", nil},
			{nil, "Sysctl option net.ipv4.ip_forward would be changed to 1", nil},
			{nil, "Sysctl option net.ipv4.tcp_rmem set to be changed to 4096 87380   6291456", nil},
			{nil, "Sysctl option net.ipv4.nope set to be changed to 1", nil},
		}},
		{false, []want{
			{true, "Updated sysctl value net.ipv4.ip_forward = 1", map[string]any{"net.ipv4.ip_forward": int64(1)}},
			{true, "Updated sysctl value net.ipv4.ip_forward = 1", map[string]any{"net.ipv4.ip_forward": int64(1)}},
			{true, "Updated sysctl value net.ipv4.tcp_rmem = 4096 87380   6291456",
				map[string]any{"net.ipv4.tcp_rmem": "4096 87380   6291456"}},
			{false, "Failed to set net.ipv4.nope to 1: sysctl net.ipv4.nope does not exist", nil},
		}},
		{false, []want{
			{true, "Sysctl value net.ipv4.ip_forward = 1 is already set", nil},
			{true, "Sysctl value net.ipv4.ip_forward = 1 is already set", nil},
			{true, "Sysctl value net.ipv4.tcp_rmem = 4096 87380   6291456 is already set", nil},
			{false, "Failed to set net.ipv4.nope to 1: sysctl net.ipv4.nope does not exist", nil},
		}},
		{true, []want{
			{true, "Sysctl value net.ipv4.ip_forward = 1 is already set", nil},
			{true, "Sysctl value net.ipv4.ip_forward = 1 is already set", nil},
			{true, "Sysctl value net.ipv4.tcp_rmem = 4096 87380   6291456 is already set", nil},
			{nil, "Sysctl option net.ipv4.nope would be changed to 1", nil},
		}},
	}
	for n, run := range runs {
		for i, kw := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test})
			out, err := reg.Call(ctx, "sysctl.present", nil, kw, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, w := out.(state.Result), run.wants[i]
			var res any
			if r.Result != nil {
				res = *r.Result
			}
			if res != w.result || r.Comment != w.comment || !(reflect.DeepEqual(r.Changes, w.changes) || len(r.Changes)+len(w.changes) == 0) {
				t.Errorf("run %d, %v: got %v %q %#v\nwant %v %q %#v", n+1, kw, res, r.Comment, r.Changes, w.result, w.comment, w.changes)
			}
		}
		if n == 0 {
			if _, err := os.Stat(newConf); err == nil {
				t.Errorf("test mode wrote %s", newConf)
			}
		}
	}
	for p, want := range map[string]string{
		existing:                        "# mine\nnet.ipv4.ip_forward = 1\nvm.x=1\nnet.ipv4.tcp_rmem = 4096 87380   6291456\nnet.ipv4.nope = 1\n",
		newConf:                         "#\n# Kernel sysctl configuration\n#\nnet.ipv4.ip_forward = 1\n",
		"/proc/sys/net/ipv4/ip_forward": "1\n",
		"/proc/sys/net/ipv4/tcp_rmem":   "4096\t87380\t6291456\n",
	} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", p, b, err, want)
		}
	}
}
