package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/internal/syncbuf"
)

// cloudSetup points m's config directory at a fresh vCenter simulator, run
// by `brine cloud simulator` in a process of its own (govmomi's simulator
// has data races of its own that the race detector would report here).
func cloudSetup(t *testing.T, m *testMaster, dhcp bool) {
	t.Helper()
	args := []string{"cloud", "simulator", "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--json"}
	if !dhcp {
		args = append(args, "--no-dhcp")
	}
	sim := tied(exec.Command(brineBin, args...))
	stdout, err := sim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var simErr syncbuf.Buffer
	sim.Stderr = &simErr
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sim.Process.Signal(os.Interrupt)
		_ = sim.Wait()
	})
	var info struct{ URL, User string }
	if err := json.NewDecoder(stdout).Decode(&info); err != nil {
		t.Fatalf("brine cloud simulator: %v: %s", err, simErr.String())
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(m.confDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cloud.providers", fmt.Sprintf("vcsim:\n  driver: vmware\n  url: %s\n  user: %s\n  password: sdb://osenv/TEST_VCSIM_PASSWORD\n  verify_ssl: False\n", info.URL, info.User))
	write("cloud.profiles", "small:\n  provider: vcsim\n  clonefrom: linux-template\n  num_cpus: 2\n  memory: 2048MB\n  wait_for_ip_timeout: 1\n")
}

var simEnv = []string{"TEST_VCSIM_PASSWORD=pass"}

// cloudRun runs `brine cloud ARGS… --json` and decodes its results.
func cloudRun(t *testing.T, m *testMaster, args ...string) (resultsJSON, string, int) {
	t.Helper()
	out, errs, code := m.run(simEnv, append([]string{"cloud", "--json"}, args...)...)
	var res resultsJSON
	if out != "" {
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("cloud %v: %v in %q (stderr %s)", args, err, out, errs)
		}
	}
	return res, errs, code
}

func TestCloudCreateDestroyThroughMaster(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	cloudSetup(t, m, true)

	res, errs, code := cloudRun(t, m, "-p", "small", "a", "b", "c")
	if code != 0 || len(res.Results) != 3 || res.Failed != 0 {
		t.Fatalf("create: exit %d, %+v\n%s", code, res, errs)
	}
	for _, r := range res.Results {
		if r.Status != cloud.Created || r.Node.IP() == "" || len(r.Node.MACs) != 1 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if !strings.Contains(errs, "a: waiting_for_ssh") || !strings.Contains(errs, "deploy skipped") {
		t.Errorf("progress lines missing from stderr:\n%s", errs)
	}

	res, errs, code = cloudRun(t, m, "-d", "a", "-y")
	if code != 0 || len(res.Results) != 1 || res.Results[0].Status != cloud.Destroyed {
		t.Fatalf("destroy: exit %d, %+v\n%s", code, res, errs)
	}

	out, errs, code := m.run(nil, "event", "watch", "salt/cloud/a/*", "--since", "1h", "--count", "7")
	if code != 0 {
		t.Fatalf("watch: exit %d: %s", code, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		tag, payload, _ := strings.Cut(l, "\t")
		got = append(got, strings.TrimPrefix(tag, "salt/cloud/a/"))
		if strings.Contains(payload, `"pass"`) {
			t.Errorf("%s carries the password: %s", tag, payload)
		}
		if tag == "salt/cloud/a/created" && (!strings.Contains(payload, `"ip_address": "10.20.`) || !strings.Contains(payload, `"macs": ["`)) {
			t.Errorf("created lacks ip/macs: %s", payload)
		}
	}
	want := "creating requesting querying waiting_for_ssh created destroying destroyed"
	if strings.Join(got, " ") != want {
		t.Errorf("events %v, want %s", got, want)
	}

	// Each run is a job of the CLI's user, with every VM's outcome.
	out, errs, code = m.run(nil, "jobs", "list", "--fun", "runner.cloud.*", "--json")
	if code != 0 || !strings.Contains(out, `"runner.cloud.profile"`) || !strings.Contains(out, `"runner.cloud.destroy"`) {
		t.Errorf("cloud runs are not jobs: exit %d: %s %s", code, out, errs)
	}

	// A re-run reports the existing VMs and creates the destroyed one.
	res, _, code = cloudRun(t, m, "-p", "small", "a", "b")
	if code != 0 || res.Results[0].Status != cloud.Created || res.Results[1].Status != cloud.Exists {
		t.Errorf("re-run: exit %d, %+v", code, res.Results)
	}

	// Query lists what exists.
	out, errs, code = m.run(simEnv, "cloud", "-Q", "--json")
	var nodes []cloud.Node
	if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil {
		t.Fatalf("query: exit %d: %s %s", code, out, errs)
	}
	names := map[string]bool{}
	for _, n := range nodes {
		names[n.Name] = true
	}
	if !names["a"] || !names["b"] || !names["c"] || names["linux-template"] {
		t.Errorf("query lists %v", names)
	}
}

func TestCloudFailureExitsNonZero(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	cloudSetup(t, m, false) // no DHCP: wait_for_ip_timeout (1 s) expires
	res, errs, code := cloudRun(t, m, "-p", "small", "slow")
	if code != 1 || res.Failed != 1 || res.Results[0].Step != "querying" || !res.Results[0].Exists {
		t.Fatalf("exit %d, %+v\n%s", code, res, errs)
	}
	if !strings.Contains(errs, "1 of 1 VMs failed") {
		t.Errorf("stderr %s", errs)
	}
}

func TestCloudWithoutMasterProvisionsNothing(t *testing.T) {
	m := newTestMaster(t) // not started
	cloudSetup(t, m, true)
	env := append([]string{"BRINE_KEY=0123456789abcdef0123456789abcdef"}, simEnv...)
	_, errs, code := m.run(env, "cloud", "-p", "small", "ghost", "--timeout", "1s")
	if code != exitUnreachable || !strings.Contains(errs, "no VM was created") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, errs, code := m.run(simEnv, "cloud", "-Q")
	if code != 0 || strings.Contains(out, "ghost") {
		t.Errorf("query: exit %d, %s %s", code, out, errs)
	}
}

func TestCloudUsageAndDryRun(t *testing.T) {
	m := newTestMaster(t)
	cloudSetup(t, m, true)
	for _, args := range [][]string{
		{"cloud"},
		{"cloud", "-p", "small"},
		{"cloud", "-p", "small", "-d", "x"},
		{"cloud", "-H"},
		{"cloud", "-Q", "extra"},
		{"cloud", "-m", "x.map", "-d", "extra"},
	} {
		if _, errs, code := m.run(simEnv, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errs)
		}
	}
	mapFile := filepath.Join(m.confDir, "web.map")
	os.WriteFile(mapFile, []byte("small:\n  - web1\n  - web2: {num_cpus: 4}\n"), 0o644)
	out, errs, code := m.run(simEnv, "cloud", "-m", mapFile, "-H", "--dry-run", "--json")
	var p planJSON
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("dry run: exit %d: %s %s", code, out, errs)
	}
	if len(p.Create) != 2 || p.Create[1].Kwargs["num_cpus"] != float64(4) || len(p.Destroy) != 3 {
		t.Errorf("plan %+v", p)
	}
	// Nothing was done: the map's VMs still do not exist.
	if out, _, _ := m.run(simEnv, "cloud", "-Q"); strings.Contains(out, "web1") {
		t.Errorf("dry run created web1:\n%s", out)
	}
	out, _, code = m.run(simEnv, "cloud", "--list-providers")
	if code != 0 || !strings.Contains(out, "vcsim:vmware") || strings.Contains(out, "osenv") {
		t.Errorf("list-providers: %d %s", code, out)
	}
}

func TestCloudInterruptReportsWhatExists(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	cloudSetup(t, m, false) // no DHCP: the IP wait lasts until interrupted
	os.WriteFile(filepath.Join(m.confDir, "cloud.profiles"), []byte("patient:\n  provider: vcsim\n  clonefrom: linux-template\n  wait_for_ip_timeout: 600\n"), 0o644)
	cmd := tied(exec.Command(brineBin, "-c", m.confDir, "cloud", "-p", "patient", "slow1", "--json"))
	cmd.Env = append(os.Environ(), simEnv...)
	var stdout bytes.Buffer
	stderr := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "waiting for ip") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("never waited for an IP:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, stderr.String())
	}
	var res resultsJSON
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %q", err, stdout.String())
	}
	if !res.Cancelled || len(res.Results) != 1 || !res.Results[0].Exists || res.Results[0].Node.ID == "" {
		t.Errorf("%+v", res)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr %s", stderr.String())
	}
}

func TestCloudRunnerFunctionsOnMaster(t *testing.T) {
	t.Setenv("TEST_VCSIM_PASSWORD", "pass") // the master reads the provider's password from its environment
	m := newTestMaster(t)
	m.start()
	cloudSetup(t, m, true)
	out, errs, code := m.run(nil, "run", "cloud.profile", "prof=small", "instances=r1,r2", "--json")
	if code != 0 || !strings.Contains(out, `"r1"`) || !strings.Contains(out, `"created"`) {
		t.Fatalf("cloud.profile: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = m.run(nil, "event", "watch", "salt/cloud/r1/*", "--since", "1h", "--count", "5")
	if code != 0 || !strings.Contains(out, "salt/cloud/r1/created\t") {
		t.Fatalf("events: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = m.run(nil, "run", "cloud.destroy", "instances=r1", "--json")
	if code != 0 || !strings.Contains(out, `"destroyed"`) {
		t.Fatalf("cloud.destroy: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = m.run(nil, "run", "cloud.list", "--json")
	if code != 0 || !strings.Contains(out, `"r2"`) || strings.Contains(out, `"r1"`) {
		t.Errorf("cloud.list: exit %d: %s %s", code, out, errs)
	}
}
