package saltapi

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
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
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/jobs"
)

// apiFleet is a Backend with three minions that answer every job with their
// arguments (test.ping with true), and runner and wheel functions that
// answer with what they were called with.
type apiFleet struct {
	mu    sync.Mutex
	jobs  []jobs.Targeted
	calls []string
}

var apiFleetIDs = []string{"db1", "web1", "web2"}

func (f *apiFleet) Minions(_ context.Context, tgt any, tgtType string) ([]string, error) {
	var out []string
	for _, id := range apiFleetIDs {
		switch tgtType {
		case "list":
			for _, x := range asList(tgt) {
				if x == id {
					out = append(out, id)
				}
			}
		default:
			if fnmatch.Compile(fmt.Sprint(tgt)).Match(id) {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

func (f *apiFleet) RunJob(ctx context.Context, t jobs.Targeted, _ bus.Origin, _ time.Duration) (jobs.Outcome, error) {
	ids, _ := f.Minions(ctx, t.Tgt, t.TgtType)
	f.mu.Lock()
	f.jobs = append(f.jobs, t)
	f.mu.Unlock()
	out := jobs.Outcome{Published: jobs.Published{JID: "20261128000000000001", Minions: ids}, Returns: map[string]jobs.Return{}}
	for _, id := range ids {
		var ret any = t.Arg
		if t.Fun == "test.ping" {
			ret = true
		}
		out.Returns[id] = jobs.Return{ID: id, Return: ret, Success: true}
	}
	return out, nil
}

func (f *apiFleet) PublishJob(ctx context.Context, t jobs.Targeted, _ bus.Origin) (jobs.Published, error) {
	ids, _ := f.Minions(ctx, t.Tgt, t.TgtType)
	return jobs.Published{JID: "20261128000000000002", Minions: ids}, nil
}

func (f *apiFleet) Call(_ context.Context, wheel, async bool, fun string, args []any, kwargs map[string]any, user string) (jobs.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("wheel=%v async=%v %s", wheel, async, fun))
	f.mu.Unlock()
	if fun == "no.such" {
		return jobs.Result{}, fmt.Errorf("'%s' is not available", fun)
	}
	return jobs.Result{JID: "20261128000000000003", Fun: fun, Return: map[string]any{"args": args, "kwargs": kwargs, "user": user}, Success: true}, nil
}

// apiRig is a salt-api server on a apiFleet, with a file eauth of two users:
// alice may do anything, bob test.* on web*.
func apiRig(t *testing.T, enabled ...string) (*httptest.Server, *apiFleet) {
	srv, f, _ := apiRigBus(t, enabled...)
	return srv, f
}

// apiRigBus is apiRig, with the bus the server streams events from.
func apiRigBus(t *testing.T, enabled ...string) (*httptest.Server, *apiFleet, *natsbus.Bus) {
	t.Helper()
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("alice:wonder\nbob:builder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ea, err := ParseEAuth(map[string]any{"file": map[string]any{
		"^filename": users, "^filetype": "text",
		"alice": []any{".*", "@runner", "@wheel", "@jobs"},
		"bob":   []any{map[string]any{"web*": []any{"test.*"}}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	kv, err := b.Bucket(ctx, TokenBucket)
	if err != nil {
		t.Fatal(err)
	}
	if enabled == nil {
		enabled = Clients
	}
	f := &apiFleet{}
	s := New(Config{Enabled: enabled, TokenExpire: time.Hour, MaxBody: 1 << 20, DisableSSL: true, EAuth: ea}, f, kv, b, "brine://t/salt-api", slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv, f, b
}

// call posts body (JSON unless ct says otherwise) and returns the status
// and the decoded reply.
func call(t *testing.T, srv *httptest.Server, path, token, ct, body string) (int, map[string]any, http.Header) {
	t.Helper()
	if ct == "" {
		ct = "application/json"
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: reply %q: %v", path, b, err)
	}
	return resp.StatusCode, v, resp.Header
}

func login(t *testing.T, srv *httptest.Server, user, pass string) string {
	t.Helper()
	code, v, h := call(t, srv, "/login", "", "", fmt.Sprintf(`{"username": %q, "password": %q, "eauth": "file"}`, user, pass))
	if code != http.StatusOK {
		t.Fatalf("login %s: %d %v", user, code, v)
	}
	ret := v["return"].([]any)[0].(map[string]any)
	if ret["token"] != h.Get("X-Auth-Token") || ret["user"] != user || ret["eauth"] != "file" {
		t.Fatalf("login reply %v, header %q", ret, h.Get("X-Auth-Token"))
	}
	if ret["expire"].(float64)-ret["start"].(float64) < 3599 {
		t.Fatalf("token lives %v s", ret["expire"].(float64)-ret["start"].(float64))
	}
	return ret["token"].(string)
}

func TestLoginAndLowstate(t *testing.T) {
	srv, f := apiRig(t)
	if code, _, _ := call(t, srv, "/login", "", "", `{"username": "alice", "password": "nope", "eauth": "file"}`); code != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", code)
	}
	if code, _, _ := call(t, srv, "/", "", "", `[{"client": "local", "tgt": "*", "fun": "test.ping"}]`); code != http.StatusUnauthorized {
		t.Fatalf("lowstate without a token: %d", code)
	}
	alice := login(t, srv, "alice", "wonder")

	for _, c := range []struct {
		name, ct, body string
		want           string
	}{
		{"local", "", `[{"client": "local", "tgt": "*", "fun": "test.ping"}]`, `[{"db1":true,"web1":true,"web2":true}]`},
		{"local full_return", "", `[{"client": "local", "tgt": "web1", "fun": "test.ping", "full_return": true}]`,
			`[{"web1":{"jid":"20261128000000000001","ret":true,"retcode":0}}]`},
		{"local_async", "", `[{"client": "local_async", "tgt": "web*", "fun": "test.ping"}]`, `[{"jid":"20261128000000000002","minions":["web1","web2"]}]`},
		{"form, arg repeated", "application/x-www-form-urlencoded", `client=local&tgt=db1&fun=test.arg&arg=a&arg=b`, `[{"db1":["a","b"]}]`},
		{"yaml", "application/x-yaml", "- client: local\n  tgt: db1\n  fun: test.arg\n  arg: one\n  kwarg: {k: 1}\n", `[{"db1":["one",{"__kwarg__":true,"k":1}]}]`},
		{"runner", "", `[{"client": "runner", "fun": "jobs.list_jobs", "search_function": "test.*"}]`,
			`[{"args":null,"kwargs":{"search_function":"test.*"},"user":"alice"}]`},
		{"runner, KEY=VALUE in arg", "", `[{"client": "runner", "fun": "jobs.list_jobs", "arg": ["search_function=test.*", "limit=5"]}]`,
			`[{"args":null,"kwargs":{"limit":5,"search_function":"test.*"},"user":"alice"}]`},
		{"runner_async", "", `[{"client": "runner_async", "fun": "jobs.list_jobs"}]`, `[{"jid":"20261128000000000003","tag":"salt/run/20261128000000000003"}]`},
		{"wheel", "", `[{"client": "wheel", "fun": "key.list_all"}]`,
			`[{"data":{"fun":"wheel.key.list_all","jid":"20261128000000000003","return":{"args":null,"kwargs":{},"user":"alice"},"success":true,"tag":"salt/wheel/20261128000000000003","user":"alice"},"tag":"salt/wheel/20261128000000000003"}]`},
		{"two chunks", "", `[{"client": "local", "tgt": "web1", "fun": "test.ping"}, {"client": "wheel_async", "fun": "key.list_all"}]`,
			`[{"web1":true},{"jid":"20261128000000000003","tag":"salt/wheel/20261128000000000003"}]`},
	} {
		code, v, _ := call(t, srv, "/", alice, c.ct, c.body)
		got, _ := json.Marshal(v["return"])
		if code != http.StatusOK || string(got) != c.want {
			t.Errorf("%s: %d %s, want %s", c.name, code, got, c.want)
		}
	}
	// As Salt's clients: a function that is not there answers, its error
	// as the return.
	if code, v, _ := call(t, srv, "/", alice, "", `[{"client": "runner", "fun": "no.such"}]`); code != http.StatusOK || !strings.Contains(fmt.Sprint(v["return"]), "not available") {
		t.Errorf("unknown runner: %d %v", code, v)
	}
	if code, v, _ := call(t, srv, "/", alice, "", `[{"client": "ssh", "tgt": "*", "fun": "test.ping"}]`); code != http.StatusBadRequest || v["return"] != "Invalid client specified: 'ssh'" {
		t.Errorf("ssh client: %d %v", code, v)
	}
	if len(f.jobs) != 5 { // local_async publishes without waiting
		t.Errorf("%d jobs ran and waited for, want 5", len(f.jobs))
	}

	// Logged out, the token is no more.
	if code, _, _ := call(t, srv, "/logout", alice, "", ``); code != http.StatusOK {
		t.Fatalf("logout: %d", code)
	}
	if code, _, _ := call(t, srv, "/", alice, "", `[{"client": "local", "tgt": "*", "fun": "test.ping"}]`); code != http.StatusUnauthorized {
		t.Fatalf("a cleared token still runs: %d", code)
	}
}

func TestACLsAndClients(t *testing.T) {
	srv, f := apiRig(t, "local", "runner")
	bob := login(t, srv, "bob", "builder")
	for _, c := range []struct {
		body string
		code int
	}{
		{`[{"client": "local", "tgt": "web*", "fun": "test.ping"}]`, http.StatusOK},
		{`[{"client": "local", "tgt": "web1", "fun": "test.ping"}]`, http.StatusOK},
		{`[{"client": "local", "tgt": "*", "fun": "test.ping"}]`, http.StatusUnauthorized}, // db1 is not bob's
		{`[{"client": "local", "tgt": "web1", "fun": "cmd.run", "arg": "id"}]`, http.StatusUnauthorized},
		{`[{"client": "runner", "fun": "jobs.list_jobs"}]`, http.StatusUnauthorized},
		{`[{"client": "wheel", "fun": "key.list_all"}]`, http.StatusBadRequest}, // not enabled
	} {
		code, v, _ := call(t, srv, "/", bob, "", c.body)
		if code != c.code {
			t.Errorf("%s: %d %v, want %d", c.body, code, v, c.code)
		}
	}
	if code, v, _ := call(t, srv, "/", bob, "", `[{"client": "wheel", "fun": "key.list_all"}]`); v["return"] != "Client disabled: 'wheel'. Add to 'netapi_enable_clients' master config option to enable." {
		t.Errorf("disabled client: %d %v", code, v)
	}
	if slices.ContainsFunc(f.jobs, func(j jobs.Targeted) bool { return j.Fun == "cmd.run" }) || len(f.calls) != 0 {
		t.Errorf("refused calls ran: %v %v", f.jobs, f.calls)
	}
}

func TestRunWithInlineCredentials(t *testing.T) {
	srv, _ := apiRig(t)
	code, v, _ := call(t, srv, "/run", "", "", `[{"client": "local", "tgt": "web2", "fun": "test.ping", "username": "alice", "password": "wonder", "eauth": "file"}]`)
	if got, _ := json.Marshal(v["return"]); code != http.StatusOK || string(got) != `[{"web2":true}]` {
		t.Fatalf("/run: %d %s", code, got)
	}
	if code, _, _ := call(t, srv, "/run", "", "", `[{"client": "local", "tgt": "web2", "fun": "test.ping", "username": "alice", "password": "x", "eauth": "file"}]`); code != http.StatusUnauthorized {
		t.Fatalf("/run with a wrong password: %d", code)
	}
	// A token from /token works inline.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/token", strings.NewReader(`{"username": "alice", "password": "wonder", "eauth": "file"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var toks []map[string]any
	json.NewDecoder(resp.Body).Decode(&toks)
	resp.Body.Close()
	if len(toks) != 1 {
		t.Fatalf("/token: %v", toks)
	}
	code, v, _ = call(t, srv, "/run", "", "", fmt.Sprintf(`[{"client": "local", "tgt": "db1", "fun": "test.ping", "token": %q}]`, toks[0]["token"]))
	if got, _ := json.Marshal(v["return"]); code != http.StatusOK || string(got) != `[{"db1":true}]` {
		t.Fatalf("/run with a token: %d %s", code, got)
	}
}

func TestWelcomeAndYAML(t *testing.T) {
	srv, _ := apiRig(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("Accept", "application/x-yaml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-yaml" || !strings.Contains(string(b), "return: Welcome") {
		t.Fatalf("GET / as YAML: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

func TestEventsMinionsKeysJobs(t *testing.T) {
	srv, _, b := apiRigBus(t)
	alice := login(t, srv, "alice", "wonder")
	get := func(path, token string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	if code, _ := get("/minions", ""); code != http.StatusUnauthorized {
		t.Fatalf("GET /minions without a token: %d", code)
	}
	if code, v := get("/minions/web1", alice); code != http.StatusOK || fmt.Sprint(v["return"]) != "[map[web1:[]]]" {
		t.Fatalf("GET /minions/web1: %d %v", code, v)
	}
	code, v, _ := call(t, srv, "/minions", alice, "", `[{"tgt": "web*", "fun": "test.ping"}]`)
	if got, _ := json.Marshal(v["return"]); code != http.StatusOK || string(got) != `[{"jid":"20261128000000000002","minions":["web1","web2"]}]` {
		t.Fatalf("POST /minions: %d %s", code, got)
	}
	if code, v := get("/keys", alice); code != http.StatusOK || v["return"].(map[string]any)["user"] != "alice" {
		t.Fatalf("GET /keys: %d %v", code, v)
	}
	if code, v := get("/jobs", alice); code != http.StatusOK || len(v["return"].([]any)) != 1 {
		t.Fatalf("GET /jobs: %d %v", code, v)
	}

	// The event stream, with the token in salt_token as SaltGUI gives it.
	if code, _ := get("/events?salt_token=00ff", ""); code != http.StatusUnauthorized {
		t.Fatalf("/events with a bad token: %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?salt_token="+alice, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	go func() {
		for ctx.Err() == nil {
			bus.Fire(ctx, b, "myco/deploy/done", map[string]any{"v": 1}, bus.Origin{Source: "test"})
			time.Sleep(100 * time.Millisecond)
		}
	}()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if strings.HasPrefix(line, "tag: myco/deploy/done") {
			data, _ := br.ReadString('\n')
			if !strings.HasPrefix(data, `data: {"tag": "myco/deploy/done", "data": {`) {
				t.Fatalf("event data line %q", data)
			}
			return
		}
	}
}

func TestHookAndLoginThrottle(t *testing.T) {
	srv, _, b := apiRigBus(t)
	alice := login(t, srv, "alice", "wonder")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan *bus.Event, 16)
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "salt/*"}, func(e *bus.Event) { got <- e })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()

	if code, _, _ := call(t, srv, "/hook/ci/build", "", "", `{"result": true}`); code != http.StatusUnauthorized {
		t.Fatalf("hook without a token: %d", code)
	}
	code, v, _ := call(t, srv, "/hook/ci/build", alice, "", `{"result": true, "revision": "aa22"}`)
	if code != http.StatusOK || v["success"] != true {
		t.Fatalf("hook: %d %v", code, v)
	}
	var ev *bus.Event
	for ev == nil || ev.Tag != "salt/netapi/hook/ci/build" {
		select {
		case ev = <-got:
		case <-ctx.Done():
			t.Fatal("no hook event")
		}
	}
	var data map[string]any
	json.Unmarshal(ev.Data, &data)
	if data["post"].(map[string]any)["revision"] != "aa22" || data["body"] != `{"result": true, "revision": "aa22"}` {
		t.Fatalf("hook event %s", ev.Data)
	}
	if strings.Contains(string(ev.Data), alice) {
		t.Fatalf("the hook event carries the token: %s", ev.Data)
	}

	// Failed logins are audited and, past the limit, turned away with 429
	// even with the right password; the password is never in the event.
	for range maxFailures {
		if code, _, _ := call(t, srv, "/login", "", "", `{"username": "bob", "password": "guess-42", "eauth": "file"}`); code != http.StatusUnauthorized {
			t.Fatalf("a wrong password: %d", code)
		}
	}
	start := time.Now()
	code, _, h := call(t, srv, "/login", "", "", `{"username": "bob", "password": "builder", "eauth": "file"}`)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Fatalf("a login after %d failures: %d, Retry-After %q", maxFailures, code, h.Get("Retry-After"))
	}
	if took := time.Since(start); took < tarpitDelay {
		t.Fatalf("the 429 came after %s, not held for %s", took, tarpitDelay)
	}
	rejects := 0
	for rejects < maxFailures {
		select {
		case e := <-got:
			if e.Tag == "salt/auth/netapi" {
				if strings.Contains(string(e.Data), "guess-42") {
					t.Fatalf("a password in the audit event: %s", e.Data)
				}
				var d map[string]any
				json.Unmarshal(e.Data, &d)
				if d["act"] == "reject" && d["result"] == false && d["user"] == "bob" {
					rejects++
				}
			}
		case <-ctx.Done():
			t.Fatalf("%d reject events, want %d", rejects, maxFailures)
		}
	}
}

// TestTarpitFull: past maxHeld held answers, a turned-away request is
// answered at once and its connection closed.
func TestTarpitFull(t *testing.T) {
	s := &Server{held: make(chan struct{}, 1)}
	s.held <- struct{}{}
	w := httptest.NewRecorder()
	start := time.Now()
	s.tarpit(w, httptest.NewRequest(http.MethodPost, "/login", nil))
	if took := time.Since(start); took >= tarpitDelay/2 || w.Header().Get("Connection") != "close" {
		t.Fatalf("with the tarpit full: %s, Connection %q", took, w.Header().Get("Connection"))
	}
	<-s.held
	start = time.Now()
	s.tarpit(w, httptest.NewRequest(http.MethodPost, "/login", nil))
	if took := time.Since(start); took < tarpitDelay || len(s.held) != 0 {
		t.Fatalf("with room: held %s, %d still counted", took, len(s.held))
	}
}

func TestFailuresPerAddress(t *testing.T) {
	f := newFailures()
	now := time.Now()
	for range maxFailures {
		f.add("10.0.0.1", now)
	}
	if w, n := f.blocked("10.0.0.1", now); w == 0 || n != 1 {
		t.Fatalf("after %d failures: turned away for %s, refusal %d; want turned away, refusal 1", maxFailures, w, n)
	}
	if w, _ := f.blocked("10.0.0.2", now); w != 0 {
		t.Fatal("the limit is per address")
	}
	var logged []int
	for range 1000 {
		if _, n := f.blocked("10.0.0.1", now); logRefusal(n) {
			logged = append(logged, n)
		}
	}
	if want := []int{10, 100, 1000}; !slices.Equal(logged, want) {
		t.Errorf("refusals logged %v, want %v (and the 1st, before)", logged, want)
	}
	if w, n := f.blocked("10.0.0.1", now.Add(failWindow+time.Second)); w != 0 || n != 0 {
		t.Fatal("turned away for longer than the window")
	}
	for range maxFailures {
		f.add("10.0.0.1", now.Add(2*failWindow))
	}
	if _, n := f.blocked("10.0.0.1", now.Add(2*failWindow)); n != 1 {
		t.Errorf("a new lockout counts its refusals from %d, want 1", n)
	}
}

func TestAppForBrowsers(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<html>SaltGUI</html>"), 0o644)
	os.MkdirAll(filepath.Join(dir, "static"), 0o755)
	os.WriteFile(filepath.Join(dir, "static", "app.js"), []byte("js"), 0o644)
	s := New(Config{App: filepath.Join(dir, "index.html"), AppPath: "/app", Static: filepath.Join(dir, "static"), StaticPath: "/static",
		MaxBody: 1 << 10}, &apiFleet{}, nil, nil, "t", slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, c := range []struct{ path, accept, want string }{
		{"/login", "text/html,application/xhtml+xml,*/*;q=0.8", "<html>SaltGUI</html>"},
		{"/", "text/html", "<html>SaltGUI</html>"},
		{"/app", "application/json", "<html>SaltGUI</html>"},
		{"/static/app.js", "text/html", "js"},
		{"/", "application/json", `"Welcome"`},
		{"/", "*/*", `"Welcome"`},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		req.Header.Set("Accept", c.accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s (Accept %s): %s, want %s", c.path, c.accept, b, c.want)
		}
	}
}

func TestLocalBatch(t *testing.T) {
	srv, f := apiRig(t)
	alice := login(t, srv, "alice", "wonder")
	code, v, _ := call(t, srv, "/", alice, "", `[{"client": "local_batch", "tgt": "*", "fun": "test.ping", "batch": 2}]`)
	if got, _ := json.Marshal(v["return"]); code != http.StatusOK || string(got) != `[{"db1":true},{"web1":true},{"web2":true}]` {
		t.Fatalf("local_batch: %d %s", code, got)
	}
	var sizes []int
	for _, j := range f.jobs {
		sizes = append(sizes, len(j.Tgt.([]any)))
	}
	if !slices.Equal(sizes, []int{2, 1}) {
		t.Fatalf("batches of %v, want [2 1]", sizes)
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	crt, kf := filepath.Join(dir, "api.crt"), filepath.Join(dir, "api.key")
	os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)

	s := New(Config{Host: "127.0.0.1", SSLCrt: crt, SSLKey: kf, MaxBody: 1 << 10}, &apiFleet{}, nil, nil, "t", slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "Welcome") {
		t.Fatalf("GET / over TLS: %s", b)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		if r2, _ := http.Get("http://" + ln.Addr().String() + "/"); r2 != nil && r2.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on a TLS port")
		}
	}
}
