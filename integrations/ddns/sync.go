package ddns

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/mine"
	targeting "github.com/brinehq/brine/target"
)

// syncRetry is how often hosts whose update failed are tried again.
const syncRetry = 5 * time.Second

// SyncConfig is `ddns: sync:`, the built-in sync that needs no reaction
// file: every host of the mine that targets select has its A/AAAA and PTR
// records in zone, written when the cloud reports it and removed when it
// is destroyed.
//
//	ddns:
//	  sync:
//	    zone: example.com
//	    targets: 'web*'     # Salt target (default '*')
//	    tgt_type: glob      # glob, list, pcre or grain
type SyncConfig struct {
	Zone    string `yaml:"zone" json:"zone"`
	Targets any    `yaml:"targets" json:"targets"`
	TgtType string `yaml:"tgt_type" json:"tgt_type"`
}

func (s *SyncConfig) selector() (*targeting.Target, error) {
	tgt := s.Targets
	if tgt == nil {
		tgt = "*"
	}
	t, err := targeting.Parse(tgt, s.TgtType)
	if err != nil {
		return nil, fmt.Errorf("%w: ddns: sync: targets: %w", ErrConfig, err)
	}
	return t, nil
}

// FireFunc fires an event (the master's publisher).
type FireFunc = func(ctx context.Context, tag string, data map[string]any) error

// syncer is the state of one Sync.
type syncer struct {
	c      *Client
	zone   string // canonical
	tag    string // zone without the final dot, for event tags
	target *targeting.Target
	fire   FireFunc

	// Owned by Sync's loop goroutine.
	mine    mine.View               // the mine as watched
	names   map[string]string       // host id -> FQDN last managed
	applied map[string][]netip.Addr // FQDN -> addresses in the zone
	retry   map[string]bool         // host ids whose last update failed
	running map[string]bool         // host ids with an update under way
	dirty   map[string]bool         // host ids that changed while running

	sem     chan struct{}   // bounds the updates under way
	results chan syncResult // finished updates, back to the loop
}

// syncWorkers is how many hosts are updated at once; concurrent updates to
// the zone share UPDATE messages.
const syncWorkers = 32

// syncResult is one finished host update.
type syncResult struct {
	id, fq, action string
	want           []netip.Addr // the addresses now in the zone (add_host)
	ch             *Change
	err            error
}

// Sync keeps the configured sync zone in line with inv until ctx ends. It
// first reads the zone (a signed AXFR) and reconciles it with the whole
// mine: hosts whose records are missing or wrong are written; with
// ownership on, names this brine owns whose host is gone are deleted
// (without ownership no name is deleted at start-up, as brine cannot tell
// its own from others'). Then it follows each change of the mine. Failed
// updates are retried every few seconds and reported as
// brine/ddns/<zone>/error events.
func (c *Client) Sync(ctx context.Context, inv mine.Watcher, fire FireFunc) error {
	sc := c.conf().Sync
	if sc == nil {
		return fmt.Errorf("%w: ddns: sync is not configured", ErrConfig)
	}
	t, err := sc.selector()
	if err != nil {
		return err
	}
	s := &syncer{
		c: c, zone: dns.CanonicalName(sc.Zone), target: t, fire: fire,
		names:   map[string]string{},
		applied: map[string][]netip.Addr{}, retry: map[string]bool{},
		running: map[string]bool{}, dirty: map[string]bool{},
		sem: make(chan struct{}, syncWorkers), results: make(chan syncResult),
	}
	s.tag = strings.TrimSuffix(s.zone, ".")
	changes, watchErr := mine.Feed(ctx, inv)
	tick := time.NewTicker(syncRetry)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-watchErr:
			return fmt.Errorf("ddns sync: %w", err)
		case r := <-s.results:
			s.done(ctx, r)
		case <-tick.C:
			if s.mine.Synced {
				for id := range s.retry {
					s.apply(ctx, id)
				}
			}
		case ch := <-changes:
			s.mine.Apply(ch)
			switch {
			case ch.Synced:
				s.reconcile(ctx)
			case s.mine.Synced:
				s.apply(ctx, ch.ID)
			}
		}
	}
}

// reconcile reads the zone and brings it in line with the whole mine.
func (s *syncer) reconcile(ctx context.Context) {
	rrs, err := s.c.Transfer(ctx, s.zone)
	if err != nil {
		s.failed(ctx, "", "reconcile", err)
		// Without the zone's state every host is written: add_host is
		// idempotent, only slower.
	}
	owned := map[string]bool{}
	for _, rr := range rrs {
		name := dns.CanonicalName(rr.Header().Name)
		switch rr.Header().Rrtype {
		case dns.TypeA, dns.TypeAAAA:
			s.applied[name] = append(s.applied[name], rrAddr(rr))
		case dns.TypeTXT:
			if s.c.owns([]dns.RR{rr}) {
				owned[name] = true
			}
		}
	}
	wanted := map[string]bool{}
	for id := range s.mine.Hosts {
		if fq, ok := s.name(id); ok {
			wanted[fq] = true
		}
		s.apply(ctx, id)
	}
	if !s.c.conf().Ownership {
		return
	}
	for name := range owned {
		if wanted[name] || len(s.applied[name]) == 0 {
			continue
		}
		ch, err := s.c.DeleteHost(ctx, s.zone, name, Settings{})
		if err != nil {
			s.failed(ctx, name, "reconcile", err)
			continue
		}
		delete(s.applied, name)
		s.updated(ctx, "reconcile", ch)
	}
}

// name returns the FQDN host id has in the zone: its FQDN when the mine has
// one inside the zone, else its id.
func (s *syncer) name(id string) (string, bool) {
	if h := s.mine.Hosts[id]; h != nil && h.FQDN != "" {
		if fq, err := FQDN(s.zone, dns.Fqdn(h.FQDN)); err == nil {
			return fq, true
		}
	}
	fq, err := FQDN(s.zone, id)
	return fq, err == nil
}

// desired returns the addresses host id should have in the zone; ok is
// false when it should have none (gone, or not targeted).
func (s *syncer) desired(id string) ([]netip.Addr, bool) {
	h := s.mine.Hosts[id]
	if h == nil || !s.target.Match(h.Facts()) {
		return nil, false
	}
	var out []netip.Addr
	for _, ip := range h.IPs {
		if a, err := netip.ParseAddr(ip); err == nil && !a.IsLoopback() && !a.IsUnspecified() && !mine.LinkScoped(a) {
			out = append(out, a.Unmap())
		}
	}
	return out, true
}

// apply starts bringing host id's records in line with the mine; the
// update runs on its own goroutine (one at a time per host) and reports to
// done.
func (s *syncer) apply(ctx context.Context, id string) {
	if s.running[id] {
		s.dirty[id] = true
		return
	}
	want, present := s.desired(id)
	fq, named := s.names[id]
	if present {
		if fq, named = s.name(id); !named {
			s.failed(ctx, id, "sync", fmt.Errorf("%s cannot be named in %s", id, s.tag))
			return
		}
	}
	var op func() (*Change, error)
	action := "add_host"
	switch {
	case present && len(want) == 0:
		// In the mine without an address yet (still being created).
		delete(s.retry, id)
		return
	case present:
		s.names[id] = fq
		if sameAddrs(s.applied[fq], want) {
			delete(s.retry, id)
			return
		}
		op = func() (*Change, error) { return s.c.setHost(ctx, s.zone, fq, want, Settings{}, true) }
	case named:
		action = "delete_host"
		op = func() (*Change, error) { return s.c.DeleteHost(ctx, s.zone, fq, Settings{}) }
	default:
		return
	}
	s.running[id] = true
	go func() {
		r := syncResult{id: id, fq: fq, action: action, want: want}
		select {
		case s.sem <- struct{}{}:
			r.ch, r.err = op()
			<-s.sem
		case <-ctx.Done():
			r.err = ctx.Err()
		}
		select {
		case s.results <- r:
		case <-ctx.Done():
		}
	}()
}

// done records a finished update and starts the next one for the host if it
// changed in the meantime.
func (s *syncer) done(ctx context.Context, r syncResult) {
	delete(s.running, r.id)
	switch {
	case r.err != nil:
		s.failed(ctx, r.id, r.action, r.err)
	case r.action == "add_host":
		s.applied[r.fq] = r.want
		delete(s.retry, r.id)
		s.updated(ctx, r.action, r.ch)
	default:
		delete(s.applied, r.fq)
		if s.names[r.id] == r.fq {
			delete(s.names, r.id)
		}
		delete(s.retry, r.id)
		s.updated(ctx, r.action, r.ch)
	}
	if s.dirty[r.id] {
		delete(s.dirty, r.id)
		s.apply(ctx, r.id)
	}
}

// sameAddrs reports whether the zone holds exactly the wanted addresses.
func sameAddrs(have, want []netip.Addr) bool {
	return len(have) == len(want) && !slices.ContainsFunc(want, func(a netip.Addr) bool { return !slices.Contains(have, a) })
}

func (s *syncer) updated(ctx context.Context, action string, ch *Change) {
	if !ch.Changed() || s.fire == nil {
		return
	}
	data := map[string]any{"action": action, "zone": s.tag, "fqdn": ch.FQDN, "added": ch.Added, "removed": ch.Removed, "sync": true}
	if err := s.fire(ctx, "brine/ddns/"+s.tag+"/"+TagUpdated, data); err != nil && ctx.Err() == nil {
		s.c.log.Warn("ddns sync: cannot fire event", "err", err)
	}
}

func (s *syncer) failed(ctx context.Context, id, action string, err error) {
	if ctx.Err() != nil {
		return
	}
	if id != "" {
		s.retry[id] = true
	}
	s.c.log.Error("ddns sync", "zone", s.tag, "host", id, "action", action, "err", err)
	if s.fire == nil {
		return
	}
	data := map[string]any{"action": action, "zone": s.tag, "name": id, "error": err.Error(), "sync": true}
	if ferr := s.fire(ctx, "brine/ddns/"+s.tag+"/"+TagError, data); ferr != nil {
		s.c.log.Warn("ddns sync: cannot fire event", "err", ferr)
	}
}
