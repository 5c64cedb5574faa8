package dnsmasq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/mine"
)

// Tags of the events the integration fires.
const (
	// ReloadedTag: files written and dnsmasq reloaded, with counts.
	ReloadedTag = "brine/dnsmasq/reloaded"
	// ConflictTag: something left out of the files, naming the hosts.
	ConflictTag = "brine/dnsmasq/conflict"
	// ErrorTag: a write or reload failed; it is retried.
	ErrorTag = "brine/dnsmasq/error"
)

// retryAfter is when a failed write or reload is tried again.
const retryAfter = 5 * time.Second

// Inventory is what the syncer needs from the mine.
type Inventory interface {
	mine.Watcher
	// List returns every record now.
	List(ctx context.Context) ([]*mine.Host, error)
}

// fireFunc fires one event; a runner call passes its own, so that events a
// reaction causes carry that reaction's cause.
type fireFunc = func(ctx context.Context, tag string, data map[string]any) error

// Syncer keeps the files in sync with the mine.
type Syncer struct {
	inv    Inventory
	events bus.Emitter
	log    *slog.Logger

	cfgMu sync.RWMutex
	cfg   *Config

	kick chan struct{} // a new configuration or a retry, coalesced by the debouncer

	renderMu      sync.Mutex // one regeneration at a time; guards the fields below
	reported      map[string]bool
	reloadPending bool

	writes, reloads atomic.Uint64
}

// Options are a Syncer's collaborators.
type Options struct {
	// Events fires ReloadedTag, ConflictTag and ErrorTag events (source
	// brine://<master>/dnsmasq); with no Publisher it fires none.
	Events bus.Emitter
	Logger *slog.Logger
}

// New returns a syncer for cfg over the mine inv. Run starts it.
func New(cfg *Config, inv Inventory, o Options) (*Syncer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Syncer{
		inv: inv, events: o.Events, log: o.Logger, cfg: cfg,
		kick: make(chan struct{}, 1), reported: map[string]bool{},
	}, nil
}

// SetConfig replaces the configuration (on a master reload) and regenerates.
func (s *Syncer) SetConfig(cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.cfgMu.Lock()
	s.cfg = cfg
	s.cfgMu.Unlock()
	s.changed()
	return nil
}

func (s *Syncer) config() *Config {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg
}

// Stats counts the files written and the reloads sent.
type Stats struct {
	Writes  uint64 `json:"writes"`
	Reloads uint64 `json:"reloads"`
}

// Stats returns the counters since New.
func (s *Syncer) Stats() Stats { return Stats{Writes: s.writes.Load(), Reloads: s.reloads.Load()} }

// Run watches the mine and regenerates the files after every burst of
// changes (quiet for the debounce time, at most five debounce times after
// the first change), until ctx ends.
func (s *Syncer) Run(ctx context.Context) error {
	changes, watchErr := mine.Feed(ctx, s.inv)
	var view mine.View
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	var deadline time.Time // of the burst under way; zero when none
	settle := func() {
		d := s.config().Debounce
		if deadline.IsZero() {
			deadline = time.Now().Add(5 * d)
		}
		quiet.Reset(max(0, min(d, time.Until(deadline))))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-watchErr:
			return fmt.Errorf("dnsmasq: %w", err)
		case c := <-changes:
			view.Apply(c)
			if view.Synced { // while the mine is still loading, wait for all of it
				settle()
			}
		case <-s.kick:
			settle()
		case <-quiet.C:
			deadline = time.Time{}
			if _, err := s.write(ctx, view.List(), false, s.fire); err != nil {
				s.log.Error("dnsmasq: regenerating", "err", err, "retry_in", retryAfter)
				time.AfterFunc(retryAfter, s.changed)
			}
		}
	}
}

// changed asks for a regeneration (after a new configuration, or to retry
// a failed one).
func (s *Syncer) changed() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Report is the outcome of one regeneration.
type Report struct {
	Hosts     int        `json:"hosts"`
	DHCPHosts int        `json:"dhcp_hosts"`
	AddnHosts int        `json:"addn_hosts"`
	Conflicts []Conflict `json:"conflicts"`
	// Written lists the files whose content changed.
	Written []string `json:"written"`
	// Reload is how dnsmasq was told ("sighup", "command"), empty if not.
	Reload     string  `json:"reload,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Refresh regenerates now from the mine as stored (not the watched view),
// reloading dnsmasq when a file changed or force is set. It is the
// dnsmasq.refresh runner function.
func (s *Syncer) Refresh(ctx context.Context, force bool, fire fireFunc) (*Report, error) {
	hosts, err := s.inv.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("dnsmasq: %w", err)
	}
	return s.write(ctx, hosts, force, fire)
}

func (s *Syncer) write(ctx context.Context, hosts []*mine.Host, force bool, fire fireFunc) (*Report, error) {
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	start := time.Now()
	cfg := s.config()
	r := Render(hosts, cfg)
	rep := &Report{Hosts: r.Hosts, DHCPHosts: r.DHCPLines, AddnHosts: r.AddnLines, Conflicts: r.Conflicts, Written: []string{}}
	if rep.Conflicts == nil {
		rep.Conflicts = []Conflict{}
	}
	s.reportConflicts(ctx, r.Conflicts, fire)

	for _, f := range []struct {
		path    string
		content []byte
	}{{cfg.HostsFile, r.DHCP}, {cfg.AddnHosts, r.Addn}} {
		if f.path == "" {
			continue
		}
		wrote, err := writeIfChanged(f.path, f.content)
		if wrote {
			s.writes.Add(1)
			rep.Written = append(rep.Written, f.path)
			s.reloadPending = true
		}
		if err != nil {
			s.failed(ctx, fire, "write", f.path, err)
			return rep, fmt.Errorf("dnsmasq: %w", err)
		}
	}
	if s.reloadPending || force {
		how, err := reload(ctx, cfg)
		switch {
		case errors.Is(err, errNoReload), errors.Is(err, errNotRunning):
			s.log.Debug("dnsmasq: not reloaded", "reason", err)
			s.reloadPending = false
		case err != nil:
			target := cfg.PidFile
			if target == "" {
				target = strings.Join(cfg.ReloadCommand, " ")
			}
			s.failed(ctx, fire, "reload", target, err)
			return rep, fmt.Errorf("dnsmasq: %w", err)
		default:
			s.reloadPending = false
			s.reloads.Add(1)
			rep.Reload = how
		}
	}
	rep.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if len(rep.Written) > 0 || rep.Reload != "" {
		s.log.Info("dnsmasq files updated", "hosts", rep.Hosts, "dhcp_hosts", rep.DHCPHosts, "addn_hosts", rep.AddnHosts,
			"conflicts", len(rep.Conflicts), "written", rep.Written, "reload", rep.Reload)
		s.emit(ctx, fire, ReloadedTag, map[string]any{"hosts": rep.Hosts, "dhcp_hosts": rep.DHCPHosts,
			"addn_hosts": rep.AddnHosts, "conflicts": len(rep.Conflicts), "written": rep.Written,
			"reload": rep.Reload, "duration_ms": rep.DurationMS})
	}
	return rep, nil
}

// reportConflicts fires an event for each conflict that is new since the
// previous regeneration (a standing conflict is reported once).
func (s *Syncer) reportConflicts(ctx context.Context, conflicts []Conflict, fire fireFunc) {
	now := make(map[string]bool, len(conflicts))
	for _, c := range conflicts {
		k := c.key()
		now[k] = true
		if s.reported[k] {
			continue
		}
		s.log.Warn("dnsmasq: left out", "kind", c.Kind, "value", c.Value, "hosts", c.Hosts, "reason", c.Message)
		s.emit(ctx, fire, ConflictTag, map[string]any{"kind": c.Kind, "value": c.Value, "hosts": c.Hosts, "message": c.Message})
	}
	s.reported = now
}

// failed reports a failed write (target: the file) or reload (target: the
// pid file or command).
func (s *Syncer) failed(ctx context.Context, fire fireFunc, op, target string, err error) {
	s.log.Error("dnsmasq: "+op+" failed", "target", target, "err", err)
	s.emit(ctx, fire, ErrorTag, map[string]any{"operation": op, "target": target, "error": err.Error()})
}

func (s *Syncer) emit(ctx context.Context, fire fireFunc, tag string, data map[string]any) {
	if err := fire(ctx, tag, data); err != nil && ctx.Err() == nil {
		s.log.Error("dnsmasq: firing event", "tag", tag, "err", err)
	}
}

// Funcs are dnsmasq.refresh, regenerating with s.
func (s *Syncer) Funcs() []function.Func { return funcs(func() *Syncer { return s }) }

// errNotConfigured is what dnsmasq.refresh answers on a master without a
// dnsmasq: block.
var errNotConfigured = errors.New("dnsmasq.refresh: the dnsmasq integration is not configured (no dnsmasq: block in the master config)")

// funcs declares dnsmasq.refresh; syncer returns the running syncer, nil
// when the integration is off.
func funcs(syncer func() *Syncer) []function.Func {
	return []function.Func{{
		Name: "dnsmasq.refresh",
		Doc:  "Regenerate dnsmasq's dhcp-hostsfile and addn-hosts from the mine now; reload dnsmasq if they changed (or force=True).",
		Params: []function.Param{
			{Name: "force", Kind: function.Bool, Default: false},
		},
		Run: func(ctx context.Context, in *function.Input) (any, error) {
			s := syncer()
			if s == nil {
				return nil, errNotConfigured
			}
			fire := in.Fire
			return s.Refresh(ctx, in.Bool("force"), func(ctx context.Context, tag string, data map[string]any) error {
				err := fire(ctx, tag, data)
				if errors.Is(err, function.ErrNoEvents) {
					return s.fire(ctx, tag, data) // called with no event to cause from (brine run)
				}
				return err
			})
		},
	}}
}

// fire publishes one of the syncer's own events (no cause); a syncer with
// no publisher fires none.
func (s *Syncer) fire(ctx context.Context, tag string, data map[string]any) error {
	if s.events.Publisher == nil {
		return nil
	}
	return s.events.Fire(ctx, tag, data)
}
