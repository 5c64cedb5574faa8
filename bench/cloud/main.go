// Command cloud measures `brine cloud` end to end: a map of N VMs created
// with --parallel P against govmomi's vCenter simulator (in this process,
// so that its CPU is not counted as brine's), every lifecycle event stored
// durably by a real `brine master`, then the same map destroyed. It reports
// wall time, and the CPU time of the brine cloud process and of the master
// per VM. Results go to -out as JSON.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/cloud/vmware"
	"github.com/brinehq/brine/internal/loopback"
)

// Result is one measured scenario.
type Result struct {
	Name            string  `json:"name"`
	VMs             int     `json:"vms"`
	Parallel        int     `json:"parallel"`
	Succeeded       int     `json:"succeeded"`
	Failed          int     `json:"failed"`
	Events          int     `json:"events"`
	WallSeconds     float64 `json:"wall_seconds"`
	VMsPerSec       float64 `json:"vms_per_sec"`
	CLICPUSeconds   float64 `json:"cli_cpu_seconds"`
	CLICPUMsPerVM   float64 `json:"cli_cpu_ms_per_vm"`
	MasterCPUMsPerV float64 `json:"master_cpu_ms_per_vm"`
	CLIMaxRSSMiB    float64 `json:"cli_max_rss_mib"`
}

func main() {
	out := flag.String("out", "bench/results/cloud.json", "where to write the JSON results")
	bin := flag.String("brine", "bin/brine", "the brine binary to measure")
	n := flag.Int("n", 100, "VMs in the map")
	parallel := flag.Int("parallel", 10, "brine cloud --parallel")
	flag.Parse()
	if err := run(*out, *bin, *n, *parallel); err != nil {
		fmt.Fprintf(os.Stderr, "bench/cloud: %v\n", err)
		os.Exit(1)
	}
}

func run(out, bin string, n, parallel int) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "brine-bench-cloud-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sim, err := vmware.StartSimulator(vmware.SimulatorConfig{DHCP: true})
	if err != nil {
		return err
	}
	defer sim.Close()

	pub, err := loopback.Port()
	if err != nil {
		return err
	}
	req, err := loopback.Port()
	if err != nil {
		return err
	}
	conf := fmt.Sprintf("id: bench\ndata_dir: %s\npublish_port: %d\nret_port: %d\nlog_level: warn\n", filepath.Join(dir, "data"), pub, req)
	u := sim.URL()
	pass, _ := u.User.Password()
	files := map[string]string{
		"master":          conf,
		"cloud.providers": fmt.Sprintf("vcsim:\n  driver: vmware\n  url: https://%s/sdk\n  user: %s\n  password: %s\n  verify_ssl: False\n", u.Host, u.User.Username(), pass),
		"cloud.profiles":  "small:\n  provider: vcsim\n  clonefrom: linux-template\n  num_cpus: 2\n  memory: 2GB\n  cluster: DC0_C0\n  deploy: False\n",
	}
	var m strings.Builder
	m.WriteString("small:\n")
	for i := range n {
		fmt.Fprintf(&m, "  - bench%03d\n", i)
	}
	files["bench.map"] = m.String()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return err
		}
	}

	master := exec.Command(bin, "master", "-c", dir)
	var mlog bytes.Buffer
	master.Stderr = &mlog
	if err := master.Start(); err != nil {
		return err
	}
	defer func() {
		_ = master.Process.Signal(syscall.SIGTERM)
		_ = master.Wait()
	}()
	if err := waitMaster(bin, dir); err != nil {
		return fmt.Errorf("%w\n%s", err, mlog.String())
	}

	rep := report.New("cloud")
	rep.Setup["command"] = "go run ./bench/cloud -out " + out
	var results []Result
	since := time.Now().UTC().Format(time.RFC3339Nano)
	mapFile := filepath.Join(dir, "bench.map")
	for _, sc := range []struct {
		name   string
		args   []string
		events int // per VM
	}{
		{"create_map", []string{"cloud", "-m", mapFile, "-P", strconv.Itoa(parallel), "--json"}, 5},
		{"destroy_map", []string{"cloud", "-m", mapFile, "-d", "-y", "-P", strconv.Itoa(parallel), "--json"}, 2},
	} {
		res, err := measure(bin, dir, master.Process.Pid, sc.name, sc.args, n, parallel)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	events, err := countEvents(bin, dir, since, n*7)
	if err != nil {
		return err
	}
	results[0].Events, results[1].Events = events, events
	rep.Results = results
	rep.Notes = append(rep.Notes,
		"events counts salt/cloud/* events stored by the master for both runs together (5 per created VM, 2 per destroyed VM)",
		"cli_cpu is the user+system CPU of the `brine cloud` process (from rusage); master_cpu that of `brine master` over the run (from /proc); the simulator runs in the benchmark process and is not counted",
		"the simulator clones in about 25 ms and plays DHCP every 50 ms, so wall time is dominated by simulated vCenter work, not brine")
	// Neither count can exceed its target (the event watch stops at 7n).
	rep.Check("create_map", "succeeded", ">=", float64(n), float64(results[0].Succeeded))
	rep.Check("destroy_map", "succeeded", ">=", float64(n), float64(results[1].Succeeded))
	rep.Check("create_map+destroy_map", "events", ">=", float64(7*n), float64(events))
	return rep.Finish(out, os.Stdout)
}

func measure(bin, dir string, masterPid int, name string, args []string, n, parallel int) (Result, error) {
	cmd := exec.Command(bin, append([]string{"-c", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	m0 := report.ProcCPU(masterPid)
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	m1 := report.ProcCPU(masterPid)
	var res struct {
		Results []struct {
			Status string `json:"status"`
		} `json:"results"`
		Failed int `json:"failed"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		return Result{}, fmt.Errorf("%s: %v (%v)\n%s", name, jerr, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r := Result{Name: name, VMs: n, Parallel: parallel, Failed: res.Failed, WallSeconds: wall.Seconds(),
		VMsPerSec: float64(n) / wall.Seconds(), CLICPUSeconds: cpu.Seconds(),
		CLICPUMsPerVM:   float64(cpu.Milliseconds()) / float64(n),
		MasterCPUMsPerV: float64((m1 - m0).Milliseconds()) / float64(n),
		CLIMaxRSSMiB:    float64(ru.Maxrss) / 1024}
	for _, x := range res.Results {
		if x.Status == "created" || x.Status == "destroyed" {
			r.Succeeded++
		}
	}
	return r, nil
}

// countEvents counts the salt/cloud events the master stored since since.
func countEvents(bin, dir, since string, want int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-c", dir, "event", "watch", "salt/cloud/*", "--since", since, "--count", strconv.Itoa(want)).Output()
	if err != nil && ctx.Err() == nil {
		return 0, fmt.Errorf("event watch: %w", err)
	}
	return bytes.Count(out, []byte("\n")), nil
}

func waitMaster(bin, dir string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(bin, "-c", dir, "event", "send", "bench/ping", "--timeout", "2s").Run() == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("the master did not come up")
}
