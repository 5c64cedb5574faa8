package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/loopback"
	"github.com/brinehq/brine/internal/syncbuf"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
)

// testConfig writes a master configuration with its own data directory and
// ports, plus extra, and loads it.
func testConfig(t *testing.T, extra string) *config.Master {
	t.Helper()
	dir := t.TempDir()
	var ports [2]int
	for i := range ports {
		p, err := loopback.Port()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	conf := fmt.Sprintf("id: t1\ndata_dir: %s\npublish_port: %d\nret_port: %d\n%s", filepath.Join(dir, "data"), ports[0], ports[1], extra)
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// start runs a master on cfg until the test ends.
func start(t *testing.T, cfg *config.Master) *Master {
	t.Helper()
	return startOpts(t, cfg, Options{})
}

// startOpts runs a master on cfg with o's other options until the test
// ends.
func startOpts(t *testing.T, cfg *config.Master, o Options) *Master {
	t.Helper()
	dir := filepath.Dir(cfg.Files[0])
	o.Config, o.ConfigPath, o.LogOutput, o.Version = cfg, dir, io.Discard, "test"
	o.Load = func() (*config.Master, error) { return config.Load(dir) }
	m, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after a clean stop: %v", err)
		}
	})
	return m
}

// TestDryRunKnowsEveryFunctionOfTheMaster checks that `brine reactor test`
// (DryRunFunctions) declares exactly the functions a running master has,
// from the same list, and that the declared ones do not run.
func TestDryRunKnowsEveryFunctionOfTheMaster(t *testing.T) {
	m := start(t, testConfig(t, ""))
	dry, err := DryRunFunctions()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dry.Names(), m.Functions().Names(); !slices.Equal(got, want) {
		t.Errorf("dry run declares %v\nmaster has %v", got, want)
	}
	for _, name := range []string{"ddns.add_host", "dnsmasq.refresh", "slack.post", "mine.get", "cloud.profile", "jobs.lookup_jid"} {
		if !slices.Contains(dry.Names(), name) {
			t.Errorf("dry run lacks %s", name)
		}
	}
	_, err = dry.Call(context.Background(), "dnsmasq.refresh", nil, nil, nil)
	if !errors.Is(err, ErrNeedsMaster) {
		t.Errorf("dry-run dnsmasq.refresh: %v, want ErrNeedsMaster", err)
	}
	if _, err := dry.Call(context.Background(), "test.arg", []any{"x"}, nil, nil); err != nil {
		t.Errorf("dry-run built-in test.arg: %v", err)
	}
}

// TestMasterAnswersItsRequests runs requests of master/rpc against a master
// in this process: a job, a mine look-up and the status of an integration
// that is off.
func TestMasterAnswersItsRequests(t *testing.T) {
	cfg := testConfig(t, "")
	m := start(t, cfg)
	_, reqAddr := m.Addrs()
	key, err := gateway.LoadKey(cfg.Settings.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := gateway.Dial(ctx, reqAddr, key)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res struct {
		JID     string `json:"jid"`
		Return  any    `json:"return"`
		Success bool   `json:"success"`
	}
	if err := c.Call(ctx, rpc.Run, rpc.RunRequest{Fun: "test.arg", Args: []any{"hello"}, User: "alice"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.JID == "" {
		t.Errorf("run test.arg: %+v", res)
	}
	var job map[string]any
	if err := c.Call(ctx, rpc.JobsShow, rpc.JobRequest{JID: res.JID}, &job); err != nil {
		// The job store records from the bus: give it a moment.
		deadline := time.Now().Add(10 * time.Second)
		for err != nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			err = c.Call(ctx, rpc.JobsShow, rpc.JobRequest{JID: res.JID}, &job)
		}
		if err != nil {
			t.Fatalf("jobs.show %s: %v", res.JID, err)
		}
	}
	if job["user"] != "alice" {
		t.Errorf("job record %v", job)
	}
	var hosts []any
	if err := c.Call(ctx, rpc.MineList, struct{}{}, &hosts); err != nil || len(hosts) != 0 {
		t.Errorf("mine.list of an empty mine: %v, %v", hosts, err)
	}
	err = c.Call(ctx, rpc.Status("slack"), struct{}{}, nil)
	if err == nil || !strings.Contains(err.Error(), "slack is not configured") {
		t.Errorf("slack.status without a slack: section: %v", err)
	}
}

// TestFailedStartLeavesNothingRunning checks that a master that cannot
// start (here: an integration refuses its section) releases its ports and
// its event store.
func TestFailedStartLeavesNothingRunning(t *testing.T) {
	cfg := testConfig(t, "dnsmasq:\n  pidfle: /run/dnsmasq.pid\n")
	_, err := New(context.Background(), Options{Config: cfg, LogOutput: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "pidfle") {
		t.Fatalf("New with a bad dnsmasq block: %v, want an error naming the key", err)
	}
	s := cfg.Settings
	for _, port := range []int{s.PublishPort, s.RetPort} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Errorf("port %d still held after a failed start: %v", port, err)
			continue
		}
		ln.Close()
	}
	b, err := natsbus.Open(context.Background(), natsbus.Config{Dir: s.DataDir})
	if err != nil {
		t.Fatalf("event store not released after a failed start: %v", err)
	}
	b.Close()
}

// TestMappingInMasterDReloadsOnChange checks that a reactor mapping written
// into master.d takes effect without a SIGHUP, as the docs promise.
func TestMappingInMasterDReloadsOnChange(t *testing.T) {
	cfg := testConfig(t, "")
	m := start(t, cfg)
	dir := filepath.Dir(cfg.Files[0])
	reaction := filepath.Join(dir, "r.sls")
	if err := os.WriteFile(reaction, []byte("x:\n  runner.test.arg: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("reactor:\n  - 'myco/*':\n    - %s\n", reaction)
	if err := os.WriteFile(filepath.Join(dir, "master.d", "reactor.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for m.reactor.Matches("myco/x") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the mapping written to master.d did not take effect within 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSecretsStayOutOfEventsStoreLogsAndSlack runs a job whose arguments
// and return carry distinctive secrets and greps everything the master
// keeps or sends for them: the events on the bus, the job store, the reply,
// the log and what was posted to Slack.
func TestSecretsStayOutOfEventsStoreLogsAndSlack(t *testing.T) {
	var (
		mu    sync.Mutex
		posts []string
	)
	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.URL.Path+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true, "channel": "C1", "ts": "1700000000.000100"}`)
	}))
	defer slackAPI.Close()
	cfg := testConfig(t, fmt.Sprintf("slack:\n  token: xoxb-1-test\n  api_url: %s/\n  channel: '#audit'\n  rate: 0\n", slackAPI.URL))
	log := new(syncbuf.Buffer)
	dir := filepath.Dir(cfg.Files[0])
	m, err := New(context.Background(), Options{Config: cfg, ConfigPath: dir, LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The audit starts at new events: let its consumer exist first.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := m.bus.Consumer(ctx, "slack"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Slack audit's consumer was not created")
		}
	}
	secrets := []string{"S3cr3tPassw0rd-91", "xoxb-9999-SECRETTOKEN", "UrlPa55word", "c2VjcmV0VFNJR2tleQ==", "PosPass77"}
	req := rpc.RunRequest{Fun: "test.arg", User: "alice",
		Args: []any{"password=PosPass77"},
		Kwargs: map[string]any{"password": "S3cr3tPassw0rd-91", "token": "xoxb-9999-SECRETTOKEN",
			"url": "https://deploy:UrlPa55word@example.com/x", "keys": map[string]any{"secret": "c2VjcmV0VFNJR2tleQ=="}}}
	reply, err := m.run(ctx, mustJSON(t, req))
	if err != nil {
		t.Fatal(err)
	}
	res := reply.(jobs.Result)
	var job any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if job, err = m.jobs.Get(ctx, res.JID); err == nil && !job.(*jobs.Job).Active() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not recorded: %v", res.JID, err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(posts)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Slack got %d posts, want the job and its result", n)
		}
	}
	var events []string
	sub, err := m.bus.Subscribe(ctx, bus.SubscribeOptions{Since: bus.Beginning}, func(ev *bus.Event) {
		mu.Lock()
		events = append(events, ev.Tag+" "+string(ev.Data))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	sub.Stop()
	mu.Lock()
	defer mu.Unlock()
	if len(events) < 2 {
		t.Fatalf("read %d events back", len(events))
	}
	places := map[string]string{
		"events": strings.Join(events, "\n"), "job store": string(mustJSON(t, job)), "reply": string(mustJSON(t, res)),
		"log": log.String(), "slack": strings.Join(posts, "\n"),
	}
	for where, text := range places {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q:\n%s", where, s, text)
			}
		}
	}
	if !strings.Contains(places["reply"], jobs.Masked) {
		t.Errorf("the reply shows no masked value: %s", places["reply"])
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startAndStop starts a master on cfg and stops it once its log holds
// until (at once when empty), returning its log.
func startAndStop(t *testing.T, cfg *config.Master, until string) *syncbuf.Buffer {
	t.Helper()
	log := new(syncbuf.Buffer)
	m, err := New(context.Background(), Options{Config: cfg, LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), until); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", until, log)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestUnknownKeysWarnOrRefuse checks that a misspelt key is reported with
// its line and the key it probably means, and that strict refuses to start.
func TestUnknownKeysWarnOrRefuse(t *testing.T) {
	log := startAndStop(t, testConfig(t, "reactr:\n  - 'a/*': [/x.sls]\n"), "")
	if want := `master:5: unknown key \"reactr\" (did you mean \"reactor\"?)`; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, log)
	}
	_, err := New(context.Background(), Options{Config: testConfig(t, "strict: true\nret_prot: 4506\n"), LogOutput: io.Discard})
	if err == nil || !strings.Contains(err.Error(), `master:6: unknown key "ret_prot" (did you mean "ret_port"?)`) {
		t.Errorf("strict start with a typo: %v", err)
	}
}

// TestLogNamesEachComponentOnce: every log line of a part carries its
// component once (the gateway's used to say component=gateway twice).
func TestLogNamesEachComponentOnce(t *testing.T) {
	text := startAndStop(t, testConfig(t, "log_level: debug\n"), "gateway listening").String()
	if !strings.Contains(text, "component=gateway") {
		t.Fatalf("no gateway line in the log:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Count(line, "component=") > 1 {
			t.Errorf("component named twice: %s", line)
		}
	}
}
