// Command slack measures the Slack audit trail against slacktest on the
// embedded, fsync'ed bus: (a) 1,000 jobs (2,000 events) waiting on the bus,
// posted with the rate limit disabled: posts/s the audit sustains, with
// nothing lost, duplicated or out of thread; (b) the same 1,000 jobs spread
// over 100 channels with the default 1 message/s/channel limit: that every
// channel's rate holds within 10 % of the limit and nothing is dropped.
// Results go to -out as JSON, with the targets checked.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/slack"
	"github.com/brinehq/brine/jobs"
)

// Result is one measured scenario.
type Result struct {
	Name       string  `json:"name"`
	Jobs       int     `json:"jobs"`
	Channels   int     `json:"channels"`
	Rate       float64 `json:"rate_per_channel"`
	Burst      int     `json:"burst"`
	Messages   int     `json:"messages"`
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"posts_per_sec"`
	Lost       int     `json:"lost"`
	Duplicated int     `json:"duplicated"`
	Unthreaded int     `json:"unthreaded"`
	// ChannelRateMin/Max are the long-run rates of the channels: messages
	// after the burst divided by the time from first to last.
	ChannelRateMin float64 `json:"channel_rate_min,omitempty"`
	ChannelRateMax float64 `json:"channel_rate_max,omitempty"`
	// WorstWindow is the largest count/(burst + rate×Δt) over every interval
	// of every channel: above 1 means the limiter let more through.
	WorstWindow float64 `json:"worst_window_ratio,omitempty"`
}

type post struct {
	channel, text, ts, thread string
	at                        time.Time
}

// recorder is slacktest with a chat.postMessage handler that keeps every post.
type recorder struct {
	mu    sync.Mutex
	posts []post
}

func (r *recorder) handle(w http.ResponseWriter, req *http.Request) {
	_ = req.ParseForm()
	r.mu.Lock()
	p := post{channel: req.PostForm.Get("channel"), text: req.PostForm.Get("text"), thread: req.PostForm.Get("thread_ts"),
		ts: fmt.Sprintf("1700000000.%06d", len(r.posts)+1), at: time.Now()}
	r.posts = append(r.posts, p)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": p.channel, "ts": p.ts})
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.posts)
}

func (r *recorder) snapshot() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

func main() {
	out := flag.String("out", "bench/results/slack.json", "where to write the JSON results")
	n := flag.Int("jobs", 1000, "jobs per scenario")
	channels := flag.Int("channels", 100, "channels of the rate-limited scenario")
	only := flag.String("scenario", "", "run only this scenario (unlimited or limited_1_per_s)")
	flag.Parse()
	rep := report.New("slack")
	rep.Notes = []string{
		"the audit's consumer is created, the bus restarted, then the jobs fired (new and ret events, durable) with the audit stopped; the audit then drains the backlog: seconds run from its start to the last post",
		"the audit sends one event at a time (ordered, acknowledged after Slack accepted it): posts/s is bounded by one HTTP round trip per message",
		"rate-limited scenario: job i is started by user u<i mod channels>, and one jobs rule per user posts to its own channel",
		"the bus (natsbus Consume) intermittently pauses a consumer for its pull expiry (30 s) when a backlog meets MaxInFlight (the audit uses 1): about half of the unlimited runs on 2026-11-22 took 30-60 s longer, with nothing lost or reordered; reported to the bus owner (a PullExpiry of 5 s bounds the pause to 5 s)",
		"the limiter holds when no channel exceeds its rate by more than 10 % (channel_rate_max) and no interval exceeds burst + rate×Δt by more than 10 % (worst_window_ratio); channel_rate_min and posts_per_sec against channels×rate show what one-at-a-time delivery costs when every channel is saturated at once",
	}
	var results []Result
	for _, sc := range []struct {
		name     string
		rate     float64
		burst    int
		channels int
	}{
		{"unlimited", 0, 1, 1},
		{"limited_1_per_s", slack.DefaultRate, slack.DefaultBurst, *channels},
	} {
		if *only != "" && *only != sc.name {
			continue
		}
		res, err := scenario(sc.name, *n, sc.channels, sc.rate, sc.burst)
		if err != nil {
			fmt.Fprintf(os.Stderr, "slack bench %s: %v\n", sc.name, err)
			os.Exit(1)
		}
		fmt.Printf("%-16s %5d jobs %4d channels: %5d posts in %6.2fs = %7.1f posts/s; lost %d, duplicated %d, unthreaded %d; channel rate %.3f..%.3f/s, worst window %.3f\n",
			res.Name, res.Jobs, res.Channels, res.Messages, res.Seconds, res.PerSec, res.Lost, res.Duplicated, res.Unthreaded,
			res.ChannelRateMin, res.ChannelRateMax, res.WorstWindow)
		results = append(results, res)
		rep.Check(res.Name, "lost", "<=", 0, float64(res.Lost))
		rep.Check(res.Name, "duplicated", "<=", 0, float64(res.Duplicated))
		rep.Check(res.Name, "unthreaded", "<=", 0, float64(res.Unthreaded))
		if sc.rate > 0 {
			rep.Check(res.Name, "channel_rate_max", "<=", sc.rate*1.1, res.ChannelRateMax)
			rep.Check(res.Name, "worst_window_ratio", "<=", 1.1, res.WorstWindow)
		}
	}
	rep.Results = results
	if err := rep.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out, "pass:", rep.Pass)
}

func scenario(name string, n, channels int, rate float64, burst int) (Result, error) {
	res := Result{Name: name, Jobs: n, Channels: channels, Rate: rate, Burst: burst}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "brine-bench-slack-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "data"), Logger: quiet})
	if err != nil {
		return res, err
	}
	rec := &recorder{}
	srv := slacktest.NewTestServer(func(c slacktest.Customize) { c.Handle("/chat.postMessage", rec.handle) })
	srv.Start()
	defer srv.Stop()

	var conf strings.Builder
	fmt.Fprintf(&conf, "slack:\n  token: xoxb-bench\n  api_url: %s\n  rate: %g\n  burst: %d\n  audit:\n", srv.GetAPIURL(), rate, burst)
	for c := range channels {
		fmt.Fprintf(&conf, "    - {preset: jobs, user: u%d, channel: '#c%d'}\n", c, c)
	}
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf.String()), 0o600); err != nil {
		return res, err
	}
	mc, err := config.Load(filepath.Join(dir, "master"))
	if err != nil {
		return res, err
	}
	cfg, _, err := slack.LoadConfig(mc)
	if err != nil {
		return res, err
	}
	kv, err := b.Bucket(ctx, slack.ThreadBucket)
	if err != nil {
		return res, err
	}
	// Create the consumer (it starts at new events), then fire the jobs.
	start := func() (stop func()) {
		a := slack.New(cfg, kv, b, slack.WithLogger(quiet))
		actx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { _ = a.Run(actx, b); close(done) }()
		for {
			if _, err := b.Consumer(ctx, cfg.Consumer); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return func() { cancel(); <-done }
	}
	start()()
	// Restart the bus, as a master restart would: the jobs then wait for
	// the audit's next start as its backlog.
	if err := b.Close(); err != nil {
		return res, err
	}
	if b, err = natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "data"), Logger: quiet}); err != nil {
		return res, err
	}
	defer b.Close()
	if kv, err = b.Bucket(ctx, slack.ThreadBucket); err != nil {
		return res, err
	}
	funcs := function.NewWithBuiltins()
	jids := make([]string, n)
	for i := range n {
		r, err := jobs.Call(ctx, funcs, b, "test.ping", nil, nil, fmt.Sprintf("u%d", i%channels), bus.Origin{Source: "bench"})
		if err != nil {
			return res, err
		}
		jids[i] = r.JID
	}
	t0 := time.Now()
	stop := start()
	want := 2 * n
	deadline := t0.Add(time.Duration(float64(want)/max(rate*float64(channels), 1)*3)*time.Second + time.Minute)
	for rec.count() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	last := time.Now()
	time.Sleep(500 * time.Millisecond) // anything extra (duplicates) shows up
	stop()
	posts := rec.snapshot()
	if len(posts) > 0 && len(posts) >= want {
		last = posts[want-1].at
	}
	res.Messages = len(posts)
	res.Seconds = last.Sub(t0).Seconds()
	res.PerSec = float64(min(len(posts), want)) / res.Seconds
	verify(&res, posts, jids)
	if rate > 0 {
		channelRates(&res, posts, rate, burst)
	}
	return res, nil
}

// verify counts jobs whose start or result is missing (lost), posted twice
// (duplicated) or whose result is not in the start's thread (unthreaded).
func verify(res *Result, posts []post, jids []string) {
	parents := map[string][]post{}
	replies := map[string]int{} // thread ts -> replies
	for _, p := range posts {
		if p.thread != "" {
			replies[p.thread]++
			continue
		}
		for _, f := range strings.Fields(p.text) {
			if jid := strings.TrimSuffix(f, ")"); jobs.IsJID(jid) {
				parents[jid] = append(parents[jid], p)
			}
		}
	}
	for _, jid := range jids {
		ps := parents[jid]
		switch {
		case len(ps) == 0:
			res.Lost++
			continue
		case len(ps) > 1:
			res.Duplicated++
		}
		switch replies[ps[0].ts] {
		case 0:
			res.Unthreaded++
		case 1:
		default:
			res.Duplicated++
		}
	}
}

// channelRates measures each channel's long-run rate and the worst interval
// against the token bucket's bound burst + rate×Δt.
func channelRates(res *Result, posts []post, rate float64, burst int) {
	byChannel := map[string][]time.Time{}
	for _, p := range posts {
		byChannel[p.channel] = append(byChannel[p.channel], p.at)
	}
	res.ChannelRateMin = -1
	for _, ts := range byChannel {
		if len(ts) <= burst+1 {
			continue
		}
		r := float64(len(ts)-burst) / ts[len(ts)-1].Sub(ts[0]).Seconds()
		if res.ChannelRateMin < 0 || r < res.ChannelRateMin {
			res.ChannelRateMin = r
		}
		res.ChannelRateMax = max(res.ChannelRateMax, r)
		for i := range ts {
			for j := i + 1; j < len(ts); j++ {
				bound := float64(burst) + rate*ts[j].Sub(ts[i]).Seconds()
				res.WorstWindow = max(res.WorstWindow, float64(j-i+1)/bound)
			}
		}
	}
}
