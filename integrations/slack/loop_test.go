package slack

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/reactor"
)

// TestReactionOnEveryJobCannotLoop runs Salt's audit seed pattern — a
// reaction on every job start that posts to Slack — against the real
// reactor: the reaction does not react to the job it started itself, and
// the audit never posts its own functions' jobs, so Slack gets one post
// per job of the user's.
func TestReactionOnEveryJobCannotLoop(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	a, _ := startAudit(t, b, testConfig(t, f, nil))
	funcs := function.NewWithBuiltins()
	if err := funcs.RegisterAll(Funcs(a)); err != nil {
		t.Fatal(err)
	}
	file, err := filepath.Abs("../../testdata/slack/notify_every_job.sls")
	if err != nil {
		t.Fatal(err)
	}
	const maxDepth = 4
	r := reactor.New(reactor.Config{
		Mapping:  []reactor.MapEntry{{Glob: "salt/run/*/new", Files: []string{file}}},
		Workers:  4,
		MaxDepth: maxDepth,
		Retry:    reactor.Retry{Attempts: 1, Interval: time.Millisecond, MaxInterval: time.Millisecond},
	}, funcs, reactor.WithLogger(quietLog()))
	var loops atomic.Int32
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Pattern: "brine/reactor/*"}, func(ev *bus.Event) {
		if ev.Tag == reactor.TagLoop {
			loops.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, b, nil) }()
	defer func() { cancel(); <-done }()

	res := run(t, b, "test.arg", []any{"hello"}, nil, "alice")

	// Wait until the chain was cut, the user's job result is in Slack, and
	// Slack has been quiet for 2 s since.
	deadline := time.Now().Add(120 * time.Second)
	last, quietSince := -1, time.Now()
	settled := func() bool {
		audit := 0
		for _, m := range f.messages() {
			if m.Channel == "#audit" {
				audit++
			}
		}
		return audit >= 2 && time.Since(quietSince) >= 2*time.Second
	}
	for !settled() {
		if time.Now().After(deadline) {
			t.Fatalf("Slack never went quiet: %d messages", len(f.messages()))
		}
		if n := len(f.messages()); n != last {
			last, quietSince = n, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	msgs := f.messages()
	var audit, posts int
	aboutUser, auditAboutUser := false, false
	for _, m := range msgs {
		switch {
		case m.Channel == "#audit":
			audit++
			auditAboutUser = auditAboutUser || strings.Contains(m.Text, res.JID)
			if strings.Contains(m.Text, "slack.post") {
				t.Errorf("the audit posted its own function's job: %q", m.Text)
			}
		case m.Channel == "#audit-feed":
			posts++
			if m.Text == "job "+res.JID+" runner.test.arg by alice" {
				aboutUser = true
			}
		}
	}
	// The user's job: its start and result. The reaction: once, for the
	// user's job (not for its own). The two channels are posted to
	// concurrently: no order between them.
	if audit != 2 || !auditAboutUser {
		t.Errorf("audit messages %d, want the user's job start and result:\n%s", audit, dump(msgs))
	}
	if posts != 1 {
		t.Errorf("%d reaction posts, want 1:\n%s", posts, dump(msgs))
	}
	if !aboutUser {
		t.Errorf("no reaction post about the user's job:\n%s", dump(msgs))
	}
	if n := loops.Load(); n != 0 {
		t.Errorf("%d chains cut, want none: the chain never starts", n)
	}
}
