package beacons

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// FireFunc sends an event to the master (the agent's outbox: kept on
// disk while the master is away).
type FireFunc func(ctx context.Context, tag string, data map[string]any) error

// Runner runs an agent's beacons.
type Runner struct {
	reg  *Registry
	id   string
	fire FireFunc
	log  *slog.Logger
	// StateRunning reports a state run in progress (for
	// disable_during_state_run); nil: never.
	StateRunning func() bool

	mu      sync.Mutex
	ctx     context.Context
	cfg     map[string]map[string]any // the configuration in force, by beacon name
	enabled bool                      // beacons.enable/disable (all)
	live    map[string]*live
}

type live struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewRunner returns a Runner firing events for agent id.
func NewRunner(reg *Registry, id string, fire FireFunc, log *slog.Logger) *Runner {
	return &Runner{reg: reg, id: id, fire: fire, log: log, cfg: map[string]map[string]any{}, enabled: true, live: map[string]*live{}}
}

// Check builds every beacon of cfg (Salt's beacons: option, each value
// in the list or mapping form) without starting them: the errors a
// configuration has, each naming the beacon and the key.
func (r *Runner) Check(cfg map[string]any) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	var errs []error
	for _, name := range sortedNames(cfg) {
		if name == "enabled" {
			// beacons.disable's switch, as Salt keeps it.
			continue
		}
		m, err := Normalize(cfg[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		b, _, err := r.build(name, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if b != nil {
			_ = b.Close()
		}
		out[name] = m
	}
	return out, errors.Join(errs...)
}

// build makes the beacon name configured with m.
func (r *Runner) build(name string, m map[string]any) (Beacon, Settings, error) {
	s, modCfg, err := Split(name, m)
	if err != nil {
		return nil, s, fmt.Errorf("%s: %w", name, err)
	}
	mod, ok := r.reg.Lookup(s.Module)
	if !ok {
		return nil, s, fmt.Errorf("%s: no beacon module %q (brine has: %v)", name, s.Module, r.reg.Names())
	}
	b, err := mod.New(modCfg)
	if err != nil {
		return nil, s, fmt.Errorf("%s: %w", name, err)
	}
	return b, s, nil
}

// Start runs the beacons of cfg until ctx ends. The configuration must
// pass Check: a beacon that does not build is an error, nothing runs.
func (r *Runner) Start(ctx context.Context, cfg map[string]any) error {
	norm, err := r.Check(cfg)
	if err != nil {
		return err
	}
	enabled := true
	if e, ok := cfg["enabled"].(bool); ok {
		enabled = e
	}
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	return r.Set(norm, enabled)
}

// Set replaces the configuration in force: beacons whose configuration
// changed start again, removed ones stop, and none runs while disabled.
func (r *Runner) Set(cfg map[string]map[string]any, enabled bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	type built struct {
		b Beacon
		s Settings
	}
	start := map[string]built{}
	var errs []error
	for name, m := range cfg {
		if old, ok := r.cfg[name]; ok && equalConfig(old, m) && r.live[name] != nil && enabled == r.enabled {
			continue
		}
		b, s, err := r.build(name, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		start[name] = built{b, s}
	}
	if err := errors.Join(errs...); err != nil {
		for _, x := range start {
			_ = x.b.Close()
		}
		return err
	}
	for name, l := range r.live {
		if _, keep := cfg[name]; !keep || start[name].b != nil || !enabled {
			l.cancel()
			<-l.done
			delete(r.live, name)
		}
	}
	r.cfg, r.enabled = maps.Clone(cfg), enabled
	for name, x := range start {
		if !enabled || !x.s.Enabled || r.ctx == nil {
			_ = x.b.Close()
			continue
		}
		ctx, cancel := context.WithCancel(r.ctx)
		l := &live{cancel: cancel, done: make(chan struct{})}
		r.live[name] = l
		go func() {
			defer close(l.done)
			defer x.b.Close()
			r.loop(ctx, name, x.b, x.s)
		}()
	}
	return nil
}

// Config returns the configuration in force and the global switch.
func (r *Runner) Config() (map[string]map[string]any, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.cfg), r.enabled
}

// Available lists the beacon modules.
func (r *Runner) Available() []string { return r.reg.Names() }

// Stop stops every beacon.
func (r *Runner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, l := range r.live {
		l.cancel()
		<-l.done
		delete(r.live, name)
	}
}

func equalConfig(a, b map[string]any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// loop checks one beacon every interval, or as soon as it is Ready, and
// sends its events within its rate.
func (r *Runner) loop(ctx context.Context, name string, b Beacon, s Settings) {
	tick := time.NewTicker(s.Interval)
	defer tick.Stop()
	var ready <-chan struct{}
	if n, ok := b.(Notifier); ok {
		ready = n.Ready()
	}
	lim := newLimiter(s.Rate, s.Coalesce)
	flush := time.NewTimer(time.Hour)
	flush.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-ready:
		case <-flush.C:
			r.send(ctx, name, lim.flush(time.Now()))
			if d, ok := lim.next(time.Now()); ok {
				flush.Reset(d)
			}
			continue
		}
		if s.DisableDuringStateRun && r.StateRunning != nil && r.StateRunning() {
			// What happens during a state run is the run's own doing (a
			// file it writes): checked and dropped, as Salt closes the
			// beacon for the run, not reported once it ends.
			_, _ = b.Check(ctx)
			continue
		}
		evs, err := b.Check(ctx)
		if err != nil {
			// Said once until it changes: a beacon failing every second
			// must not fill the log.
			if msg := err.Error(); msg != lastErr {
				r.log.Warn("beacon check failed", "beacon", name, "err", err)
				lastErr = msg
			}
			continue
		}
		lastErr = ""
		now := time.Now()
		out := lim.flush(now)
		for _, ev := range evs {
			if send, ok := lim.admit(now, ev); ok {
				out = append(out, send)
			}
		}
		r.send(ctx, name, out)
		if d, ok := lim.next(now); ok {
			flush.Reset(d)
		}
	}
}

// send fires events as Salt's beacons do: salt/beacon/<id>/<name>/<tag>,
// the data with the agent's id.
func (r *Runner) send(ctx context.Context, name string, evs []Event) {
	for _, ev := range evs {
		data := maps.Clone(ev.Data)
		if data == nil {
			data = map[string]any{}
		}
		data["id"] = r.id
		tag := "salt/beacon/" + r.id + "/" + name + "/" + ev.Tag
		if err := r.fire(ctx, tag, data); err != nil && ctx.Err() == nil {
			r.log.Error("beacon event not queued", "beacon", name, "tag", tag, "err", err)
		}
	}
}

// limiter is a token bucket per beacon: events over the rate wait, one
// per tag, with the count of those they stand for (coalesce) or are
// dropped and counted.
type limiter struct {
	rate, tokens float64
	last         time.Time
	coalesce     bool
	pending      map[string]*held
	order        []string
	dropped      int
}

type held struct {
	ev    Event
	count int
}

func newLimiter(rate float64, coalesce bool) *limiter {
	return &limiter{rate: rate, tokens: max(1, rate), last: time.Now(), coalesce: coalesce, pending: map[string]*held{}}
}

func (l *limiter) refill(now time.Time) {
	l.tokens = min(max(1, l.rate), l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
}

// admit returns ev to send now, or keeps it for later.
func (l *limiter) admit(now time.Time, ev Event) (Event, bool) {
	l.refill(now)
	key := ev.Tag + "\x00" + ev.Key
	if h, ok := l.pending[key]; ok && l.coalesce {
		h.ev, h.count = ev, h.count+1
		return Event{}, false
	}
	if l.tokens >= 1 {
		l.tokens--
		if l.dropped > 0 {
			ev.Data = maps.Clone(ev.Data)
			if ev.Data == nil {
				ev.Data = map[string]any{}
			}
			ev.Data["dropped"] = l.dropped
			l.dropped = 0
		}
		return ev, true
	}
	if !l.coalesce {
		l.dropped++
		return Event{}, false
	}
	l.pending[key] = &held{ev: ev, count: 1}
	l.order = append(l.order, key)
	return Event{}, false
}

// flush returns the held events the rate allows now, each with count.
func (l *limiter) flush(now time.Time) []Event {
	l.refill(now)
	var out []Event
	for len(l.order) > 0 && l.tokens >= 1 {
		tag := l.order[0]
		l.order = l.order[1:]
		h := l.pending[tag]
		delete(l.pending, tag)
		ev := h.ev
		ev.Data = maps.Clone(ev.Data)
		if ev.Data == nil {
			ev.Data = map[string]any{}
		}
		ev.Data["count"] = h.count
		l.tokens--
		out = append(out, ev)
	}
	return out
}

// next is when held events may go, if any are held.
func (l *limiter) next(now time.Time) (time.Duration, bool) {
	if len(l.order) == 0 {
		return 0, false
	}
	l.refill(now)
	need := 1 - l.tokens
	if need <= 0 {
		return time.Millisecond, true
	}
	return time.Duration(need / l.rate * float64(time.Second)), true
}
