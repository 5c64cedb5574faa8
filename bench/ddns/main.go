// Command ddns measures brine's dynamic DNS against a real BIND 9 on
// loopback (started here, as the tests do): (a) signed add_host calls (A and
// PTR, each a TSIG-signed UPDATE with prerequisites) through the function
// registry, sequentially and from concurrent callers: registrations/s and
// per-call latency; (b) a burst of 1,000 salt/cloud/<name>/deploy_script
// events on the embedded, fsync'ed bus, run by the reactor with Salt's
// add_host reaction file, until every name is in the zone; (c) a steady 100
// events/s: event → resolvable latency, polling the server for each name.
// Results go to -out as JSON, with the targets checked.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/integrations/ddns/named"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/reactor"
)

// Result is one measured scenario.
type Result struct {
	Name     string  `json:"name"`
	Hosts    int     `json:"hosts"`
	Callers  int     `json:"callers,omitempty"`
	Rate     int     `json:"target_rate,omitempty"`
	Seconds  float64 `json:"seconds"`
	PerSec   float64 `json:"per_sec"`
	Unit     string  `json:"unit"`
	P50Ms    float64 `json:"p50_ms,omitempty"`
	P99Ms    float64 `json:"p99_ms,omitempty"`
	MaxMs    float64 `json:"max_ms,omitempty"`
	Failures int     `json:"failures"`
	Missing  int     `json:"missing"`
}

// reaction is Salt's add_host reaction file, as in Salt's documentation.
const reaction = `add_dns_{{ data['name'] }}:
  runner.ddns.add_host:
    - zone: example.test
    - name: {{ data['name'] }}
    - ttl: 60
    - ip: {{ data['host'] }}
    - keyname: ddns-key
    - keyfile: %s
    - nameserver: 127.0.0.1
    - port: %s
`

func main() {
	out := flag.String("out", "bench/results/ddns.json", "where to write the JSON report")
	hosts := flag.Int("hosts", 2000, "add_host calls per throughput run")
	callers := flag.Int("callers", 16, "concurrent callers in the concurrent throughput run")
	burst := flag.Int("burst", 1000, "cloud events in the burst")
	rate := flag.Int("rate", 100, "events/s in the steady run")
	steady := flag.Duration("steady", 10*time.Second, "length of the steady run")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	flag.Parse()
	report.Run("bench/ddns", *cpuprofile, func() error { return run(*out, *hosts, *callers, *burst, *rate, *steady) })
}

func run(out string, hosts, callers, burst, rate int, steady time.Duration) error {
	ctx := context.Background()
	srv, err := named.Start(ctx, named.Config{Zones: []string{"example.test", "20.10.in-addr.arpa"}, Keys: []named.Key{{Name: "ddns-key"}}})
	if err != nil {
		return err
	}
	defer srv.Close()
	host, port := srv.Addr[:strings.LastIndexByte(srv.Addr, ':')], srv.Addr[strings.LastIndexByte(srv.Addr, ':')+1:]
	dir, err := os.MkdirTemp("", "brine-bench-ddns-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyfile := filepath.Join(dir, "tsig.keyring")
	if err := os.WriteFile(keyfile, []byte(fmt.Sprintf(`{"ddns-key.": %q}`, srv.Key("ddns-key").Secret)), 0o600); err != nil {
		return err
	}
	reg := function.NewWithBuiltins()
	if err := reg.RegisterAll(ddns.New(ddns.Config{}, ddns.WithLogger(quiet)).Funcs()); err != nil {
		return err
	}

	rep := report.New("ddns")
	rep.Setup["server"] = "BIND " + bindVersion(srv) + " on 127.0.0.1, named -n 2, TSIG hmac-sha256"
	var results []Result
	next := 0 // host numbering, so no run reuses a name or address
	name := func() (string, string) {
		next++
		return fmt.Sprintf("h%d", next), fmt.Sprintf("10.20.%d.%d", next/250, next%250+1)
	}
	for _, c := range []int{1, callers} {
		r := addHosts(ctx, reg, keyfile, host, port, hosts, c, name)
		results = append(results, r)
	}
	// The same against a server keeping its zones and journals on tmpfs:
	// BIND syncs its journal on every update, and the disk is shared.
	shm, err := named.Start(ctx, named.Config{Zones: []string{"example.test", "20.10.in-addr.arpa"}, Parent: "/dev/shm",
		Keys: []named.Key{{Name: "ddns-key", Secret: srv.Key("ddns-key").Secret}}})
	if err != nil {
		return err
	}
	shmPort := shm.Addr[strings.LastIndexByte(shm.Addr, ':')+1:]
	for _, c := range []int{1, callers} {
		r := addHosts(ctx, reg, keyfile, host, shmPort, hosts, c, name)
		r.Name += "_tmpfs"
		results = append(results, r)
	}
	shm.Close()
	fmt.Fprintln(os.Stderr, "add_host done")

	b, err := natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "bus"), Logger: quiet})
	if err != nil {
		return err
	}
	defer b.Close()
	file := filepath.Join(dir, "add_dns.sls")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(reaction, keyfile, port)), 0o644); err != nil {
		return err
	}
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "salt/cloud/*/deploy_script", Files: []string{file}}}},
		reg, reactor.WithLogger(quiet))
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx, b, nil) }()
	defer func() { stop(); <-done }()

	res, err := cloudBurst(ctx, b, srv, "deploy_script", burst, name)
	if err != nil {
		return err
	}
	results = append(results, res)
	fmt.Fprintln(os.Stderr, "burst done")
	res, err = cloudSteady(ctx, b, srv, rate, steady, name)
	if err != nil {
		return err
	}
	results = append(results, res)

	// The built-in sync: created events -> the mine -> the zone, no reaction file.
	kv, err := b.Bucket(ctx, mine.BucketConfig)
	if err != nil {
		return err
	}
	store := mine.New(kv)
	go runPart("mine", func() error { return store.Follow(rctx, b, "brine://bench/mine", quiet) })
	sc := ddns.New(ddns.Config{Settings: ddns.Settings{Nameserver: host, Port: atoi(port), Keyfile: keyfile},
		Sync: &ddns.SyncConfig{Zone: "example.test"}}, ddns.WithLogger(quiet))
	go runPart("ddns sync", func() error { return sc.Sync(rctx, store, nil) })
	res, err = cloudBurst(ctx, b, srv, "created", burst, name)
	if err != nil {
		return err
	}
	res.Name, res.Unit = "sync_burst", "hosts resolvable/s, from created events through the mine and the built-in sync to A in the zone"
	results = append(results, res)

	rep.Results = results
	rep.Check(results[1].Name, "per_sec", ">=", 1000, results[1].PerSec)
	rep.Check(results[3].Name, "per_sec", ">=", 1000, results[3].PerSec)
	rep.Check(results[5].Name, "p99_ms", "<=", 100, results[5].P99Ms)
	for _, r := range results {
		if r.Failures > 0 || r.Missing > 0 {
			rep.Fail(fmt.Sprintf("%s: %d failures, %d missing", r.Name, r.Failures, r.Missing))
		}
	}
	rep.Notes = []string{
		"add_host = one signed UPDATE for the PTR, then one for the A with an RRset-does-not-exist prerequisite (a new host); concurrent callers' updates to a zone share UPDATE messages (names never shared); each call is checked and bound by the function registry",
		"sync_burst: the same burst as created events, followed by the mine (one durable consumer) and the built-in ddns sync (no reaction file)",
		"burst and steady: events published to the embedded JetStream bus (fsync'ed), run by the reactor (64 workers) with Salt's add_host reaction file; 'resolvable' = the server answers the A query (steady) or the name is in an AXFR (burst)",
		"the machine has 2 cores (and a disk) shared by BIND, the bus, the reactor, the poller and other work: see load_avg",
		"*_tmpfs: the same calls against a BIND whose zone directory is on /dev/shm; BIND syncs its journal to disk on every update, so the difference is the disk's",
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	_ = rep.Print(os.Stdout)
	if !rep.Pass {
		return fmt.Errorf("a target was missed (see %s)", out)
	}
	return nil
}

// runPart runs a part until it ends, printing why if it failed.
func runPart(part string, run func() error) {
	if err := run(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "bench/ddns: %s: %v\n", part, err)
	}
}

// quiet discards the logs of the parts under measurement.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// addHosts calls ddns.add_host n times from callers goroutines.
func addHosts(ctx context.Context, reg *function.Registry, keyfile, host, port string, n, callers int, name func() (string, string)) Result {
	type job struct{ name, ip string }
	jobs := make(chan job, n)
	for range n {
		h, ip := name()
		jobs <- job{h, ip}
	}
	close(jobs)
	var (
		mu       sync.Mutex
		lat      []time.Duration
		failures int
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				t0 := time.Now()
				_, err := reg.Call(ctx, "ddns.add_host", nil, map[string]any{
					"zone": "example.test", "name": j.name, "ttl": 60, "ip": j.ip,
					"keyname": "ddns-key", "keyfile": keyfile, "nameserver": host, "port": port,
				}, nil)
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				if err != nil {
					failures++
					if failures == 1 {
						fmt.Fprintln(os.Stderr, "add_host:", err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	r := Result{Name: fmt.Sprintf("add_host_%d_callers", callers), Hosts: n, Callers: callers, Seconds: secs,
		PerSec: float64(n) / secs, Unit: "signed host registrations (A+PTR)/s", Failures: failures}
	r.P50Ms, r.P99Ms, r.MaxMs = percentiles(lat)
	return r
}

func publish(ctx context.Context, b bus.Bus, name, ip string) error {
	return publishTask(ctx, b, "deploy_script", name, ip)
}

// publishTask fires salt-cloud's deploy_script (with host, as salt-cloud
// sends it) or created (with private_ips, as brine's cloud adds).
func publishTask(ctx context.Context, b bus.Bus, task, name, ip string) error {
	data := map[string]any{"event": name + " has been deployed at " + ip, "name": name, "host": ip}
	if task == "created" {
		data = map[string]any{"event": "created instance", "name": name, "private_ips": []any{ip}}
	}
	ev, err := bus.NewEvent("salt/cloud/"+name+"/"+task, data, bus.Origin{Source: "brine://bench/cloud"})
	if err != nil {
		return err
	}
	return b.Publish(ctx, ev)
}

// cloudBurst publishes n salt/cloud/<name>/<task> events at once and waits
// until every name is in the zone.
func cloudBurst(ctx context.Context, b bus.Bus, srv *named.Server, task string, n int, name func() (string, string)) (Result, error) {
	want := map[string]bool{}
	start := time.Now()
	for range n {
		h, ip := name()
		want[h+".example.test."] = true
		if err := publishTask(ctx, b, task, h, ip); err != nil {
			return Result{}, err
		}
	}
	deadline := start.Add(2 * time.Minute)
	missing := n
	for missing > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		names, err := zoneNames(srv)
		if err != nil {
			return Result{}, err
		}
		missing = 0
		for w := range want {
			if !names[w] {
				missing++
			}
		}
	}
	secs := time.Since(start).Seconds()
	return Result{Name: "cloud_burst", Hosts: n, Seconds: secs, PerSec: float64(n-missing) / secs,
		Unit: "hosts resolvable/s, from deploy_script events to A in the zone", Missing: missing}, nil
}

// zoneNames lists the names holding an A record, by AXFR.
func zoneNames(srv *named.Server) (map[string]bool, error) {
	rrs, err := srv.Transfer("example.test")
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeA {
			names[rr.Header().Name] = true
		}
	}
	return names, nil
}

// cloudSteady publishes rate events/s for d and measures, per event, the
// time from publishing until the server answers the name's A query.
func cloudSteady(ctx context.Context, b bus.Bus, srv *named.Server, rate int, d time.Duration, name func() (string, string)) (Result, error) {
	n := int(d.Seconds() * float64(rate))
	var (
		mu      sync.Mutex
		pending = map[string]time.Time{}
		lat     []time.Duration
	)
	stopPoll := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		c := &dns.Client{Timeout: time.Second}
		for {
			select {
			case <-stopPoll:
				return
			default:
			}
			mu.Lock()
			names := make([]string, 0, len(pending))
			for n := range pending {
				names = append(names, n)
			}
			mu.Unlock()
			for _, n := range names {
				q := new(dns.Msg)
				q.SetQuestion(n, dns.TypeA)
				r, _, err := c.Exchange(q, srv.Addr)
				if err == nil && len(r.Answer) > 0 {
					now := time.Now()
					mu.Lock()
					lat = append(lat, now.Sub(pending[n]))
					delete(pending, n)
					mu.Unlock()
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	start := time.Now()
	for range n {
		<-tick.C
		h, ip := name()
		mu.Lock()
		pending[h+".example.test."] = time.Now()
		mu.Unlock()
		if err := publish(ctx, b, h, ip); err != nil {
			return Result{}, err
		}
	}
	tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		left := len(pending)
		mu.Unlock()
		if left == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stopPoll)
	<-polled
	secs := time.Since(start).Seconds()
	r := Result{Name: "cloud_steady", Hosts: n, Rate: rate, Seconds: secs, PerSec: float64(len(lat)) / secs,
		Unit: "events/s; latency = event published → A answered by the server", Missing: len(pending)}
	r.P50Ms, r.P99Ms, r.MaxMs = percentiles(lat)
	return r, nil
}

func percentiles(lat []time.Duration) (p50, p99, maxMs float64) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	ms := report.Millis(lat)
	return report.Percentile(ms, 0.50), report.Percentile(ms, 0.99), ms[len(ms)-1]
}

func bindVersion(srv *named.Server) string {
	m := new(dns.Msg)
	m.SetQuestion("version.bind.", dns.TypeTXT)
	m.Question[0].Qclass = dns.ClassCHAOS
	r, _, err := new(dns.Client).Exchange(m, srv.Addr)
	if err != nil || len(r.Answer) == 0 {
		return "9"
	}
	if t, ok := r.Answer[0].(*dns.TXT); ok {
		return strings.Join(t.Txt, "")
	}
	return "9"
}
