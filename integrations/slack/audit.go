package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/jobs"
)

// ThreadKeep is how long a thread parent is remembered after it was posted.
const ThreadKeep = 7 * 24 * time.Hour

// ThreadBucket describes the key-value bucket that remembers thread
// parents, so a result that arrives after a restart still goes into its
// thread (natsbus.Bus.Bucket opens it).
var ThreadBucket = bus.BucketConfig{Name: "slack_threads", Description: "brine Slack thread parents", TTL: ThreadKeep}

// Threads is where thread parents are remembered (*natsbus.Bucket is one).
type Threads interface {
	Get(ctx context.Context, key string) (bus.Entry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
}

// maxBackoff caps the wait between retries of a failing Slack.
const maxBackoff = time.Minute

// ackWait is how long a delivered event may go without a sign of life before
// the bus hands it out again (after a crash); the handler signals progress
// every third of it while it works.
const ackWait = 15 * time.Second

// Consumer is the part of bus.Bus the audit reads events from.
type Consumer interface {
	Consume(ctx context.Context, cfg bus.ConsumerConfig, fn func(context.Context, *bus.Delivery)) (bus.Subscription, error)
}

// Stats count what the audit did since it started.
type Stats struct {
	Events      atomic.Uint64 // events read
	Posted      atomic.Uint64 // messages Slack accepted (posts and edits)
	RateLimited atomic.Uint64 // 429 answers
	Retries     atomic.Uint64 // retries after 5xx or network errors
	Held        atomic.Uint64 // waits after permanent errors (auth, channel)
	Dropped     atomic.Uint64 // messages Slack rejected as malformed
}

// Snapshot returns the counters by name.
func (s *Stats) Snapshot() map[string]uint64 {
	return map[string]uint64{"events": s.Events.Load(), "posted": s.Posted.Load(), "rate_limited": s.RateLimited.Load(),
		"retries": s.Retries.Load(), "held": s.Held.Load(), "dropped": s.Dropped.Load()}
}

// state is what a configuration reload replaces at once.
type state struct {
	cfg  *Config
	post poster
	red  *jobs.Redactor
}

// Audit posts the audit trail and serves the slack.* functions.
type Audit struct {
	st       atomic.Pointer[state]
	consumer string // fixed at start: the durable consumer's name
	pattern  string // fixed at start: the tags the consumer reads
	threads  Threads
	events   bus.Emitter // brine/slack/error; its source's events are never posted
	log      *slog.Logger
	client   *http.Client

	lmu      sync.Mutex
	limiters map[string]*rate.Limiter

	rmu      sync.Mutex
	reported map[string]bool // permanent errors reported since the last success

	reloaded chan struct{} // wakes a held delivery after Reload

	stats Stats
}

// Option configures an Audit.
type Option func(*Audit)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(a *Audit) { a.log = l } }

// WithSource sets the source of the events the integration fires; events
// from it are never posted.
func WithSource(s string) Option { return func(a *Audit) { a.events.Source = s } }

// WithHTTPClient sets the HTTP client for Slack (default: 30 s timeout).
func WithHTTPClient(c *http.Client) Option { return func(a *Audit) { a.client = c } }

// New builds the audit for cfg (LoadConfig), remembering threads in
// threads (a ThreadBucket) and firing brine/slack/error on pub.
func New(cfg *Config, threads Threads, pub bus.Publisher, opts ...Option) *Audit {
	a := &Audit{consumer: cfg.Consumer, pattern: cfg.pattern(), threads: threads, events: bus.Emitter{Publisher: pub, Source: "brine://slack"}, log: slog.Default(),
		client: &http.Client{Timeout: 30 * time.Second}, limiters: map[string]*rate.Limiter{}, reported: map[string]bool{},
		reloaded: make(chan struct{}, 1)}
	for _, o := range opts {
		o(a)
	}
	a.st.Store(a.newState(cfg))
	return a
}

func (a *Audit) newState(cfg *Config) *state {
	st := &state{cfg: cfg, red: jobs.NewRedactor(cfg.RedactKeys, cfg.Redact, []string{cfg.Token, cfg.WebhookURL})}
	if cfg.Token != "" {
		st.post = newWebAPI(cfg.Token, cfg.APIURL, a.client)
	} else {
		st.post = &webhook{url: cfg.WebhookURL, client: a.client}
	}
	return st
}

// Reload applies a new configuration (SIGHUP): token, webhook, channels,
// rules, rates and redaction change for the next message; held messages
// go out as soon as the new token or channel works. The consumer's name and
// the tags it reads (a new rule for tags outside the old ones) change only at
// the next start.
func (a *Audit) Reload(cfg *Config) {
	a.st.Store(a.newState(cfg))
	select {
	case a.reloaded <- struct{}{}:
	default:
	}
	a.lmu.Lock()
	a.limiters = map[string]*rate.Limiter{}
	a.lmu.Unlock()
	a.rmu.Lock()
	a.reported = map[string]bool{}
	a.rmu.Unlock()
}

func (a *Audit) cur() *state { return a.st.Load() }

// Stats returns the audit's counters.
func (a *Audit) Stats() *Stats { return &a.stats }

// Run posts the audit trail from the durable consumer until ctx ends. One
// event is worked on at a time and acknowledged only when all its messages
// were accepted by Slack, so messages go out in the order of the events and
// a restart or an outage loses nothing. A new consumer starts at new events.
func (a *Audit) Run(ctx context.Context, c Consumer) error {
	sub, err := c.Consume(ctx, bus.ConsumerConfig{Name: a.consumer, Pattern: a.pattern, MaxInFlight: 1, DeliverNew: true, AckWait: ackWait},
		func(ctx context.Context, d *bus.Delivery) {
			a.stats.Events.Add(1)
			// Waits (rate, Retry-After, outages) may be long: keep telling
			// the bus the event is being worked on, so a short AckWait
			// only matters when the master is gone.
			stop := d.KeepAlive(ackWait / 3)
			defer stop()
			// A failure (the threads bucket without a quorum, say) is
			// retried here, the event held: a Nak would let the next
			// event (a job's result) go before this one (its start), and
			// the result would be posted outside its thread. If this
			// master dies meanwhile, another gets the event first.
			// After bus.MaxAttempts (minutes, the waits doubling) the
			// event is dead-lettered, so that one event no handler can
			// post does not stop the audit for ever.
			attempts, wait := max(d.Attempt, 1), time.Second
			for err := a.handle(ctx, d.Event); err != nil; err = a.handle(ctx, d.Event) {
				if ctx.Err() != nil {
					return
				}
				if attempts >= bus.MaxAttempts {
					a.log.Error("slack: event dead-lettered", "tag", d.Event.Tag, "event", d.Event.ID, "attempts", attempts, "err", err)
					if derr := bus.DeadLetter(ctx, a.events.Publisher, a.events.Source, a.consumer, d, attempts, err, time.Second); derr != nil {
						a.log.Error("slack: dead letter", "err", derr)
					}
					return
				}
				a.log.Error("slack: event not posted; retrying", "tag", d.Event.Tag, "event", d.Event.ID, "retry_in", wait, "err", err)
				if !backoff.Sleep(ctx, wait) {
					return
				}
				attempts, wait = attempts+1, min(2*wait, 30*time.Second)
			}
			_ = d.Ack()
		})
	if err != nil {
		return fmt.Errorf("slack: %w", err)
	}
	st := a.cur()
	a.log.Info("slack audit running", "consumer", a.consumer, "rules", len(st.cfg.Audit), "threads", st.post.threads(),
		"rate", st.cfg.Rate, "burst", st.cfg.Burst)
	<-ctx.Done()
	sub.Stop()
	return ctx.Err()
}

// handle renders ev and delivers its messages.
// When a reload happens while a message is held, the event is rendered again
// with the new configuration (a fixed channel applies to it) and delivery
// goes on with the messages not yet sent.
func (a *Audit) handle(ctx context.Context, ev *bus.Event) error {
	if a.ownEvent(ev) {
		return nil
	}
	sent := 0
	for {
		st := a.cur()
		var lookupErr error
		lookup := func(key string) *thread {
			t, err := a.thread(ctx, key)
			if err != nil {
				lookupErr = err
			}
			return t
		}
		msgs, err := st.render(ev, lookup)
		if err != nil {
			a.log.Warn("slack: unreadable event skipped", "tag", ev.Tag, "event", ev.ID, "err", err)
			return nil
		}
		if lookupErr != nil {
			return lookupErr
		}
		for ; sent < len(msgs); sent++ {
			err := a.deliver(ctx, st, msgs[sent])
			if errors.Is(err, errReloaded) {
				break
			}
			if err != nil {
				return err
			}
		}
		if sent >= len(msgs) {
			return nil
		}
	}
}

// errReloaded ends the delivery of a held message when the configuration
// was reloaded: the event is rendered again.
var errReloaded = errors.New("slack: configuration reloaded")

// thread is a remembered thread parent.
type thread struct {
	Channel string `json:"channel"`
	// TS is the parent's Slack timestamp; empty in webhook mode, where the
	// entry only records that the thread was selected.
	TS    string `json:"ts,omitempty"`
	Event string `json:"event"`
	Text  string `json:"text,omitempty"`
	// Skip records that the rule left this thread out.
	Skip bool `json:"skip,omitempty"`
	// Minions are the agents a targeted job was sent to; Results what each
	// that returned gave (success); Summarized that the closing summary
	// was posted.
	Minions    []string        `json:"minions,omitempty"`
	Results    map[string]bool `json:"results,omitempty"`
	Summarized bool            `json:"summarized,omitempty"`
}

func (a *Audit) thread(ctx context.Context, key string) (*thread, error) {
	t, _, err := a.readThread(ctx, key)
	return t, err
}

// readThread returns the remembered thread key and the revision it was
// read at (nil when none is remembered).
func (a *Audit) readThread(ctx context.Context, key string) (*thread, uint64, error) {
	e, err := a.threads.Get(ctx, key)
	if errors.Is(err, bus.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("slack: thread %s: %w", key, err)
	}
	var t thread
	if err := json.Unmarshal(e.Value, &t); err != nil {
		return nil, 0, fmt.Errorf("slack: thread %s: %w", key, err)
	}
	return &t, e.Revision, nil
}

// deliver sends m, waiting for the channel's rate, through 429s (as long
// as Retry-After says), 5xx and network errors (with backoff) and permanent
// errors (held, reported once). A message Slack rejects as malformed is
// reported and dropped.
func (a *Audit) deliver(ctx context.Context, st *state, m message) error {
	if m.Op == opSkip {
		return a.send(ctx, nil, m) // Slack is not involved
	}
	if m.Op == opTally {
		// Counted without Slack; only the summary, once every agent
		// returned, is a message (and takes a token of the rate).
		sum, err := a.tally(ctx, m)
		if err != nil || sum == nil {
			return err
		}
		if err := a.deliver(ctx, st, *sum); err != nil {
			return err
		}
		return a.summarized(ctx, m.Thread)
	}
	failures := 0
	for {
		if err := a.wait(ctx, m.Channel); err != nil {
			return err
		}
		err := a.send(ctx, st.post, m)
		if err == nil {
			a.stats.Posted.Add(1)
			a.recovered()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		kind, code, wait := classify(err)
		switch kind {
		case rateLimited:
			a.stats.RateLimited.Add(1)
			a.log.Warn("slack: rate limited", "channel", m.Channel, "retry_after", wait)
		case transient:
			a.stats.Retries.Add(1)
			failures++
			wait = retryWait(failures)
			a.log.Warn("slack: unavailable; retrying", "channel", m.Channel, "in", wait, "err", err)
		case held:
			a.stats.Held.Add(1)
			a.report(ctx, code, err, m, "held")
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(st.cfg.Hold):
			case <-a.reloaded:
			}
			if a.cur() != st {
				return errReloaded
			}
			continue
		case rejected:
			a.stats.Dropped.Add(1)
			a.report(ctx, code, err, m, "dropped")
			return nil
		}
		if !backoff.Sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

// send performs one message against Slack through p.
func (a *Audit) send(ctx context.Context, p poster, m message) error {
	switch m.Op {
	case opSkip:
		return a.remember(ctx, m.Thread, thread{Channel: m.Channel, Event: m.Event, Skip: true})
	case opParent:
		if t, err := a.thread(ctx, m.Thread); err != nil {
			return err
		} else if t != nil && t.Event == m.Event {
			return nil // posted before a redelivery
		}
		ts, err := p.post(ctx, m.Channel, "", m)
		if err != nil {
			return err
		}
		return a.remember(ctx, m.Thread, thread{Channel: m.Channel, TS: ts, Event: m.Event, Text: m.Text, Minions: m.Minions})
	case opReply, opUpdate:
		t, err := a.thread(ctx, m.Thread)
		if err != nil {
			return err
		}
		switch {
		case t == nil || t.TS == "" || !p.threads():
			if m.Headline != "" {
				m.Text = m.Headline + "\n" + m.Text
			}
			_, err = p.post(ctx, m.Channel, "", m)
		case m.Op == opReply:
			_, err = p.post(ctx, t.Channel, t.TS, m)
		default:
			err = p.update(ctx, t.Channel, t.TS, m)
		}
		return err
	}
	_, err := p.post(ctx, m.Channel, "", m)
	return err
}

// remember stores a thread parent (or a skip) durably.
func (a *Audit) remember(ctx context.Context, key string, t thread) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if _, err := a.threads.Put(ctx, key, b); err != nil {
		return fmt.Errorf("slack: remembering thread %s: %w", key, err)
	}
	return nil
}

// wait takes a token of the channel's rate.
func (a *Audit) wait(ctx context.Context, channel string) error {
	cfg := a.cur().cfg
	if cfg.Rate <= 0 {
		return nil
	}
	a.lmu.Lock()
	l, ok := a.limiters[channel]
	if !ok {
		l = rate.NewLimiter(rate.Limit(cfg.Rate), cfg.Burst)
		a.limiters[channel] = l
	}
	a.lmu.Unlock()
	return l.Wait(ctx)
}

// report fires brine/slack/error and logs, once per error code until Slack
// accepts a message again: a revoked token is one error, not thousands.
func (a *Audit) report(ctx context.Context, code string, err error, m message, action string) {
	a.rmu.Lock()
	seen := a.reported[code]
	a.reported[code] = true
	a.rmu.Unlock()
	if seen {
		a.log.Debug("slack: still failing", "code", code, "err", err)
		return
	}
	msg := a.cur().red.Text(err.Error())
	a.log.Error("slack: message refused", "code", code, "channel", m.Channel, "action", action, "err", msg)
	data := map[string]any{"error": code, "message": msg, "channel": m.Channel, "op": m.Op.String(), "action": action, "event": m.Event}
	if eerr := a.events.Fire(ctx, ErrorTag, data); eerr != nil && ctx.Err() == nil {
		a.log.Error("slack: cannot fire error event", "err", eerr)
	}
}

// recovered forgets reported errors once Slack accepts a message.
func (a *Audit) recovered() {
	a.rmu.Lock()
	if len(a.reported) > 0 {
		a.reported = map[string]bool{}
		a.rmu.Unlock()
		a.log.Info("slack: posting again")
		return
	}
	a.rmu.Unlock()
}

// retryWait is the wait after n consecutive failures: 1 s doubled, capped
// at maxBackoff, with jitter.
func retryWait(n int) time.Duration { return backoff.Delay(time.Second, maxBackoff, n) }

// tally notes one agent's result in its job's thread and returns the
// summary to post when it was the last one the job waited for (nil
// otherwise, and when the thread does not know the job's agents).
func (a *Audit) tally(ctx context.Context, m message) (*message, error) {
	counted := false
	t, err := a.change(ctx, m.Thread, func(t *thread) bool {
		if t.Skip || len(t.Minions) == 0 || t.Summarized {
			return false
		}
		if t.Results == nil {
			t.Results = map[string]bool{}
		}
		t.Results[m.Minion] = m.OK
		counted = true
		return true
	})
	if err != nil || !counted {
		return nil, err
	}
	var failed, waiting []string
	for _, id := range t.Minions {
		ok, returned := t.Results[id]
		switch {
		case !returned:
			waiting = append(waiting, id)
		case !ok:
			failed = append(failed, id)
		}
	}
	if len(waiting) > 0 {
		return nil, nil
	}
	sum := &message{Op: opReply, Channel: t.Channel, Thread: m.Thread, Event: m.Event, Color: "good",
		Text: fmt.Sprintf(":checkered_flag: all %d agents returned, all succeeded", len(t.Minions))}
	if len(failed) > 0 {
		sum.Color = "danger"
		sum.Text = fmt.Sprintf(":checkered_flag: all %d agents returned, %d failed: %s", len(t.Minions), len(failed),
			escape(strings.Join(failed, ", ")))
	}
	return sum, nil
}

// summarized records that a thread's summary was posted.
func (a *Audit) summarized(ctx context.Context, key string) error {
	_, err := a.change(ctx, key, func(t *thread) bool {
		t.Summarized = true
		return true
	})
	return err
}

// change applies fn to the remembered thread key and writes it back at
// the revision it read, reading it again when another master wrote it
// meanwhile: masters tally the results of one job concurrently, and a
// plain write would lose the other's. fn returns false to write nothing;
// a thread never remembered is left alone (nil, nil).
func (a *Audit) change(ctx context.Context, key string, fn func(*thread) bool) (*thread, error) {
	return bus.Change(ctx, func() (*thread, error) {
		t, rev, err := a.readThread(ctx, key)
		if t == nil || err != nil || !fn(t) {
			return t, err
		}
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		if _, err := a.threads.Update(ctx, key, b, rev); err != nil {
			return nil, fmt.Errorf("slack: thread %s: %w", key, err)
		}
		return t, nil
	})
}
