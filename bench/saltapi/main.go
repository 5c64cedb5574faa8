// Command saltapi measures the master's salt-api (issue 35, package
// saltapi): a real `brine master` runs as its own process with
// rest_cherrypy: on 127.0.0.1 and the file eauth, and N real agents
// (agent.Agent, bench/internal/fleet) run in this process. It measures
//
//  1. POST / with a `local` test.ping chunk to every agent, K rounds, as a
//     CI job or SaltGUI's command box sends it: each round's wall time,
//     its reply checked to hold every agent's True;
//  2. GET /events?salt_token=… held open by many Server-Sent Events
//     clients while events are fired at a fixed rate through an operator's
//     connection: each event's lag from its publish to each client's
//     receipt, and a client that stops reading, which must be dropped
//     without the others noticing;
//  3. POST /login under a guessing attack: an address hammering wrong
//     passwords (127.0.0.2) must be answered 429 after 10 failures, while
//     valid logins from 127.0.0.1 keep their latency.
//
// Results go to -out as JSON, with the targets checked.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bench/masterproc"
	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/internal/loopback"
)

// Targets from the issue.
const (
	targetPingP99Seconds   = 1.5
	targetSSEClients       = 1000
	targetLagMaxSeconds    = 1
	targetFailuresBefore   = 10
	targetLoginP99Ms       = 100
	targetLoginP99Ratio    = 2
	agentGlob              = "bench-agent-*"
	apiUser, apiPassword   = "bench", "bench-pass-0123"
	defaultPingRounds      = 20
	defaultSSEClients      = 1000
	defaultEventsPerSecond = 1000
)

type options struct {
	masterproc.Options
	agents   int
	pings    int
	clients  int
	rate     int
	duration time.Duration
	stallCap time.Duration
	logins   int
	hammers  int
	agentsOn string
}

func main() {
	var o options
	o.Flags("saltapi", masterproc.Usage{
		Brine:        "the brine binary whose master (and its salt-api) is measured",
		Keep:         "keep the temporary directory (master logs, data, agents) for inspection",
		CPUProfile:   "write this process's (the agents' and the API clients') CPU profile here",
		Phase:        2 * time.Minute,
		PhaseTimeout: "give up on a phase that takes longer",
	})
	flag.IntVar(&o.agents, "agents", 1000, "agents simulated in this process (N)")
	flag.IntVar(&o.pings, "pings", defaultPingRounds, "rounds of POST / local test.ping to every agent (K)")
	flag.IntVar(&o.clients, "sse-clients", defaultSSEClients, "GET /events clients reading (besides the one that stalls)")
	flag.IntVar(&o.rate, "rate", defaultEventsPerSecond, "events fired per second while the clients read")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long events are fired for the lag measurement")
	flag.DurationVar(&o.stallCap, "stall-cap", 90*time.Second, "after -duration, keep firing until the stalled client is dropped, at most this long")
	flag.IntVar(&o.logins, "logins", 1000, "valid logins timed before, and again during, the attack")
	flag.IntVar(&o.hammers, "hammers", 64, "concurrent connections hammering wrong passwords from 127.0.0.2")
	flag.StringVar(&o.agentsOn, "agents-on", "/dev/shm", "put the agents' directories under this directory, a filesystem apart from the master's (\"\": beside the master's, in its working directory)")
	flag.Parse()
	report.Main("bench/saltapi", o.CPUProfile, func(ctx context.Context) error { return run(ctx, o) })
}

// Results are the three measurements, after the agents' onboarding.
type Results struct {
	Onboarding Onboarding `json:"onboarding"`
	Ping       Ping       `json:"ping"`
	Login      Login      `json:"login"`
	Events     Events     `json:"events"`
}

// Onboarding is how the fleet was brought up before anything was timed;
// not a target here (bench/agents measures it).
type Onboarding struct {
	Agents  int     `json:"agents"`
	Seconds float64 `json:"seconds"`
}

// Ping is K rounds of POST / [{client: local, tgt, fun: test.ping}].
type Ping struct {
	Agents  int       `json:"agents"`
	Request string    `json:"request"`
	Rounds  []pingRun `json:"rounds"`
	// WallMs is the rounds' wall times, from sending the request to
	// having read the whole reply (the target is on its p99: with K < 100
	// rounds, the slowest).
	WallMs report.Dist `json:"wall_ms"`
	// TrueMin is the fewest True returns a reply held.
	TrueMin int `json:"true_min"`
}

// pingRun is one POST /.
type pingRun struct {
	Seconds     float64 `json:"seconds"`
	Status      int     `json:"status"`
	Returns     int     `json:"returns"`
	True        int     `json:"true"`
	ReplyBytes  int     `json:"reply_bytes"`
	MasterCPUMs float64 `json:"master_cpu_ms"`
	// BenchCPUMs is this process's: the thousand agents' side of the
	// round (and the request).
	BenchCPUMs float64 `json:"bench_cpu_ms"`
	Error      string  `json:"error,omitempty"`
}

// settle waits for the master of pid to finish the round before (the
// job store writes each job's record from the stored returns, behind
// them): until it used under a tenth of a core for 250 ms, and 1 s more,
// as bench/jobs waits between its pings.
func settle(ctx context.Context, o options, pid int) error {
	const window = 250 * time.Millisecond
	err := masterproc.Poll(ctx, o.PhaseTimeout, 0, func() bool {
		c0 := report.ProcCPU(pid)
		if !masterproc.Sleep(ctx, window) {
			return false
		}
		return report.ProcCPU(pid)-c0 < window/10
	})
	if err != nil {
		return fmt.Errorf("the master did not go idle: %w", err)
	}
	if !masterproc.Sleep(ctx, time.Second) {
		return ctx.Err()
	}
	return nil
}

// agentID names the fleet's agents, all matched by agentGlob.
func agentID(i int) string { return fmt.Sprintf("bench-agent-%04d", i) }

func run(ctx context.Context, o options) error {
	if o.agents < 1 || o.pings < 1 || o.clients < 1 || o.rate < 1 || o.duration <= 0 || o.logins < 1 || o.hammers < 1 {
		return errors.New("-agents, -pings, -sse-clients, -rate, -logins and -hammers must be at least 1, -duration positive")
	}
	// Per agent: its connection here and its end on the master; per
	// event client the same; plus the master's store and the runtime.
	setup, cleanup, err := masterproc.Prepare("saltapi", o.Bin, uint64(3*o.agents+2*o.clients+1024), o.Keep)
	if err != nil {
		return err
	}
	defer cleanup()
	if o.agentsOn != "" {
		cleanAgents, err := setup.PlaceAgents(o.agentsOn)
		if err != nil {
			return err
		}
		defer cleanAgents()
	}
	port, err := loopback.Port()
	if err != nil {
		return err
	}
	users := filepath.Join(setup.Dir, "api-users")
	if err := os.WriteFile(users, []byte(apiUser+":"+apiPassword+"\n"), 0o600); err != nil {
		return err
	}
	apiConf := fmt.Sprintf(`rest_cherrypy:
  port: %d
  host: 127.0.0.1
  disable_ssl: true
netapi_enable_clients: [local, local_async, runner, wheel]
external_auth:
  file:
    ^filename: %s
    ^filetype: text
    %s: ['.*', '@runner', '@wheel', '@jobs']
`, port, users, apiUser)
	if err := setup.AddConfig(apiConf); err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	rep := report.New("saltapi")
	rep.Setup["command"] = fmt.Sprintf("go run ./bench/saltapi -brine %s -agents %d -pings %d -sse-clients %d -rate %d -duration %s -stall-cap %s -logins %d -hammers %d -agents-on %q -out %s",
		o.Bin, o.agents, o.pings, o.clients, o.rate, o.duration, o.stallCap, o.logins, o.hammers, o.agentsOn, o.Out)
	rep.Setup["master"] = "`brine master` as its own process (" + o.Bin + "), embedded fsync'ed JetStream store, auto_accept: true, log_level info (default), on 127.0.0.1, salt-api on " + base
	rep.Setup["master_config_added"] = apiConf
	rep.Setup["agents"] = fmt.Sprintf("%d real agent.Agent in this process (bench/internal/fleet), each with its own config dir, CURVE key pair, outbox of synced files, TCP connection and CURVE session", o.agents)
	rep.Setup["agents_n"] = strconv.Itoa(o.agents)
	rep.Setup["ping_rounds_k"] = strconv.Itoa(o.pings)
	setup.Describe(rep)

	fl, err := fleet.New(setup, o.agents, agentID, "")
	if err != nil {
		return err
	}
	m, err := fleet.StartMaster(ctx, setup, "master-1.log")
	if err != nil {
		return err
	}
	defer m.Close()
	pid := m.PID()

	var res Results
	defer fl.Stop()
	res.Onboarding, err = onboard(ctx, o, fl, m)
	if err != nil {
		return m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltapi: %d agents connected in %.1f s\n", o.agents, res.Onboarding.Seconds)
	api := &client{base: base, http: &http.Client{Timeout: time.Minute}}
	if err := masterproc.Poll(ctx, 30*time.Second, 50*time.Millisecond, api.welcome); err != nil {
		return m.Fail(fmt.Errorf("salt-api does not answer GET / at %s: %w", base, err))
	}
	tok, _, err := api.login(ctx, apiPassword)
	if err != nil {
		return m.Fail(err)
	}

	// (1) test.ping through POST /.
	res.Ping, err = ping(ctx, o, api, tok, pid, fl)
	if err != nil {
		return m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltapi: ping: p50 %.0f ms, p99 %.0f ms\n", res.Ping.WallMs.P50, res.Ping.WallMs.P99)

	// (3) Logins under attack, before the events (which end with a
	// stalled client dropped).
	res.Login, err = logins(ctx, o, api, pid)
	if err != nil {
		return m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltapi: login p99 %.1f ms before, %.1f ms during the attack\n", res.Login.Before.P99, res.Login.During.P99)

	// (2) Event streams.
	res.Events, err = events(ctx, o, m, base, tok)
	if err != nil {
		return m.Fail(err)
	}
	fmt.Fprintf(os.Stderr, "bench/saltapi: events: %d clients connected, %d refused; worst lag %.0f ms\n",
		res.Events.Connected, res.Events.Refused, res.Events.Window.MaxLagMs.Max)

	if !fl.Stop() {
		rep.Fail(fmt.Sprintf("the agents did not stop within %s of their context ending", fleet.StopTimeout))
	}
	if i, e := fl.Err(); e != nil {
		rep.Fail(fmt.Sprintf("agent %d: Run returned %v", i, e))
	}
	m.End(rep)

	rep.Results = res
	rep.Setup["load_avg_after"] = report.LoadAvg()
	p, l, e := res.Ping, res.Login, res.Events
	rep.Check("ping", "wall_ms.p99", "<=", targetPingP99Seconds*1000, p.WallMs.P99)
	rep.Check("ping", "true_min", ">=", float64(o.agents), float64(p.TrueMin))
	rep.Check("events", "connected", ">=", targetSSEClients, float64(e.Connected))
	rep.Check("events", "window.max_lag_ms.max", "<=", targetLagMaxSeconds*1000, e.Window.MaxLagMs.Max)
	rep.Check("events", "stall.max_lag_ms.max", "<=", targetLagMaxSeconds*1000, e.Stall.MaxLagMs.Max)
	rep.Check("events", "stalled_dropped", ">=", 1, b2f(e.Stalled.Dropped))
	rep.Check("events", "others_dropped", "<=", 0, float64(e.OthersDropped))
	rep.Check("events", "missed", "<=", 0, float64(e.Missed))
	rep.Check("login", "failures_before_429", "<=", targetFailuresBefore, float64(l.FailuresBefore429))
	rep.Check("login", "failures_before_429", ">=", targetFailuresBefore, float64(l.FailuresBefore429))
	rep.Check("login", "during.p99", "<=", targetLoginP99Ms, l.During.P99)
	rep.Check("login", "p99_ratio", "<=", targetLoginP99Ratio, l.P99Ratio)
	if l.HammerUnthrottled > 0 {
		rep.Fail(fmt.Sprintf("login: %d wrong passwords from the hammering address were answered other than 429 once it was turned away", l.HammerUnthrottled))
	}
	if l.ValidFailed > 0 {
		rep.Fail(fmt.Sprintf("login: %d valid logins from 127.0.0.1 failed", l.ValidFailed))
	}
	if e.PublishErrors > 0 {
		rep.Fail(fmt.Sprintf("events: %d publishes failed", e.PublishErrors))
	}
	rep.Notes = append(rep.Notes, notes(o)...)
	return rep.Finish(o.Out, os.Stdout)
}

// onboard starts every agent and waits until all are connected, their
// start events delivered and the master lists them.
func onboard(ctx context.Context, o options, fl *fleet.Fleet, m *fleet.Master) (Onboarding, error) {
	ob := Onboarding{Agents: o.agents}
	t0 := time.Now()
	fl.Start(ctx)
	if err := masterproc.Poll(ctx, o.PhaseTimeout, 50*time.Millisecond, func() bool { return fl.Ready() == o.agents && fl.Queued() == 0 }); err != nil {
		return ob, fmt.Errorf("onboarding: %d of %d agents ready, %d outbox items left: %w", fl.Ready(), o.agents, fl.Queued(), err)
	}
	if err := m.Listed(ctx, agentGlob, o.agents, o.PhaseTimeout, 100*time.Millisecond, nil); err != nil {
		return ob, fmt.Errorf("onboarding: %w", err)
	}
	ob.Seconds = report.Round(time.Since(t0).Seconds(), 3)
	return ob, nil
}

// ping runs K rounds of POST / local test.ping to every agent, one after
// the other, each once the agents' outboxes are empty.
func ping(ctx context.Context, o options, api *client, tok string, pid int, fl *fleet.Fleet) (Ping, error) {
	body := `[{"client": "local", "tgt": "` + agentGlob + `", "fun": "test.ping"}]`
	p := Ping{Agents: o.agents, Request: "POST / X-Auth-Token: <token>, Content-Type: application/json: " + body, TrueMin: o.agents}
	var walls []time.Duration
	for k := range o.pings {
		if err := masterproc.Poll(ctx, o.PhaseTimeout, 20*time.Millisecond, func() bool { return fl.Queued() == 0 }); err != nil {
			return p, fmt.Errorf("ping round %d: the agents' outboxes: %d items left: %w", k+1, fl.Queued(), err)
		}
		if err := settle(ctx, o, pid); err != nil {
			return p, fmt.Errorf("ping round %d: %w", k+1, err)
		}
		c0, b0 := report.ProcCPU(pid), report.ProcCPU(0)
		t0 := time.Now()
		status, reply, err := api.post(ctx, "/", tok, body)
		wall := time.Since(t0)
		r := pingRun{Seconds: report.Round(wall.Seconds(), 4), Status: status, ReplyBytes: len(reply),
			MasterCPUMs: report.Round(float64(report.ProcCPU(pid)-c0)/float64(time.Millisecond), 1),
			BenchCPUMs:  report.Round(float64(report.ProcCPU(0)-b0)/float64(time.Millisecond), 1)}
		if err == nil {
			r.Returns, r.True, err = countTrue(reply)
		}
		if err != nil {
			r.Error = err.Error()
		}
		p.Rounds = append(p.Rounds, r)
		walls = append(walls, wall)
		p.TrueMin = min(p.TrueMin, r.True)
		if k == 0 && err != nil {
			return p, fmt.Errorf("ping round 1: %w", err)
		}
	}
	p.WallMs = report.DistOf(walls)
	return p, nil
}

// countTrue reads a local chunk's reply, {"return": [{id: return}]}: how
// many returns, and how many of them True.
func countTrue(reply []byte) (returns, trues int, err error) {
	var v struct {
		Return []map[string]json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal(reply, &v); err != nil {
		return 0, 0, fmt.Errorf("the reply: %w: %q", err, report.Clip(reply, 200))
	}
	if len(v.Return) != 1 {
		return 0, 0, fmt.Errorf("the reply holds %d returns, want 1 (one chunk): %q", len(v.Return), report.Clip(reply, 200))
	}
	for _, r := range v.Return[0] {
		returns++
		if bytes.Equal(bytes.TrimSpace(r), []byte("true")) {
			trues++
		}
	}
	return returns, trues, nil
}

// client is this process's salt-api caller from 127.0.0.1.
type client struct {
	base string
	http *http.Client
}

// welcome reports whether GET / answers 200.
func (c *client) welcome() bool {
	resp, err := c.http.Get(c.base + "/")
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// post sends a JSON body to path with the token (none: ""), and returns
// the status and the whole reply; a status other than 200 is an error.
func (c *client) post(ctx context.Context, path, tok, body string) (int, []byte, error) {
	return postWith(ctx, c.http, c.base+path, tok, body)
}

// postWith is post through hc.
func postWith(ctx context.Context, hc *http.Client, url, tok, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if tok != "" {
		req.Header.Set("X-Auth-Token", tok)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("POST %s: %s: %q", req.URL.Path, resp.Status, report.Clip(b, 200))
	}
	return resp.StatusCode, b, err
}

// loginBody is POST /login's JSON for the bench's user with password.
func loginBody(password string) string {
	b, _ := json.Marshal(map[string]string{"username": apiUser, "password": password, "eauth": "file"})
	return string(b)
}

// login logs the bench's user in with password and returns the token and
// the reply's status.
func (c *client) login(ctx context.Context, password string) (string, int, error) {
	status, reply, err := c.post(ctx, "/login", "", loginBody(password))
	if err != nil {
		return "", status, err
	}
	var v struct {
		Return []struct {
			Token string `json:"token"`
		} `json:"return"`
	}
	if err := json.Unmarshal(reply, &v); err != nil || len(v.Return) != 1 || v.Return[0].Token == "" {
		return "", status, fmt.Errorf("POST /login: no token in the reply %q (%v)", report.Clip(reply, 200), err)
	}
	return v.Return[0].Token, status, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// notes say how each figure was taken.
func notes(o options) []string {
	return []string{
		"ping: K rounds of POST / with [{client: local, tgt: '" + agentGlob + "', fun: test.ping}] (no timeout key: salt-api's LocalClient waits up to 5 s for returns) and the login's X-Auth-Token, one after the other, each once the agents' outboxes were empty, the master had been idle (under 10% of a core) for 250 ms — the job records of the round before written, as bench/jobs waits for them — and 1 s later; a round's wall time runs from sending the request to having read the whole reply, and the reply must hold every agent's True (true_min). The target is on wall_ms.p99, which with K < 100 rounds is the slowest round",
		"events: a stalled client connects first (a raw TCP connection with SO_RCVBUF " + strconv.Itoa(stalledRcvBuf) + " set before connecting; it reads the response's headers and then nothing), then -sse-clients clients open GET /events?salt_token=<token> (Salt's framing, no tag filter, as SaltGUI opens it), 32 at a time, each on its own connection; a client answered other than 200 is refused (refused_status, refused_reply). Events tagged " + eventTag + " carrying {seq, sent_us} are then fired through the bench's operator connection to the master (gateway.Client.Publish, acknowledged once stored durably), one every 1/rate s on a fixed schedule, each from its own goroutine (at most 512 in flight); a reading client's lag for an event is the time it read the event's data line minus sent_us, the moment the publish started (one clock: the clients and the publisher are this process)",
		"events.window is the events of the first -duration; the firing then goes on (events.stall) until the master's log says the stalled client was dropped (polled every 250 ms; dropped_after_seconds is from the first event fired), at most -stall-cap. per_client_p99_lag_ms and per_client_max_lag_ms are distributions over the reading clients of each one's p99 and max lag: the target (none lagging beyond 1 s) is on the worst client's max. The stalled client's drop is checked in the master's log (event stream client dropped, with its remote address) and from its side: read after the drop, its connection ends (stalled_client.end). others_dropped counts drops of reading clients in the master's log, ended_early reading clients whose stream ended before the bench closed it, missed the events a reading client still connected did not receive",
		"login: -logins valid POST /login (JSON: username, password, eauth file) from 127.0.0.1, one after the other, each timed to its whole reply (a token minted in the token bucket, a salt/auth/netapi event stored): before, alone; during, while -hammers connections from 127.0.0.2 (net.Dialer LocalAddr) send wrong passwords back to back (each waiting for its answer, which saltapi holds for 1 s once the address is turned away), from 1.5 s before the valid logins to at least 4 s after the first (hammer_requests counts the answers). Before the hammering, the attacker's wrong passwords are sent one at a time until the first 429 (probe_statuses, failures_before_429: the target is exactly 10), then the right password from 127.0.0.2 (right_password_from_attacker_status: 429 too, as docs/salt-api.md says). p99_ratio is during.p99 / before.p99",
		"the agents, the event clients, the publisher and the login callers run in this process, sharing the machine's 2 cores with the master (and with other sessions' builds: load_avg)",
		"the agents' directories (configuration, keys, outbox, proc/, done.log) are under -agents-on (setup.agents_dir), a filesystem apart from the master's data, as a thousand machines' disks are: every return an agent queues is still written and synced to its outbox before it is sent. With -agents-on \"\" they share the master's disk, and each ping round's agent CPU grows with the files the rounds before created and deleted (saltapi-agents-on-disk.json)",
	}
}
