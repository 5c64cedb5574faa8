// Package service is Salt's service beacon (salt/beacons/service.py): it
// fires salt/beacon/<id>/service/<name> with
//
//	{"service_name": "nginx", "nginx": {"running": false, "uncleanshutdown": true}, "id": …}
//
// for each configured service: at every interval, or only when the
// service starts or stops (onchangeonly). Whether it runs is the agent's
// service.status (modules/service: systemctl is-active, or the SysV
// script's status), called through the functions it declares.
//
// Configuration, Salt's:
//
//	services:
//	  sshd: {}                         # an event at every interval
//	  nginx:
//	    onchangeonly: true             # only when it starts or stops
//	    delay: 30                      # ... and has stayed so 30 s
//	    emitatstartup: true            # and once when the beacon starts
//	    uncleanshutdown: /run/nginx.pid
//
// uncleanshutdown is a pid file: when the service does not run, the
// payload says whether the file is still there (a crash or kill -9 leaves
// it); when it runs, the key is absent. emitatstartup (default true) and
// delay (seconds, default 0) apply with onchangeonly, as Salt's.
//
// Where brine differs from Salt, and why: a service status flapping back
// within delay to what was last reported fires nothing (Salt fires the
// same status again once delay has passed); emitatstartup: false is
// obeyed with a delay too (Salt then fires the first status after the
// delay anyway); delay fires once it has passed (Salt's rounds the
// elapsed seconds and waits one more); a glob or invalid service name, an
// unknown option, a delay or emitatstartup without onchangeonly (which
// Salt ignores) are refused when the beacon starts.
package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	svcmod "github.com/brinehq/brine/modules/service"
)

// Module is the service beacon.
var Module = beacons.Module{
	Name: "service",
	Doc:  "Fire an event with whether services run: at each interval, or when they start or stop.",
	New:  New,
}

// svc is one configured service and what the beacon last saw of it.
type svc struct {
	name          string
	onchangeonly  bool
	emitatstartup bool
	delay         time.Duration
	pidfile       string // uncleanshutdown; "" for none

	seen     bool
	last     bool       // running, when last checked
	reported *bool      // running, as last fired
	since    *time.Time // a change waiting for delay to pass
}

// Beacon is a service beacon.
type Beacon struct {
	svcs   []*svc
	status func(ctx context.Context, name string) (bool, error)
	now    func() time.Time
}

// New checks cfg.
func New(cfg beacons.Config) (beacons.Beacon, error) {
	svcs, err := parse(cfg)
	if err != nil {
		return nil, err
	}
	reg := function.New()
	if err := reg.RegisterAll((&svcmod.Manager{}).Funcs()); err != nil {
		return nil, fmt.Errorf("service functions: %w", err)
	}
	return &Beacon{svcs: svcs, now: time.Now, status: func(ctx context.Context, name string) (bool, error) {
		out, err := reg.Call(ctx, "service.status", []any{name}, nil, nil)
		if err != nil {
			return false, err
		}
		on, ok := out.(bool)
		if !ok {
			return false, fmt.Errorf("service.status %s: unexpected %v", name, out)
		}
		return on, nil
	}}, nil
}

func parse(cfg beacons.Config) ([]*svc, error) {
	for k := range cfg {
		if k != "services" {
			return nil, fmt.Errorf("%s: unknown option (want services)", k)
		}
	}
	m, ok := cfg["services"].(map[string]any)
	switch {
	case cfg["services"] == nil:
		return nil, errors.New("services: missing: the service beacon needs the services to check")
	case !ok:
		return nil, fmt.Errorf("services: want a mapping of service names to options, got %v", cfg["services"])
	case len(m) == 0:
		return nil, errors.New("services: empty: the service beacon needs the services to check")
	}
	var out []*svc
	for name, v := range m {
		s, err := parseService(name, v)
		if err != nil {
			return nil, fmt.Errorf("services: %s: %w", name, err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func parseService(name string, v any) (*svc, error) {
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, "/\x00 \t\n*?[") {
		return nil, errors.New("not a service name (one service, no glob)")
	}
	s := &svc{name: name, emitatstartup: true}
	if v == nil {
		return s, nil
	}
	opts, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping of options (onchangeonly, delay, emitatstartup, uncleanshutdown), got %v", v)
	}
	for k, o := range opts {
		switch k {
		case "onchangeonly", "emitatstartup":
			b, ok := o.(bool)
			if !ok {
				return nil, fmt.Errorf("%s: want true or false, got %v", k, o)
			}
			if k == "onchangeonly" {
				s.onchangeonly = b
			} else {
				s.emitatstartup = b
			}
		case "delay":
			sec, err := seconds(o)
			if err != nil {
				return nil, fmt.Errorf("delay: %w", err)
			}
			s.delay = sec
		case "uncleanshutdown":
			p, ok := o.(string)
			if !ok || p == "" {
				return nil, fmt.Errorf("uncleanshutdown: want the service's pid file, got %v", o)
			}
			s.pidfile = p
		default:
			return nil, fmt.Errorf("%s: unknown option (want onchangeonly, delay, emitatstartup or uncleanshutdown)", k)
		}
	}
	if !s.onchangeonly {
		if _, ok := opts["delay"]; ok {
			return nil, errors.New("delay: applies only with onchangeonly: true")
		}
		if _, ok := opts["emitatstartup"]; ok {
			return nil, errors.New("emitatstartup: applies only with onchangeonly: true")
		}
	}
	return s, nil
}

// seconds reads a number of seconds, 0 or more.
func seconds(v any) (time.Duration, error) {
	f, ok := py.Number(v)
	if !ok {
		return 0, fmt.Errorf("want a number of seconds, got %v", v)
	}
	if !(f >= 0) || math.IsInf(f, 0) || f > 1e9 {
		return 0, fmt.Errorf("want a number of seconds from 0, got %v", v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Check asks each service's status and returns the events due.
func (b *Beacon) Check(ctx context.Context) ([]beacons.Event, error) {
	var out []beacons.Event
	var errs []error
	now := b.now()
	for _, s := range b.svcs {
		on, err := b.status(ctx, s.name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			continue
		}
		if s.due(on, now) {
			out = append(out, s.event(on))
		}
	}
	return out, errors.Join(errs...)
}

// due is Salt's logic: always without onchangeonly; with it, at the
// first check (emitatstartup) and at each change, after delay when set.
func (s *svc) due(on bool, now time.Time) bool {
	if !s.onchangeonly {
		return true
	}
	first := !s.seen
	changed := s.seen && on != s.last
	s.seen, s.last = true, on
	if first && !s.emitatstartup {
		s.reported = &on // the baseline a change is told from
	}
	if (first && s.emitatstartup) || changed {
		if s.delay == 0 {
			return s.fire(on)
		}
		s.since = &now
	}
	if s.since == nil || now.Sub(*s.since) < s.delay {
		return false
	}
	s.since = nil
	if s.reported != nil && *s.reported == on {
		return false // flapped back within delay
	}
	return s.fire(on)
}

func (s *svc) fire(on bool) bool {
	s.reported = &on
	return true
}

// event is Salt's payload: the status under the service's name, and
// service_name; the sub-tag is the name.
func (s *svc) event(on bool) beacons.Event {
	st := map[string]any{"running": on}
	if s.pidfile != "" && !on {
		_, err := os.Stat(s.pidfile)
		st["uncleanshutdown"] = err == nil
	}
	return beacons.Event{Tag: s.name, Data: map[string]any{"service_name": s.name, s.name: st}}
}

// Close does nothing: the beacon holds nothing between checks.
func (b *Beacon) Close() error { return nil }
