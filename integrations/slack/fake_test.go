package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
)

// posted is one message slacktest received, as the tests assert on it.
type posted struct {
	Method   string // chat.postMessage, chat.update or webhook
	Channel  string
	Text     string
	TS       string // the message's ts (the edited one for chat.update)
	ThreadTS string
	Color    string
	Detail   string
	Username string
	// Raw is every field Slack received except the token, for secret greps.
	Raw string
}

// fakeSlack is slacktest with recording handlers and injectable failures.
type fakeSlack struct {
	srv *slacktest.Server

	mu       sync.Mutex
	msgs     []posted
	requests int
	seq      int
	// fail decides, per request, to answer with an error instead: an HTTP
	// status (with Retry-After when retryAfter is set) or a Slack error code.
	fail func(n int) (status int, retryAfter string, code string)
	// token, when set, is the only token accepted (invalid_auth otherwise).
	token string
}

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{}
	f.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", f.handle("chat.postMessage"))
		c.Handle("/chat.update", f.handle("chat.update"))
		c.Handle("/webhook", f.handle("webhook"))
	})
	f.srv.Start()
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fakeSlack) apiURL() string  { return f.srv.GetAPIURL() }
func (f *fakeSlack) hookURL() string { return f.srv.GetAPIURL() + "webhook" }

func (f *fakeSlack) setFail(fn func(n int) (int, string, string)) {
	f.mu.Lock()
	f.fail = fn
	f.mu.Unlock()
}

func (f *fakeSlack) handle(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := posted{Method: method}
		var atts []struct {
			Color string `json:"color"`
			Text  string `json:"text"`
		}
		if method == "webhook" {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				Channel     string `json:"channel"`
				Text        string `json:"text"`
				Username    string `json:"username"`
				Attachments json.RawMessage
			}
			_ = json.Unmarshal(body, &m)
			p.Channel, p.Text, p.Username, p.Raw = m.Channel, m.Text, m.Username, string(body)
			_ = json.Unmarshal(m.Attachments, &atts)
		} else {
			_ = r.ParseForm()
			f.mu.Lock()
			want := f.token
			f.mu.Unlock()
			if want != "" && r.PostForm.Get("token") != want {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_auth"}`)
				return
			}
			r.PostForm.Del("token")
			p.Channel, p.Text, p.TS = r.PostForm.Get("channel"), r.PostForm.Get("text"), r.PostForm.Get("ts")
			p.ThreadTS, p.Username = r.PostForm.Get("thread_ts"), r.PostForm.Get("username")
			p.Raw = r.PostForm.Encode()
			_ = json.Unmarshal([]byte(r.PostForm.Get("attachments")), &atts)
		}
		if len(atts) > 0 {
			p.Color, p.Detail = atts[0].Color, atts[0].Text
		}
		f.mu.Lock()
		f.requests++
		n := f.requests
		fail := f.fail
		f.mu.Unlock()
		if fail != nil {
			if status, retryAfter, code := fail(n); status != 0 || code != "" {
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				if status != 0 {
					w.WriteHeader(status)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"ok":false,"error":%q}`, code)
				return
			}
		}
		f.mu.Lock()
		if method == "chat.postMessage" {
			f.seq++
			p.TS = fmt.Sprintf("1700000000.%06d", f.seq)
		}
		f.msgs = append(f.msgs, p)
		f.mu.Unlock()
		if method == "webhook" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": p.Channel, "ts": p.TS})
	}
}

func (f *fakeSlack) messages() []posted {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]posted(nil), f.msgs...)
}

// waitMessages waits until at least n messages were recorded.
func (f *fakeSlack) waitMessages(t *testing.T, n int, within time.Duration) []posted {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msgs := f.messages()
		if len(msgs) >= n {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("Slack got %d messages within %s, want %d:\n%s", len(msgs), within, n, dump(msgs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func dump(msgs []posted) string {
	var b strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&b, "  %d %s ch=%s ts=%s thread=%s color=%s text=%q detail=%q\n", i, m.Method, m.Channel, m.TS, m.ThreadTS, m.Color, m.Text, m.Detail)
	}
	return b.String()
}

func openBus(t *testing.T, dir string) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.Open(context.Background(), natsbus.Config{Dir: dir, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig is a validated config posting to f with no rate limit.
func testConfig(t *testing.T, f *fakeSlack, mutate func(*Config)) *Config {
	t.Helper()
	c := &Config{Token: "xoxb-1111-2222-secrettokenvalue", APIURL: f.apiURL(), Channel: "#audit", Rate: 0, Burst: 1,
		Excerpt: DefaultExcerpt, Hold: 200 * time.Millisecond, Consumer: DefaultConsumer, source: "test-config"}
	if mutate != nil {
		mutate(c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// startAudit runs an audit on b until the returned stop is called (or the
// test ends).
func startAudit(t *testing.T, b *natsbus.Bus, cfg *Config) (*Audit, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	kv, err := b.Bucket(ctx, ThreadBucket)
	if err != nil {
		t.Fatal(err)
	}
	a := New(cfg, kv, b, WithLogger(quietLog()), WithSource("brine://test/slack"))
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, b) }()
	// The consumer starts at new events: wait until it exists.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := b.Consumer(ctx, cfg.Consumer); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slack consumer not created")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return a, stop
}

func publish(t *testing.T, b bus.Bus, tag string, data map[string]any) *bus.Event {
	t.Helper()
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: "brine://test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// bareAudit is an audit on a bus of its own that is not running: the test
// drives rendering, delivery and the thread store itself.
func bareAudit(t *testing.T) (*fakeSlack, *natsbus.Bucket, *Audit) {
	t.Helper()
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	kv, err := b.Bucket(context.Background(), ThreadBucket)
	if err != nil {
		t.Fatal(err)
	}
	return f, kv, New(testConfig(t, f, nil), kv, b, WithLogger(quietLog()), WithSource("brine://test/slack"))
}
