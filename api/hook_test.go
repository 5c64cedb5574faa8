package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
)

func TestHookAuth(t *testing.T) {
	f := start(t, testConfig(), nil)
	body := []byte(`{"ref":"refs/heads/main"}`)
	json := "application/json"
	tests := []struct {
		name   string
		path   string
		header map[string]string
		body   []byte
		want   int
	}{
		{"hmac github", "/hook/github/push", map[string]string{"Content-Type": json, GitHubSignatureHeader: SignHook(GitHubSignatureHeader, "", []byte(testSecret), body, time.Now())}, body, 200},
		{"hmac missing", "/hook/github/push", map[string]string{"Content-Type": json}, body, 401},
		{"hmac wrong secret", "/hook/github/push", map[string]string{"Content-Type": json, GitHubSignatureHeader: SignHook(GitHubSignatureHeader, "", []byte("another-secret-0123456"), body, time.Now())}, body, 403},
		{"hmac of another body", "/hook/github/push", map[string]string{"Content-Type": json, GitHubSignatureHeader: SignHook(GitHubSignatureHeader, "", []byte(testSecret), []byte(`{}`), time.Now())}, body, 403},
		{"hmac not sha256=", "/hook/github/push", map[string]string{"Content-Type": json, GitHubSignatureHeader: "sha1=abcdef"}, body, 403},
		{"hmac not hex", "/hook/github/push", map[string]string{"Content-Type": json, GitHubSignatureHeader: "sha256=zz"}, body, 403},
		{"hmac token is not enough", "/hook/github/push", map[string]string{"Content-Type": json, "Authorization": "Bearer " + testToken}, body, 401},
		{"brine signature", "/hook/signed/x", map[string]string{"Content-Type": json, BrineSignatureHeader: SignHook(BrineSignatureHeader, "signed/x", []byte(brineSec), body, f.clock.Now())}, body, 200},
		{"brine signature stale", "/hook/signed/x", map[string]string{"Content-Type": json, BrineSignatureHeader: SignHook(BrineSignatureHeader, "signed/x", []byte(brineSec), body, f.clock.Now().Add(-time.Hour))}, body, 403},
		{"brine signature malformed", "/hook/signed/x", map[string]string{"Content-Type": json, BrineSignatureHeader: "sha256=00"}, body, 403},
		{"token bearer", "/hook/ci/build/ok", map[string]string{"Content-Type": json, "Authorization": "Bearer " + testToken}, body, 200},
		{"token X-Auth-Token", "/hook/ci/build/ok", map[string]string{"Content-Type": json, "X-Auth-Token": testToken}, body, 200},
		{"token missing", "/hook/ci/build/ok", map[string]string{"Content-Type": json}, body, 401},
		{"token wrong", "/hook/ci/build/ok", map[string]string{"Content-Type": json, "Authorization": "Bearer " + strings.Repeat("x", 20)}, body, 403},
		{"token in query refused", "/hook/ci/build/ok?token=" + testToken, map[string]string{"Content-Type": json}, body, 401},
		{"none", "/hook/public/ping", nil, nil, 200},
		{"none is per path", "/hook/public/pong", nil, nil, 401},
		{"unmatched path takes a token", "/hook/other/thing", map[string]string{"Authorization": "Bearer " + testToken}, nil, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := f.lastSeq()
			status, out := f.do(http.MethodPost, tc.path, tc.body, tc.header)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %v", status, tc.want, out)
			}
			if tc.want != 200 {
				if out["success"] != false || out["error"] == "" {
					t.Errorf("error body %v, want success false and an error", out)
				}
				if after := f.lastSeq(); after != before {
					t.Errorf("a refused request stored %d events", after-before)
				}
				return
			}
			if out["success"] != true {
				t.Fatalf("body %v, want success true", out)
			}
			ev := f.event(out["id"].(string))
			path := strings.SplitN(strings.TrimPrefix(tc.path, "/hook/"), "?", 2)[0]
			if ev.Tag != HookTagPrefix+path {
				t.Errorf("tag %q, want %q", ev.Tag, HookTagPrefix+path)
			}
		})
	}
}

func TestHookData(t *testing.T) {
	f := start(t, testConfig(), nil)
	auth := "Bearer " + testToken
	tests := []struct {
		name     string
		ct, body string
		post     any
	}{
		{"json", "application/json; charset=utf-8", `{"a": 1, "b": [true, null], "c": {"d": "e"}}`, map[string]any{"a": 1.0, "b": []any{true, nil}, "c": map[string]any{"d": "e"}}},
		{"json list", "application/json", `[1, 2]`, []any{1.0, 2.0}},
		{"form", "application/x-www-form-urlencoded", "a=1&b=x+y&b=z", map[string]any{"a": "1", "b": []any{"x y", "z"}}},
		{"yaml", "application/x-yaml", "a: 1\nb:\n  - x\n  - y\n", map[string]any{"a": 1.0, "b": []any{"x", "y"}}},
		{"text/yaml", "text/yaml", "k: v\n", map[string]any{"k": "v"}},
		{"text json", "text/plain", `{"k": "v"}`, map[string]any{"k": "v"}},
		{"text raw", "text/plain", "hello world", "hello world"},
		{"empty", "", "", map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Authorization": auth, "X-Custom": "kept", "Cookie": "session=secret"}
			if tc.ct != "" {
				h["Content-Type"] = tc.ct
			}
			status, out := f.do(http.MethodPost, "/hook/ci/data", []byte(tc.body), h)
			if status != 200 {
				t.Fatalf("status %d: %v", status, out)
			}
			ev := f.event(out["id"].(string))
			var data struct {
				Body    string            `json:"body"`
				Post    any               `json:"post"`
				Headers map[string]string `json:"headers"`
				Stamp   string            `json:"_stamp"`
			}
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data.Body != tc.body {
				t.Errorf("body %q, want %q", data.Body, tc.body)
			}
			if !reflect.DeepEqual(data.Post, tc.post) {
				t.Errorf("post %#v, want %#v", data.Post, tc.post)
			}
			if data.Headers["X-Custom"] != "kept" || data.Headers["Host"] == "" || data.Headers["Remote-Addr"] != "127.0.0.1" {
				t.Errorf("headers %v: want X-Custom, Host and Remote-Addr", data.Headers)
			}
			for _, hidden := range []string{"Authorization", "Cookie"} {
				if _, ok := data.Headers[hidden]; ok {
					t.Errorf("header %s reached the event", hidden)
				}
			}
			if bytes.Contains(ev.Data, []byte(testToken)) || bytes.Contains(ev.Data, []byte("session=secret")) {
				t.Errorf("a credential reached the event: %s", ev.Data)
			}
			if data.Stamp == "" {
				t.Error("no _stamp")
			}
		})
	}
}

func TestHookSignatureNotInEvent(t *testing.T) {
	f := start(t, testConfig(), nil)
	body := []byte(`{}`)
	sig := SignHook(GitHubSignatureHeader, "", []byte(testSecret), body, time.Now())
	status, out := f.do(http.MethodPost, "/hook/github/ping", body, map[string]string{"Content-Type": "application/json", GitHubSignatureHeader: sig, "X-Github-Event": "ping"})
	if status != 200 {
		t.Fatalf("status %d: %v", status, out)
	}
	ev := f.event(out["id"].(string))
	if bytes.Contains(ev.Data, []byte(sig[7:])) {
		t.Errorf("the signature reached the event: %s", ev.Data)
	}
	if !bytes.Contains(ev.Data, []byte(`"X-Github-Event":"ping"`)) {
		t.Errorf("X-Github-Event missing: %s", ev.Data)
	}
}

func TestHookRefusals(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBody = 1024
	f := start(t, cfg, nil)
	noTokens := start(t, Config{}, nil)
	auth := map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	big := []byte(`{"x": "` + strings.Repeat("a", 2000) + `"}`)
	tests := []struct {
		name   string
		f      *fixture
		method string
		path   string
		header map[string]string
		body   []byte
		want   int
		errHas string
	}{
		{"oversize body", f, "POST", "/hook/ci/x", auth, big, 413, "limit is 1024"},
		{"oversize signed body", f, "POST", "/hook/github/x", map[string]string{"Content-Type": "application/json", GitHubSignatureHeader: SignHook(GitHubSignatureHeader, "", []byte(testSecret), big, time.Now())}, big, 413, "1024"},
		{"unsupported type", f, "POST", "/hook/ci/x", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "multipart/form-data; boundary=x"}, []byte("--x--"), 415, "not supported"},
		{"bad content type", f, "POST", "/hook/ci/x", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": ";;"}, []byte("x"), 415, "Content-Type"},
		{"body without type", f, "POST", "/hook/ci/x", map[string]string{"Authorization": "Bearer " + testToken}, []byte("x"), 400, "needs a Content-Type"},
		{"malformed json", f, "POST", "/hook/ci/x", auth, []byte(`{"a":`), 400, "JSON body"},
		{"trailing json", f, "POST", "/hook/ci/x", auth, []byte(`{} {}`), 400, "trailing"},
		{"malformed yaml", f, "POST", "/hook/ci/x", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/x-yaml"}, []byte("a: [b"), 400, "YAML body"},
		{"GET", f, "GET", "/hook/ci/x", auth, nil, 405, "POST"},
		{"no path", f, "POST", "/hook/", auth, nil, 404, "path"},
		{"no hooks no tokens", noTokens, "POST", "/hook/anything", nil, nil, 404, "no hook is configured"},
		{"unknown endpoint", f, "GET", "/nope", nil, nil, 404, "no such endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.f.lastSeq()
			status, out := tc.f.do(tc.method, tc.path, tc.body, tc.header)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %v", status, tc.want, out)
			}
			msg, _ := out["error"].(string)
			if !strings.Contains(msg, tc.errHas) {
				t.Errorf("error %q does not mention %q", msg, tc.errHas)
			}
			if after := tc.f.lastSeq(); after != before {
				t.Errorf("a refused request stored %d events", after-before)
			}
		})
	}
}

func TestPostEvents(t *testing.T) {
	f := start(t, testConfig(), nil)
	auth := map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	id := "0193a3f4-1d2e-7c3b-8a4d-5e6f70819203"
	tests := []struct {
		name   string
		header map[string]string
		body   string
		want   int
		errHas string
	}{
		{"ok", auth, `{"tag": "myco/deploy/done", "data": {"app": "web", "n": 42}}`, 200, ""},
		{"no data", auth, `{"tag": "myco/ping"}`, 200, ""},
		{"with id", auth, `{"id": "` + id + `", "tag": "myco/once", "data": {}}`, 200, ""},
		{"with id again", auth, `{"id": "` + id + `", "tag": "myco/once", "data": {}}`, 200, ""},
		{"no token", map[string]string{"Content-Type": "application/json"}, `{"tag": "myco/x"}`, 401, "token"},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, `{"tag": "myco/x"}`, 403, "not one of"},
		{"reserved job", auth, `{"tag": "salt/job/123/new", "data": {}}`, 403, "reserved"},
		{"reserved brine", auth, `{"tag": "brine/reactor/error", "data": {}}`, 403, "reserved"},
		{"reserved auth", auth, `{"tag": "salt/auth", "data": {}}`, 403, "reserved"},
		{"empty tag", auth, `{"data": {}}`, 400, "empty tag"},
		{"data not object", auth, `{"tag": "myco/x", "data": [1]}`, 400, "JSON object"},
		{"unknown field", auth, `{"tag": "myco/x", "dtaa": {}}`, 400, "dtaa"},
		{"bad id", auth, `{"id": "nope", "tag": "myco/x"}`, 400, "bad id"},
		{"yaml refused", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/x-yaml"}, "tag: x", 415, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := f.lastSeq()
			status, out := f.do(http.MethodPost, "/events", []byte(tc.body), tc.header)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %v", status, tc.want, out)
			}
			if tc.want != 200 {
				if msg, _ := out["error"].(string); !strings.Contains(msg, tc.errHas) {
					t.Errorf("error %q does not mention %q", msg, tc.errHas)
				}
				if f.lastSeq() != before {
					t.Error("a refused post stored an event")
				}
				return
			}
			var p eventPost
			if err := json.Unmarshal([]byte(tc.body), &p); err != nil {
				t.Fatal(err)
			}
			ev := f.event(out["id"].(string))
			if ev.Tag != p.Tag {
				t.Errorf("tag %q, want %q", ev.Tag, p.Tag)
			}
			if p.ID != "" && ev.ID != p.ID {
				t.Errorf("id %q, want the posted %q", ev.ID, p.ID)
			}
			if tc.name == "with id again" && f.lastSeq() != before {
				t.Error("re-posting an event id stored it twice")
			}
		})
	}
}

// TestHookSignatureReplay drives X-Brine-Signature hooks over HTTP: a
// signed request is accepted once, its signature is worth nothing on
// another path, fresh signatures are accepted on any path, and the
// refusals are counted.
func TestHookSignatureReplay(t *testing.T) {
	f := start(t, testConfig(), nil)
	body := []byte(`{"app":"web"}`)
	signA := SignHook(BrineSignatureHeader, "signed/a", []byte(brineSec), body, f.clock.Now())
	steps := []struct {
		name   string
		path   string
		sig    func() string
		body   []byte
		want   int
		errHas string
	}{
		{"fresh on a", "/hook/signed/a", func() string { return signA }, body, 200, ""},
		{"replay on a", "/hook/signed/a", func() string { return signA }, body, 409, "accepted before"},
		{"replay with a trailing slash", "/hook/signed/a/", func() string { return signA }, body, 409, "accepted before"},
		{"a's signature on b", "/hook/signed/b", func() string { return signA }, body, 403, "does not match the hook path"},
		{"fresh on b", "/hook/signed/b", func() string {
			return SignHook(BrineSignatureHeader, "signed/b", []byte(brineSec), body, f.clock.Now())
		}, body, 200, ""},
		{"fresh on a, another body", "/hook/signed/a", func() string {
			return SignHook(BrineSignatureHeader, "signed/a", []byte(brineSec), []byte(`{"app":"db"}`), f.clock.Now())
		}, []byte(`{"app":"db"}`), 200, ""},
		{"outside the window", "/hook/signed/a", func() string {
			return SignHook(BrineSignatureHeader, "signed/a", []byte(brineSec), body, f.clock.Now().Add(-SignatureTolerance-time.Minute))
		}, body, 403, "behind the server's clock"},
		{"the retired form", "/hook/signed/a", func() string {
			old := SignHook(BrineSignatureHeader, "signed/a", []byte(brineSec), body, f.clock.Now())
			return strings.Replace(old, "v2=", "sha256=", 1)
		}, body, 403, "v2=<hex of HMAC-SHA256(secret, \"signed/a\\n<t>\\n<body>\")>"},
	}
	for _, st := range steps {
		before := f.lastSeq()
		status, out := f.do(http.MethodPost, st.path, st.body, map[string]string{"Content-Type": "application/json", BrineSignatureHeader: st.sig()})
		if status != st.want {
			t.Fatalf("%s: status %d, want %d: %v", st.name, status, st.want, out)
		}
		stored := f.lastSeq() != before
		if st.want != 200 {
			if msg, _ := out["error"].(string); !strings.Contains(msg, st.errHas) {
				t.Errorf("%s: error %q does not say %q", st.name, msg, st.errHas)
			}
			if stored {
				t.Errorf("%s: a refused request stored an event", st.name)
			}
		} else if !stored {
			t.Errorf("%s: accepted, but no event stored", st.name)
		}
	}
	body2 := f.waitMetric(`brine_api_hook_signatures_refused_total{reason="replay"} 2`)
	for _, want := range []string{`{reason="mismatch"} 1`, `{reason="time"} 1`, `{reason="v1"} 1`, `{reason="before_start"} 0`} {
		if !strings.Contains(body2, "brine_api_hook_signatures_refused_total"+want+"\n") {
			t.Errorf("metrics lack %s:\n%s", want, grepBrine(body2))
		}
	}
}

// failingBus fails the next fail publishes, as a bus that is down would.
type failingBus struct {
	EventBus
	fail atomic.Int32
}

func (b *failingBus) Publish(ctx context.Context, ev *bus.Event) error {
	if b.fail.Add(-1) >= 0 {
		return errors.New("nats: no responders available")
	}
	return b.EventBus.Publish(ctx, ev)
}

// TestHookSignatureRetryAfterFailedStore: a signed request whose event was
// not stored may be sent again as it was; once stored, it may not.
func TestHookSignatureRetryAfterFailedStore(t *testing.T) {
	nb := openBus(t, t.TempDir())
	defer nb.Close()
	fb := &failingBus{EventBus: nb}
	fb.fail.Store(1)
	srv, err := New(testConfig(), fb, quiet())
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{}`)
	sig := SignHook(BrineSignatureHeader, "signed/retry", []byte(brineSec), body, time.Now())
	for i, want := range []int{503, 200, 409} {
		r := httptest.NewRequest(http.MethodPost, "/hook/signed/retry", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(BrineSignatureHeader, sig)
		w := httptest.NewRecorder()
		srv.handler.ServeHTTP(w, r)
		if w.Code != want {
			t.Fatalf("send %d: status %d, want %d: %s", i+1, w.Code, want, w.Body)
		}
	}
}

// TestHookSignatureAcrossRestart: the replay memory is not kept across a
// restart, so a restarted API refuses every signature the previous run
// could have accepted (timed up to SignatureMaxAhead past its last
// moment), and accepts fresh ones once SignatureMaxAhead has passed.
func TestHookSignatureAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	clock := new(testClock)
	b1 := openBus(t, dir)
	f1 := startClocked(t, testConfig(), b1, quiet(), clock)
	body := []byte(`{"n":1}`)
	header := func(sig string) map[string]string {
		return map[string]string{"Content-Type": "application/json", BrineSignatureHeader: sig}
	}
	now := SignHook(BrineSignatureHeader, "signed/r", []byte(brineSec), body, clock.Now())
	ahead := SignHook(BrineSignatureHeader, "signed/r", []byte(brineSec), body, clock.Now().Add(SignatureMaxAhead))
	for _, sig := range []string{now, ahead} {
		if status, out := f1.do(http.MethodPost, "/hook/signed/r", body, header(sig)); status != 200 {
			t.Fatalf("before the restart: status %d: %v", status, out)
		}
	}
	f1.stop()
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}

	b2 := openBus(t, dir)
	defer b2.Close()
	// Restart at once, the same clock going on: both signatures are
	// well within SignatureTolerance.
	f2 := startClocked(t, testConfig(), b2, quiet(), clock)
	clock.advance(-SignatureMaxAhead - time.Second) // undo startClocked's step
	tests := []struct {
		name    string
		advance time.Duration
		sig     func() string
		want    int
	}{
		{"replay of one timed before the restart", 0, func() string { return now }, 403},
		{"replay of one timed ahead, into this run", 0, func() string { return ahead }, 403},
		{"fresh, during the start-up allowance", 0, func() string {
			return SignHook(BrineSignatureHeader, "signed/r", []byte(brineSec), body, clock.Now())
		}, 403},
		{"fresh, after it", SignatureMaxAhead + time.Second, func() string {
			return SignHook(BrineSignatureHeader, "signed/r", []byte(brineSec), body, clock.Now())
		}, 200},
		{"the replay, later still", 0, func() string { return ahead }, 403},
	}
	for _, tc := range tests {
		clock.advance(tc.advance)
		status, out := f2.do(http.MethodPost, "/hook/signed/r", body, header(tc.sig()))
		if status != tc.want {
			t.Fatalf("%s: status %d, want %d: %v", tc.name, status, tc.want, out)
		}
		if msg, _ := out["error"].(string); tc.want == 403 && !strings.Contains(msg, "sign the request again") {
			t.Errorf("%s: error %q does not tell the sender to sign again", tc.name, msg)
		}
	}
	f2.waitMetric(`brine_api_hook_signatures_refused_total{reason="before_start"} 4`)
}

// TestHookReplayMemoryExpires: a signature is remembered while its time is
// in the window and forgotten after; the time check refuses it from then
// on, so forgetting it opens no replay.
func TestHookReplayMemoryExpires(t *testing.T) {
	f := start(t, testConfig(), nil)
	body := []byte(`{}`)
	sig := SignHook(BrineSignatureHeader, "signed/e", []byte(brineSec), body, f.clock.Now())
	h := map[string]string{"Content-Type": "application/json", BrineSignatureHeader: sig}
	steps := []struct {
		name       string
		advance    time.Duration
		want       int
		remembered int
	}{
		{"accepted", 0, 200, 1},
		{"replay within the window", SignatureTolerance - 2*time.Second, 409, 1},
		{"replay after it", 3 * time.Second, 403, 0},
	}
	for _, st := range steps {
		f.clock.advance(st.advance)
		if status, out := f.do(http.MethodPost, "/hook/signed/e", body, h); status != st.want {
			t.Fatalf("%s: status %d, want %d: %v", st.name, status, st.want, out)
		}
		if n := f.srv.replays.len(f.clock.Now()); n != st.remembered {
			t.Errorf("%s: %d signatures remembered, want %d", st.name, n, st.remembered)
		}
	}
}
