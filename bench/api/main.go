// Command api measures the HTTP API: signed webhook requests per second and
// their latency, sent from a second process (this program re-executed as a
// load generator) to an API server on an embedded, fsyncing JetStream bus;
// and the fan-out of the event stream to many SSE clients. Every hook is
// HMAC-signed and answered only once its event is durable; the access log
// is formatted as in production (into io.Discard). Results go to -out as
// JSON, with the targets checked.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
)

const (
	token  = "bench-token-0123456789abcdef"
	secret = "bench-hook-secret-0123456789"
)

// Result is one measured scenario.
type Result struct {
	Name       string  `json:"name"`
	Mode       string  `json:"mode"` // "max", "paced" or "fanout"
	TargetRate int     `json:"target_rate,omitempty"`
	Clients    int     `json:"clients"`
	Requests   int     `json:"requests"`
	BodyBytes  int     `json:"body_bytes"`
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"per_sec"`
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	Errors     int     `json:"errors"`
	Stored     int     `json:"stored,omitempty"`
	Delivered  int     `json:"delivered,omitempty"`
	Missing    int     `json:"missing"`
	// ServerCPUus and ClientCPUus are CPU microseconds per request spent
	// by the master side (HTTP, auth, bus and its embedded NATS server)
	// and by the load generator: figures a busy shared machine does not
	// distort the way it distorts rates and tail latencies.
	ServerCPUus float64 `json:"server_cpu_us_per_request,omitempty"`
	// PublishP50Ms and PublishP99Ms time the durable publish inside the
	// server (the bus, fsync included), the part of a hook's latency that
	// is disk rather than HTTP.
	PublishP50Ms float64 `json:"publish_p50_ms,omitempty"`
	PublishP99Ms float64 `json:"publish_p99_ms,omitempty"`
	ClientCPUus  float64 `json:"client_cpu_us_per_request,omitempty"`
	Description  string  `json:"description"`
}

// loadReport is what a load-generating child prints on stdout.
type loadReport struct {
	Requests  int       `json:"requests"`
	Errors    int       `json:"errors"`
	Seconds   float64   `json:"seconds"`
	Latencies []float64 `json:"latencies_ms"`
	FirstErr  string    `json:"first_error,omitempty"`
	CPUus     float64   `json:"cpu_us"`
}

func main() {
	out := flag.String("out", "bench/results/api.json", "where to write the JSON results")
	n := flag.Int("n", 20000, "hook requests at the maximum rate")
	conc := flag.Int("concurrency", 64, "requests in flight at the maximum rate")
	rate := flag.Int("rate", 1000, "requests/s for the paced scenario")
	secs := flag.Int("seconds", 10, "duration of the paced scenario")
	clients := flag.Int("clients", 50, "SSE clients for the fan-out scenario")
	fanEvents := flag.Int("fan-events", 2000, "events published for the fan-out scenario")
	body := flag.Int("body", 512, "hook body bytes")
	child := flag.String("child", "", "internal: run as the load generator (hook-max, hook-paced, sse)")
	url := flag.String("url", "", "internal: the API under test")
	cpuprofile := flag.String("cpuprofile", "", "write the server side's CPU profile here")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child, *url, *n, *conc, *rate, *secs, *clients, *fanEvents, *body); err != nil {
			fmt.Fprintln(os.Stderr, "bench/api child:", err)
			os.Exit(1)
		}
		return
	}
	report.Run("bench/api", *cpuprofile, func() error { return run(*out, *n, *conc, *rate, *secs, *clients, *fanEvents, *body) })
}

func run(out string, n, conc, rate, secs, clients, fanEvents, bodySize int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "brine-bench-api-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: dir, Logger: quiet})
	if err != nil {
		return err
	}
	defer b.Close()
	access := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tb := &timedBus{Bus: b}
	srv, err := api.New(api.Config{
		Tokens: [][]byte{[]byte(token)},
		Hooks:  []api.Hook{{Path: "bench/*", Auth: api.AuthHMAC, Secret: []byte(secret), SignatureHeader: api.GitHubSignatureHeader}},
	}, tb, access)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(sctx, ln) }()
	defer func() {
		stop()
		<-done
	}()
	url := "http://" + ln.Addr().String()

	rep := report.New("api")
	rep.Setup["durability"] = "embedded JetStream file store; group-commit fsync before each hook is answered"
	rep.Setup["command"] = "go run ./bench/api -out bench/results/api.json"
	var results []Result
	self, err := os.Executable()
	if err != nil {
		return err
	}
	common := []string{"-url", url, "-n", strconv.Itoa(n), "-concurrency", strconv.Itoa(conc), "-rate", strconv.Itoa(rate),
		"-seconds", strconv.Itoa(secs), "-clients", strconv.Itoa(clients), "-fan-events", strconv.Itoa(fanEvents), "-body", strconv.Itoa(bodySize)}

	// Warm up connections and the bus.
	if _, err := hookScenario(ctx, self, append([]string{"-child", "hook-max", "-n", "1000"}, common...)); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, sc := range []struct {
		name, child, mode, desc string
		clients, rate           int
	}{
		{"hook_hmac_max", "hook-max", "max", fmt.Sprintf("%d HMAC-signed POST /hook/bench/push from a second process, %d in flight", n, conc), conc, 0},
		{"hook_hmac_paced", "hook-paced", "paced", fmt.Sprintf("%d/s HMAC-signed hooks for %d s, open loop (latency from the scheduled send time)", rate, secs), 0, rate},
	} {
		before, _ := b.LastSeq(ctx)
		tb.reset()
		cpu0 := selfCPU()
		lr, err := hookScenario(ctx, self, append([]string{"-child", sc.child}, common...))
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		serverCPU := selfCPU() - cpu0
		after, _ := b.LastSeq(ctx)
		r := summarize(sc.name, sc.mode, lr)
		r.PublishP50Ms, _, r.PublishP99Ms, _ = percentiles(tb.reset())
		if lr.Requests > 0 {
			r.ServerCPUus = float64(serverCPU.Microseconds()) / float64(lr.Requests)
			r.ClientCPUus = lr.CPUus / float64(lr.Requests)
		}
		r.Clients, r.TargetRate, r.BodyBytes, r.Description = sc.clients, sc.rate, bodySize, sc.desc
		if r.Stored, err = countStored(ctx, b, before, after); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		r.Missing = r.Requests - r.Errors - r.Stored
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "%s: %.0f req/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms (durable publish p50 %.2f ms, p99 %.2f ms), errors %d, stored %d, CPU/request: server %.0f µs, client %.0f µs\n",
			r.Name, r.PerSec, r.P50Ms, r.P90Ms, r.P99Ms, r.PublishP50Ms, r.PublishP99Ms, r.Errors, r.Stored, r.ServerCPUus, r.ClientCPUus)
	}
	fan, err := fanout(ctx, b, self, common, clients, fanEvents)
	if err != nil {
		return fmt.Errorf("fan-out: %w", err)
	}
	results = append(results, fan)
	fmt.Fprintf(os.Stderr, "%s: %.0f deliveries/s, p99 %.2f ms, missing %d\n", fan.Name, fan.PerSec, fan.P99Ms, fan.Missing)

	rep.Results = results
	get := func(name string) Result {
		for _, r := range results {
			if r.Name == name {
				return r
			}
		}
		return Result{}
	}
	rep.Check("hook_hmac_max", "per_sec", ">=", 5000, get("hook_hmac_max").PerSec)
	rep.Check("hook_hmac_paced", "p99_ms", "<=", 20, get("hook_hmac_paced").P99Ms)
	for _, r := range results {
		rep.Check(r.Name, "missing", "<=", 0, float64(r.Missing))
		rep.Check(r.Name, "errors", "<=", 0, float64(r.Errors))
	}
	rep.Setup["load_avg_after"] = report.LoadAvg()
	rep.Notes = append(rep.Notes,
		"server and load generator share the machine's cores; the generator is a separate process speaking HTTP/1.1 keep-alive over loopback",
		"stored = events the bus log grew by during the scenario; missing = answered 200 but not stored",
		"the machine is shared: load_avg and setup.load_avg_after show how busy it was; tail latencies suffer first",
		"server_cpu_us_per_request includes the embedded NATS server and the fsync group commit; 2 cores / (server + client CPU per request) bounds the rate an idle machine could reach")
	if err := rep.Write(out); err != nil {
		return err
	}
	if !rep.Pass {
		return errors.New("a target was missed; see " + out)
	}
	return nil
}

// timedBus times each durable publish the API makes.
type timedBus struct {
	*natsbus.Bus
	mu  sync.Mutex
	lat []float64
}

func (t *timedBus) Publish(ctx context.Context, ev *bus.Event) error {
	start := time.Now()
	err := t.Bus.Publish(ctx, ev)
	d := float64(time.Since(start).Microseconds()) / 1000
	t.mu.Lock()
	t.lat = append(t.lat, d)
	t.mu.Unlock()
	return err
}

// reset returns the publish times so far and starts over.
func (t *timedBus) reset() []float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	lat := t.lat
	t.lat = nil
	return lat
}

// hookScenario runs a load-generating child and reads its report.
func hookScenario(ctx context.Context, self string, args []string) (loadReport, error) {
	var lr loadReport
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return lr, err
	}
	return lr, json.Unmarshal(outb, &lr)
}

func summarize(name, mode string, lr loadReport) Result {
	r := Result{Name: name, Mode: mode, Requests: lr.Requests, Errors: lr.Errors, Seconds: lr.Seconds}
	if lr.Seconds > 0 {
		r.PerSec = float64(lr.Requests-lr.Errors) / lr.Seconds
	}
	r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs = percentiles(lr.Latencies)
	return r
}

func percentiles(ms []float64) (p50, p90, p99, maxv float64) {
	if len(ms) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(ms)
	return report.Percentile(ms, 0.50), report.Percentile(ms, 0.90), report.Percentile(ms, 0.99), ms[len(ms)-1]
}

// fanout starts clients SSE followers in a child process, publishes events
// with their send time, and reads how many each follower got and when.
func fanout(ctx context.Context, b *natsbus.Bus, self string, common []string, clients, events int) (Result, error) {
	r := Result{Name: "sse_fanout", Mode: "fanout", Clients: clients, Requests: events,
		Description: fmt.Sprintf("%d events published on the bus, each followed by %d GET /events clients in a second process; latency = publish to receipt", events, clients)}
	cmd := exec.CommandContext(ctx, self, append([]string{"-child", "sse"}, common...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	br := bufio.NewReader(stdout)
	if line, err := br.ReadString('\n'); err != nil || line != "ready\n" {
		return r, fmt.Errorf("sse child: %q %v", line, err)
	}
	start := time.Now()
	pad := strings.Repeat("x", 200)
	for i := range events {
		ev, err := bus.NewEvent("bench/fan/event", map[string]any{"i": i, "sent": time.Now().UnixNano(), "pad": pad}, bus.Origin{Source: "bench"})
		if err != nil {
			return r, err
		}
		if err := b.Publish(ctx, ev); err != nil {
			return r, err
		}
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return r, err
	}
	if err := cmd.Wait(); err != nil {
		return r, err
	}
	var lr loadReport
	if err := json.Unmarshal(rest, &lr); err != nil {
		return r, fmt.Errorf("sse child report: %w", err)
	}
	r.Seconds = time.Since(start).Seconds()
	r.Delivered = lr.Requests
	r.Errors = lr.Errors
	r.Missing = clients*events - lr.Requests
	r.PerSec = float64(lr.Requests) / r.Seconds
	r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs = percentiles(lr.Latencies)
	return r, nil
}

func runChild(mode, url string, n, conc, rate, secs, clients, fanEvents, bodySize int) error {
	tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var lr loadReport
	switch mode {
	case "hook-max":
		lr = hookLoad(hc, url, n, conc, 0, bodySize)
	case "hook-paced":
		lr = hookLoad(hc, url, rate*secs, 0, rate, bodySize)
	case "sse":
		var err error
		if lr, err = sseLoad(url, clients, fanEvents); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown child mode %q", mode)
	}
	lr.CPUus = float64(selfCPU().Microseconds())
	return json.NewEncoder(os.Stdout).Encode(lr)
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hookLoad sends n signed hooks: conc at a time (rate 0), or at rate per
// second open loop, each timed from its scheduled start.
func hookLoad(hc *http.Client, url string, n, conc, rate, bodySize int) loadReport {
	body := []byte(`{"ref": "refs/heads/main", "pad": "` + strings.Repeat("x", max(0, bodySize-40)) + `"}`)
	sig := api.SignHook(api.GitHubSignatureHeader, "", []byte(secret), body, time.Now())
	var (
		mu       sync.Mutex
		lat      = make([]float64, 0, n)
		errs     atomic.Int64
		firstErr string
	)
	send := func(sched time.Time) {
		req, _ := http.NewRequest(http.MethodPost, url+"/hook/bench/push", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(api.GitHubSignatureHeader, sig)
		resp, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
		}
		d := float64(time.Since(sched).Microseconds()) / 1000
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs.Add(1)
			if firstErr == "" {
				firstErr = err.Error()
			}
			return
		}
		lat = append(lat, d)
	}
	start := time.Now()
	var wg sync.WaitGroup
	if rate == 0 {
		var next atomic.Int64
		for range conc {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					send(time.Now())
				}
			})
		}
	} else {
		interval := time.Second / time.Duration(rate)
		for i := range n {
			sched := start.Add(time.Duration(i) * interval)
			time.Sleep(time.Until(sched))
			wg.Go(func() { send(sched) })
		}
	}
	wg.Wait()
	return loadReport{Requests: n, Errors: int(errs.Load()), Seconds: time.Since(start).Seconds(), Latencies: lat, FirstErr: firstErr}
}

// sseLoad follows the stream with clients connections, says "ready", and
// counts events until each client has fanEvents.
func sseLoad(url string, clients, fanEvents int) (loadReport, error) {
	var (
		mu   sync.Mutex
		lat  []float64
		got  atomic.Int64
		errs atomic.Int64
		wg   sync.WaitGroup
	)
	ready := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, url+"/events?tag=bench/fan/*", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer resp.Body.Close()
			ready <- nil
			br := bufio.NewReaderSize(resp.Body, 64<<10)
			local := make([]float64, 0, fanEvents)
			for n := 0; n < fanEvents; {
				line, err := br.ReadSlice('\n')
				if err != nil {
					errs.Add(1)
					break
				}
				rest, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok {
					continue
				}
				var ev struct {
					Data struct {
						Sent int64 `json:"sent"`
					} `json:"data"`
				}
				if err := json.Unmarshal(rest, &ev); err != nil {
					errs.Add(1)
					continue
				}
				local = append(local, float64(time.Now().UnixNano()-ev.Data.Sent)/1e6)
				n++
				got.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	for range clients {
		if err := <-ready; err != nil {
			return loadReport{}, err
		}
	}
	// The subscriptions are attached before the response headers are sent.
	fmt.Println("ready")
	start := time.Now()
	wg.Wait()
	return loadReport{Requests: int(got.Load()), Errors: int(errs.Load()), Seconds: time.Since(start).Seconds(), Latencies: lat}, nil
}

// countStored counts the events the log holds after position before
// through position after: positions are not a count (a batch of events
// shares one stream message).
func countStored(ctx context.Context, b bus.Bus, before, after uint64) (int, error) {
	if after <= before {
		return 0, nil
	}
	var n atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Since: bus.Since{AfterSeq: before}}, func(ev *bus.Event) {
		if ev.Seq <= after {
			n.Add(1)
		}
		if ev.Seq >= after {
			once.Do(func() { close(done) })
		}
	})
	if err != nil {
		return 0, err
	}
	defer sub.Stop()
	select {
	case <-done:
		return int(n.Load()), nil
	case <-time.After(time.Minute):
		return 0, fmt.Errorf("counting the stored events: position %d not reached within a minute", after)
	}
}
