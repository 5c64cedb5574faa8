package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/wire"
)

// How the agent paces its work on one connection.
const (
	// drainBatch is how many queued items are read from disk at once.
	drainBatch = 256
	// pollOutbox is how often the outbox is checked for items other
	// processes (`brine call`) queued.
	pollOutbox = time.Second
	// grainsEvery is how often grains are gathered again and sent when
	// they changed (an address added by DHCP, a renamed host).
	grainsEvery = 5 * time.Minute
)

// session connects to the masters and serves them until ctx ends or the
// configuration of the masters changes (errReload): its links connect,
// authenticate and reconnect by themselves; the session sends the agent's
// own messages — the start events on connection, the grains and the mine,
// the outbox — over the first link that is up (the primary), and each job
// return to the master the job came from while it is connected. It fails
// when every link gave up, or one found a master that does not hold the
// trusted key.
func (a *Agent) session(ctx context.Context) error {
	cfg := a.config()
	links := newLinks(&cfg.Config)
	lctx, cancel := context.WithCancel(ctx)
	changed := make(chan struct{}, 1)
	ended := make(chan error, len(links))
	var wg sync.WaitGroup
	for _, l := range links {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ended <- a.keepLink(lctx, cfg, l, changed)
		}()
	}
	a.links.Store(&links)
	defer func() {
		cancel()
		wg.Wait()
		a.cli.Store(nil)
		a.ready.Store(false)
	}()

	mineEvery := cfg.mineEvery()
	mine := time.NewTicker(max(mineEvery, time.Minute))
	if mineEvery == 0 {
		mine.Stop()
	}
	defer mine.Stop()
	grains := time.NewTicker(grainsEvery)
	defer grains.Stop()
	poll := time.NewTicker(pollOutbox)
	defer poll.Stop()

	var (
		primary *link
		pcli    *gateway.Client
		seen    = map[*link]*gateway.Client{}
		gaveUp  []error
	)
	for {
		if p, c := firstUp(links); c != pcli {
			primary, pcli = p, c
			a.cli.Store(c)
			a.ready.Store(c != nil)
			if c != nil && !a.connected(ctx, seen, links, primary, pcli) {
				continue
			}
		}
		a.logUp(seen, links)
		if pcli != nil {
			a.deliverVia(ctx, links, primary, pcli)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-ended:
			if err == nil {
				continue
			}
			if errors.Is(err, ErrMasterKey) {
				return err
			}
			a.log.Error("giving up on a master", "err", err)
			if gaveUp = append(gaveUp, err); len(gaveUp) == len(links) {
				return errors.Join(gaveUp...)
			}
		case <-changed:
		case ncfg := <-a.reload:
			old := a.config()
			a.apply(ncfg)
			if old.connection() != ncfg.connection() {
				return errReload
			}
			a.updateMine(ctx, primary, pcli)
		case <-a.outbox.Kicked():
		case <-poll.C:
		case <-mine.C:
			a.updateMine(ctx, primary, pcli)
		case <-grains.C:
			if a.grainsChanged() {
				a.updateMine(ctx, primary, pcli)
			}
		case <-a.regrained:
			a.updateMine(ctx, primary, pcli)
		}
	}
}

// firstUp is the first link, in the order of the masters, that is
// connected and accepted, and its connection.
func firstUp(links []*link) (*link, *gateway.Client) {
	for _, l := range links {
		if c, _ := l.client(); c != nil {
			return l, c
		}
	}
	return nil, nil
}

// connected starts the agent's business over a new primary connection:
// when the agent was connected to no master before, Salt's start events,
// the pillar and (once) startup_states; the grains and the mine always.
// It reports false when the connection failed meanwhile.
func (a *Agent) connected(ctx context.Context, seen map[*link]*gateway.Client, links []*link, primary *link, cli *gateway.Client) bool {
	// The agent stayed connected if a connection that was up still is;
	// otherwise it (re)connects, as Salt's minion starts on connecting.
	stayed := false
	for _, l := range links {
		if c, _ := l.client(); c != nil && seen[l] == c {
			stayed = true
		}
	}
	a.logUp(seen, links)
	if !stayed {
		if err := a.announce(); err != nil {
			a.log.Error("start events not queued", "err", err)
		}
		// Salt's minion compiles its pillar when it starts: pillar.get
		// must answer before the first state run.
		go func() {
			if _, err := a.Pillar(ctx, true); err != nil && ctx.Err() == nil {
				a.log.Warn("the pillar could not be fetched; pillar.get answers from an empty pillar until a state run or saltutil.refresh_pillar", "err", err)
			}
		}()
		if a.started.CompareAndSwap(false, true) {
			go a.startupStates(ctx)
		}
	}
	return a.updateMine(ctx, primary, cli)
}

// logUp logs each link that came up since the last call, naming its master
// and all those the agent is connected to, and records which are up in
// seen.
func (a *Agent) logUp(seen map[*link]*gateway.Client, links []*link) {
	for _, l := range links {
		c, addr := l.client()
		if c != nil && seen[l] != c {
			a.log.Info("accepted by the master; agent started", "master", addr, "masters", a.Masters())
		}
		seen[l] = c
	}
}

// updateMine sends the grains and the mine over the primary connection;
// a failure closes it (its link reconnects) and reports false.
func (a *Agent) updateMine(ctx context.Context, primary *link, cli *gateway.Client) bool {
	if cli == nil {
		return false
	}
	if err := a.sendMine(ctx, cli); err != nil {
		if ctx.Err() == nil {
			primary.fail(cli, err)
		}
		return false
	}
	return true
}

// deliverVia delivers the outbox: a job return to the master its job came
// from while that one is connected, everything else over the primary
// connection. A connection a delivery fails on is closed; its link
// reconnects and the session delivers again.
func (a *Agent) deliverVia(ctx context.Context, links []*link, primary *link, pcli *gateway.Client) {
	last, lastCli := primary, pcli
	via := func(it Item) *gateway.Client {
		last, lastCli = primary, pcli
		if origin, ok := a.routes.Load(it.ID); ok {
			for _, l := range links {
				if c, addr := l.client(); c != nil && addr == origin {
					last, lastCli = l, c
					break
				}
			}
		}
		return lastCli
	}
	if _, err := a.drain(ctx, via); err != nil && ctx.Err() == nil {
		last.fail(lastCli, err)
	}
}

// authenticate says hello until the master accepts the key: while it is
// pending the agent waits acceptance_wait_time, growing with jitter up to
// acceptance_wait_time_max, or until the master says it was accepted
// (on l.accepted).
func (a *Agent) authenticate(ctx context.Context, cli *gateway.Client, l *link) error {
	for attempt := 1; ; attempt++ {
		cfg := a.config()
		hello := wire.Hello{ID: a.id, Version: a.opts.Version, AutosignGrains: a.grainsNamed(cfg.AutosignGrains)}
		var rep wire.HelloReply
		hctx, cancel := context.WithTimeout(ctx, helloTimeout)
		err := cli.Call(hctx, wire.MethodHello, hello, &rep)
		cancel()
		if err != nil {
			return fmt.Errorf("authentication: %w", err)
		}
		first, limit := cfg.acceptWait()
		switch rep.State {
		case wire.StateAccepted:
			return nil
		case wire.StatePending:
			if attempt == 1 {
				a.log.Warn("the master has not accepted this agent's key yet; waiting (brine key -a " + a.id + ")")
			}
		case wire.StateRejected, wire.StateDenied:
			a.log.Error("the master refuses this agent's key", "state", rep.State, "reason", rep.Reason)
			first = limit
		default:
			return fmt.Errorf("authentication: unexpected answer %q", rep.State)
		}
		select {
		case <-time.After(backoff.Delay(first, limit, attempt)):
		case <-l.accepted:
		case <-cli.Done():
			return errors.New("connection closed by the master")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// grainsNamed returns the agent's grains of those names (nil for none):
// what autosign_grains and start_event_grains send.
func (a *Agent) grainsNamed(names []string) map[string]any {
	if len(names) == 0 {
		return nil
	}
	g := a.Grains()
	out := map[string]any{}
	for _, k := range names {
		if v, ok := g[k]; ok {
			out[k] = v
		}
	}
	return out
}

// announce queues Salt's start events: salt/minion/<id>/start and the
// legacy minion_start, which Salt fires on every (re)connection.
func (a *Agent) announce() error {
	msg := fmt.Sprintf("Minion %s started at %s", a.id, time.Now().Format("Mon Jan _2 15:04:05 2006"))
	grains := a.grainsNamed(a.config().StartEventGrains)
	for _, tag := range []string{"salt/minion/" + a.id + "/start", "minion_start"} {
		load := map[string]any{"cmd": "_minion_event", "id": a.id, "tag": tag, "data": msg, "pretag": nil}
		if grains != nil {
			load["grains"] = grains
		}
		it, err := loadItem(tag, load)
		if err != nil {
			return err
		}
		if err := a.outbox.Put(it); err != nil {
			return err
		}
	}
	return nil
}

func encodeItem(id, kind, tag string, body any) (Item, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Item{}, fmt.Errorf("queue %s %q: %w", kind, tag, err)
	}
	return Item{ID: id, Kind: kind, Tag: tag, Body: b, Time: time.Now().UTC()}, nil
}

// sendMine runs the mine functions and sends their results with the
// grains. A function that fails is reported by name, not fatal.
func (a *Agent) sendMine(ctx context.Context, cli *gateway.Client) error {
	cfg := a.config()
	m := wire.Mine{Grains: a.Grains(), Data: map[string]any{}, Errors: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(cfg.MineFunctions)) {
		fun, args, err := MineSpec(name, cfg.MineFunctions[name])
		if err != nil {
			m.Errors[name] = err.Error()
			continue
		}
		pos, kw := jobs.SplitArgs(args)
		v, err := a.funcs.Call(ctx, fun, pos, kw, nil)
		if err != nil {
			m.Errors[name] = err.Error()
			a.log.Warn("mine function failed", "function", name, "err", err)
			continue
		}
		m.Data[name] = v
	}
	if err := cli.Call(ctx, wire.MethodMine, m, nil); err != nil {
		return fmt.Errorf("mine update: %w", err)
	}
	return nil
}

// drain delivers the outbox, oldest first and one at a time, so that the
// master stores an agent's events in the order they happened, each over
// the connection via chooses; each item is removed only once the master
// acknowledged it. An item the master refuses for good (a reserved tag, an
// oversized event) is dropped, logged and reported in dropped: re-sending
// it would never succeed.
func (a *Agent) drain(ctx context.Context, via func(Item) *gateway.Client) (dropped []error, err error) {
	for {
		items, names, errs := a.outbox.Pending(drainBatch)
		for _, err := range errs {
			a.log.Error("outbox", "err", err)
		}
		if len(items) == 0 {
			return dropped, nil
		}
		for i, it := range items {
			err := a.deliver(ctx, via(it), it)
			var re *gateway.RemoteError
			switch {
			case err == nil:
			case errors.As(err, &re) && re.Code != gateway.CodeFailed && re.Code != gateway.CodeAuth:
				a.log.Error("the master refused a queued message; dropping it", "tag", it.Tag, "id", it.ID, "err", err)
				dropped = append(dropped, fmt.Errorf("the master refused %q: %w", it.Tag, err))
			default:
				return dropped, fmt.Errorf("delivering %q: %w", it.Tag, err)
			}
			if err := a.outbox.Ack(names[i]); err != nil {
				return dropped, err
			}
			a.routes.Delete(it.ID)
		}
	}
}

func (a *Agent) deliver(ctx context.Context, cli *gateway.Client, it Item) error {
	method := wire.MethodEvent
	if it.Kind == "return" {
		method = wire.MethodReturn
	}
	ctx, cancel := context.WithTimeout(ctx, deliverTimeout)
	defer cancel()
	return cli.Call(ctx, method, it.Body, nil)
}

// UpdateMine runs the mine functions and sends them now (mine.update).
func (a *Agent) UpdateMine(ctx context.Context) error {
	cli := a.master()
	if cli == nil {
		return ErrNoMaster
	}
	return a.sendMine(ctx, cli)
}

// SendMine stores one value in this agent's mine record (mine.send); a nil
// value removes the function's data (mine.delete).
func (a *Agent) SendMine(ctx context.Context, name string, value any) error {
	m := wire.Mine{Data: map[string]any{name: value}}
	if value == nil {
		m = wire.Mine{Delete: []string{name}}
	}
	return masterCaller{a}.Call(ctx, wire.MethodMine, m, nil)
}

// startupStates is Salt's startup_states: once per agent start, when the
// master first accepts it, the highstate (highstate) or the SLS of
// sls_list (sls) is applied, and the return goes to the master as any
// job's.
func (a *Agent) startupStates(ctx context.Context) {
	opts := a.Opts()
	mode, _ := opts["startup_states"].(string)
	var fun string
	var args []any
	switch mode {
	case "":
		return
	case "highstate":
		fun = "state.highstate"
	case "sls":
		fun = "state.sls"
		list, _ := opts["sls_list"].([]any)
		if len(list) == 0 {
			a.log.Error("startup_states: sls needs sls_list, the SLS to apply; nothing applied")
			return
		}
		args = []any{list}
	default:
		a.log.Error("startup_states: unknown value; want highstate or sls (top, Salt's third, is not supported)", "startup_states", mode)
		return
	}
	a.log.Info("applying startup_states", "function", fun)
	ret, err := a.Call(ctx, fun, args, nil)
	if err != nil {
		a.log.Error("startup_states: the return could not be queued", "err", err)
		return
	}
	a.log.Info("startup_states applied", "function", fun, "jid", ret.JID, "success", ret.Success)
}
