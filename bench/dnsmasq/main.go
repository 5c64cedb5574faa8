// Command dnsmasq measures the dnsmasq integration: regenerating the
// dhcp-hostsfile and addn-hosts for 10,000 hosts (render + atomic write),
// and the latency from a salt-cloud `created` event on the bus to a real
// dnsmasq answering the new name (mine consumer, key-value watch, 200 ms
// debounce, render, write, SIGHUP, dnsmasq re-read), with 10,000 hosts in
// the mine; plus the number of SIGHUPs for a burst of creations. Results go
// to -out as JSON.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/integrations/dnsmasq"
	"github.com/brinehq/brine/mine"
)

// Result is one measured scenario.
type Result struct {
	Name    string  `json:"name"`
	Hosts   int     `json:"hosts"`
	Samples int     `json:"samples"`
	Unit    string  `json:"unit"`
	P50Ms   float64 `json:"p50_ms"`
	P95Ms   float64 `json:"p95_ms"`
	MaxMs   float64 `json:"max_ms"`
	MinMs   float64 `json:"min_ms"`
	// Reloads counts SIGHUPs (burst scenario).
	Reloads uint64 `json:"reloads,omitempty"`
}

func main() {
	out := flag.String("out", "bench/results/dnsmasq.json", "where to write the JSON results")
	hosts := flag.Int("hosts", 10_000, "hosts in the mine")
	rounds := flag.Int("rounds", 30, "regenerations and single-event latencies measured")
	burst := flag.Int("burst", 100, "hosts created at once in the burst scenario")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(*out, *hosts, *rounds, *burst); err != nil {
		fmt.Fprintln(os.Stderr, "bench dnsmasq:", err)
		os.Exit(1)
	}
}

func run(out string, nHosts, rounds, burst int) error {
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		return errors.New("dnsmasq not found: install the Debian package dnsmasq-base (make deps)")
	}
	ver, _ := exec.Command(bin, "--version").Output()
	rep := report.New("dnsmasq")
	rep.Setup["dnsmasq"] = strings.TrimSpace(strings.SplitN(string(ver), "\n", 2)[0])
	dir, err := os.MkdirTemp("", "brine-bench-dnsmasq-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // dnsmasq reads the files as nobody
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	regen, err := benchRegenerate(ctx, dir, nHosts, rounds)
	if err != nil {
		return err
	}

	single, bursts, err := benchLatency(ctx, bin, dir, nHosts, rounds, burst)
	if err != nil {
		return err
	}
	rep.Results = []Result{regen, single, bursts}

	rep.Check(regen.Name, "p50_ms", "<=", 50, regen.P50Ms)
	rep.Check(single.Name, "p50_ms", "<=", 500, single.P50Ms)
	rep.Check(single.Name, "p95_ms", "<=", 500, single.P95Ms)
	rep.Check(bursts.Name, "reloads", "<=", 1, float64(bursts.Reloads))
	rep.Notes = []string{
		"regenerate: Syncer.Refresh over an in-memory inventory of hosts with one IPv4 and one MAC each, one host changed per round, so both files are rendered and rewritten (temp file, fsync, rename, fsync dir) every round; no reload configured",
		"event_to_resolvable: salt/cloud/<name>/created published on the embedded JetStream bus (fsynced) until dnsmasq on 127.0.0.1 answers the A query (polled every 2 ms); includes the mine's durable consumer and key-value write, the watch, the 200 ms debounce, render+write of all hosts, SIGHUP and dnsmasq's re-read",
		"burst: all creations published back to back; latency is from the first publish until every name resolves; reloads counts the SIGHUPs sent for the burst",
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	return rep.Print(os.Stdout)
}

// staticInventory is a mine held in memory, to time rendering and writing
// without the key-value store.
type staticInventory struct{ hosts []*mine.Host }

func (s *staticInventory) Watch(ctx context.Context, fn func(mine.Change)) error {
	<-ctx.Done()
	return nil
}

func (s *staticInventory) List(context.Context) ([]*mine.Host, error) { return s.hosts, nil }

func benchHost(i int) *mine.Host {
	return &mine.Host{ID: fmt.Sprintf("host%05d", i), IPs: []string{fmt.Sprintf("10.%d.%d.%d", 100+i/62500, i/250%250, i%250+1)},
		MACs: []string{fmt.Sprintf("02:00:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff)}}
}

func benchRegenerate(ctx context.Context, dir string, n, rounds int) (Result, error) {
	inv := &staticInventory{}
	for i := range n {
		inv.hosts = append(inv.hosts, benchHost(i))
	}
	cfg := &dnsmasq.Config{HostsFile: filepath.Join(dir, "regen.dhcp-hosts"), AddnHosts: filepath.Join(dir, "regen.addn-hosts"), Domain: "cloud.test"}
	s, err := dnsmasq.New(cfg, inv, dnsmasq.Options{})
	if err != nil {
		return Result{}, err
	}
	noEvents := func(context.Context, string, map[string]any) error { return nil }
	if _, err := s.Refresh(ctx, false, noEvents); err != nil { // first write: files created
		return Result{}, err
	}
	var ms []float64
	for r := range rounds {
		inv.hosts[r%n].IPs = []string{fmt.Sprintf("10.200.%d.%d", r/250, r%250+1)}
		start := time.Now()
		rep, err := s.Refresh(ctx, false, noEvents)
		if err != nil {
			return Result{}, err
		}
		ms = append(ms, msSince(start))
		if len(rep.Written) != 2 || rep.DHCPHosts != n || rep.AddnHosts != n {
			return Result{}, fmt.Errorf("round %d: wrote %v, %d reservations, %d host records", r, rep.Written, rep.DHCPHosts, rep.AddnHosts)
		}
	}
	return summarize("regenerate", n, "ms per render + atomic write of both files", ms), nil
}

func benchLatency(ctx context.Context, bin, dir string, n, rounds, burst int) (Result, Result, error) {
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "bus")})
	if err != nil {
		return Result{}, Result{}, err
	}
	defer b.Close()
	kv, err := b.Bucket(ctx, mine.BucketConfig)
	if err != nil {
		return Result{}, Result{}, err
	}
	store := mine.New(kv)
	for i := range n {
		h := benchHost(i)
		if _, err := store.Update(ctx, mine.Write{ID: h.ID, Source: "bench", Mutate: func(x *mine.Host) error {
			x.IPs, x.MACs = h.IPs, h.MACs
			return nil
		}}); err != nil {
			return Result{}, Result{}, err
		}
	}
	cfg := &dnsmasq.Config{HostsFile: filepath.Join(dir, "dhcp-hosts"), AddnHosts: filepath.Join(dir, "addn-hosts"),
		Domain: "cloud.test", PidFile: filepath.Join(dir, "dnsmasq.pid")}
	s, err := dnsmasq.New(cfg, store, dnsmasq.Options{Events: bus.Emitter{Publisher: b, Source: "brine://bench/dnsmasq"}})
	if err != nil {
		return Result{}, Result{}, err
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = store.Follow(rctx, b, "brine://bench/mine", nil) }()
	go func() { defer wg.Done(); _ = s.Run(rctx) }()
	defer func() { stop(); wg.Wait() }()

	// dnsmasq starts with the files of the 10,000 hosts.
	if err := waitUntil(60*time.Second, func() bool {
		c, err := os.ReadFile(cfg.AddnHosts)
		return err == nil && strings.Count(string(c), "\n") > n
	}); err != nil {
		return Result{}, Result{}, fmt.Errorf("initial files: %w", err)
	}
	port, err := freeUDPPort()
	if err != nil {
		return Result{}, Result{}, err
	}
	conf := filepath.Join(dir, "dnsmasq.conf")
	if err := os.WriteFile(conf, []byte(strings.Join([]string{
		fmt.Sprintf("port=%d", port), "listen-address=127.0.0.1", "bind-interfaces", "no-resolv", "no-hosts",
		"domain=cloud.test", "local=/cloud.test/", "addn-hosts=" + cfg.AddnHosts, "dhcp-hostsfile=" + cfg.HostsFile,
		"pid-file=" + cfg.PidFile, "log-facility=/dev/null", ""}, "\n")), 0o644); err != nil {
		return Result{}, Result{}, err
	}
	cmd := exec.Command(bin, "-k", "-C", conf)
	if err := cmd.Start(); err != nil {
		return Result{}, Result{}, err
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	server := fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitUntil(30*time.Second, func() bool { return resolves(server, "host00000.cloud.test.") }); err != nil {
		return Result{}, Result{}, fmt.Errorf("dnsmasq does not answer: %w", err)
	}

	publish := func(name, ip string) error {
		ev, err := bus.NewEvent("salt/cloud/"+name+"/created", map[string]any{"name": name, "event": "created instance",
			"provider": "bench:vmware", "driver": "vmware", "private_ips": []any{ip}}, bus.Origin{Source: "brine://bench/cloud"})
		if err != nil {
			return err
		}
		return b.Publish(ctx, ev)
	}
	var ms []float64
	for r := range rounds {
		name := fmt.Sprintf("new%03d", r)
		start := time.Now()
		if err := publish(name, fmt.Sprintf("10.250.0.%d", r+1)); err != nil {
			return Result{}, Result{}, err
		}
		if err := waitUntil(10*time.Second, func() bool { return resolves(server, name+".cloud.test.") }); err != nil {
			return Result{}, Result{}, fmt.Errorf("%s: %w", name, err)
		}
		ms = append(ms, msSince(start))
		time.Sleep(300 * time.Millisecond) // separate bursts
	}
	single := summarize("event_to_resolvable", n, "ms from publishing salt/cloud/<name>/created to dnsmasq answering <name>", ms)

	time.Sleep(time.Second)
	before := s.Stats().Reloads
	start := time.Now()
	for i := range burst {
		if err := publish(fmt.Sprintf("burst%03d", i), fmt.Sprintf("10.251.%d.%d", i/250, i%250+1)); err != nil {
			return Result{}, Result{}, err
		}
	}
	last := fmt.Sprintf("burst%03d.cloud.test.", burst-1)
	if err := waitUntil(30*time.Second, func() bool { return resolves(server, last) && resolves(server, "burst000.cloud.test.") }); err != nil {
		return Result{}, Result{}, err
	}
	total := msSince(start)
	time.Sleep(2 * dnsmasq.DefaultDebounce)
	bursts := summarize(fmt.Sprintf("burst_%d_created", burst), n, "ms from the first created event until every name resolves", []float64{total})
	bursts.Reloads = s.Stats().Reloads - before
	return single, bursts, nil
}

func resolves(server, name string) bool {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: time.Second}
	r, _, err := c.Exchange(m, server)
	return err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0
}

func waitUntil(limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

func freeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func summarize(name string, hosts int, unit string, ms []float64) Result {
	s := slices.Clone(ms)
	slices.Sort(s)
	pct := func(p float64) float64 { return report.Percentile(s, p) }
	return Result{Name: name, Hosts: hosts, Samples: len(s), Unit: unit, P50Ms: pct(0.5), P95Ms: pct(0.95), MaxMs: s[len(s)-1], MinMs: s[0]}
}
