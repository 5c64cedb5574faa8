package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/saltapi"
)

// startSaltAPI serves salt-api's interface when the configuration has a
// rest_cherrypy: section.
func (m *Master) startSaltAPI(ctx context.Context) error {
	cfg, on, err := saltapi.LoadConfig(m.cfg)
	if err != nil || !on {
		return err
	}
	kv, err := m.bus.Bucket(ctx, saltapi.TokenBucket)
	if err != nil {
		return err
	}
	srv := saltapi.New(cfg, saltAPIBackend{m}, kv, m.bus, m.source+"/salt-api", m.log)
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	m.component("salt-api").Info("salt-api listening", "addr", ln.Addr().String(), "tls", !cfg.DisableSSL,
		"clients", cfg.Enabled)
	m.grp.Go(func() error { return srv.Serve(m.ctx, ln) })
	return nil
}

// saltAPIBackend is the master as salt-api's Backend: the publisher for
// local clients, the function registry for runner and wheel ones.
type saltAPIBackend struct{ m *Master }

func (b saltAPIBackend) Minions(ctx context.Context, tgt any, tgtType string) ([]string, error) {
	ids, _, err := b.m.publisher.Targets(ctx, tgt, tgtType)
	return ids, err
}

func (b saltAPIBackend) RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error) {
	return minions{b.m.publisher}.RunJob(ctx, t, o, wait)
}

func (b saltAPIBackend) PublishJob(ctx context.Context, t jobs.Targeted, o bus.Origin) (jobs.Published, error) {
	return minions{b.m.publisher}.PublishJob(ctx, t, o)
}

// Call runs a runner or wheel function as `brine run` and a wheel.*
// reaction do: checked first, then a job of its own.
func (b saltAPIBackend) Call(ctx context.Context, wheel, async bool, fun string, args []any, kwargs map[string]any, user string) (jobs.Result, error) {
	if wheel && !b.m.funcs.Wheel(fun) {
		return jobs.Result{}, fmt.Errorf("'%s' is not a wheel function", fun)
	}
	if err := b.m.funcs.Check(fun, args, kwargs); err != nil {
		return jobs.Result{}, err
	}
	run := jobs.NewRun(fun, args, kwargs, user, bus.Origin{Source: b.m.source + "/salt-api"})
	var pub bus.Publisher = b.m.bus
	if wheel {
		run.Fun = "wheel." + fun
		pub = jobs.WheelTags(pub, run.JID)
	}
	if async {
		// The caller follows the job on the event stream; it runs on the
		// master's context, not the request's.
		b.m.grp.Go(func() error {
			if _, err := run.Call(b.m.ctx, b.m.funcs, pub, fun, args, kwargs); err != nil && b.m.ctx.Err() == nil {
				b.m.component("salt-api").Error("salt-api: async job", "jid", run.JID, "fun", fun, "err", err)
			}
			return nil
		})
		return jobs.Result{JID: run.JID, Fun: fun}, nil
	}
	res, err := run.Call(ctx, b.m.funcs, pub, fun, args, kwargs)
	if errors.Is(err, jobs.ErrNotAnnounced) {
		return res, err
	}
	return res, nil
}
