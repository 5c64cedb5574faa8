package slack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
)

func TestSlackFunctions(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	a := New(testConfig(t, f, func(c *Config) { c.WebhookURL = f.hookURL() }), nil, b, WithLogger(quietLog()))
	funcs := function.New()
	if err := funcs.RegisterAll(Funcs(a)); err != nil {
		t.Fatal(err)
	}
	// One 429 first: the function waits Retry-After and posts.
	f.setFail(func(n int) (int, string, string) {
		if n == 1 {
			return http.StatusTooManyRequests, "1", ""
		}
		return 0, "", ""
	})
	ctx := context.Background()
	start := time.Now()
	ret, err := funcs.Call(ctx, "slack.post", []any{"ops", "deployed web with password=hunter2"},
		map[string]any{"from_name": "brine", "icon": ":robot_face:"}, nil)
	if err != nil || ret != true {
		t.Fatalf("slack.post = %v, %v", ret, err)
	}
	if time.Since(start) < time.Second {
		t.Error("Retry-After not honoured")
	}
	if _, err := funcs.Call(ctx, "slack.call_hook", []any{"disk almost full"},
		map[string]any{"attachment": "web1: 95%", "color": "warning", "channel": "#alerts", "username": "salt"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := funcs.Call(ctx, "slack.call_hook", []any{"plain"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	msgs := f.waitMessages(t, 3, 90*time.Second)
	if m := msgs[0]; m.Method != "chat.postMessage" || m.Channel != "#ops" || m.Username != "brine" ||
		m.Text != "deployed web with password=***" {
		t.Errorf("post %+v", m)
	}
	if m := msgs[1]; m.Method != "webhook" || m.Channel != "#alerts" || m.Username != "salt" || m.Color != "warning" ||
		!strings.Contains(m.Raw, `"pretext":"disk almost full"`) || !strings.Contains(m.Raw, "web1: 95%") {
		t.Errorf("call_hook with attachment %+v", m)
	}
	if m := msgs[2]; m.Text != "plain" {
		t.Errorf("call_hook %+v", m)
	}

	// A permanent error is returned, not retried.
	f.setFail(func(int) (int, string, string) { return 0, "", "channel_not_found" })
	if _, err := funcs.Call(ctx, "slack.post", []any{"#nope", "x"}, nil, nil); err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Errorf("bad channel: %v", err)
	}

	bare := function.New()
	if err := bare.RegisterAll(Funcs(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Call(ctx, "slack.post", []any{"ops", "x"}, nil, nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("unconfigured slack.post: %v", err)
	}
	if _, err := bare.Call(ctx, "slack.call_hook", []any{"x"}, nil, nil); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("unconfigured slack.call_hook: %v", err)
	}
	if _, err := bare.Call(ctx, "slack.post", []any{"ops"}, nil, nil); !errors.Is(err, function.ErrMissingArgument) {
		t.Errorf("missing message: %v", err)
	}
}
