package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/brinehq/brine/agent/proto"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/jobs"
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

// session serves one connection: authenticate, announce the start, report
// grains and the mine, and deliver the outbox until the connection drops
// or the configuration is reloaded.
func (a *Agent) session(ctx context.Context, cli *gateway.Client) error {
	if err := a.authenticate(ctx, cli); err != nil {
		return err
	}
	a.ready.Store(true)
	a.cli.Store(cli)
	defer a.cli.CompareAndSwap(cli, nil)
	a.log.Info("accepted by the master; agent started")
	if err := a.announce(); err != nil {
		return err
	}
	// Salt's minion compiles its pillar when it starts: pillar.get must
	// answer before the first state run.
	go func() {
		if _, err := a.Pillar(ctx, true); err != nil && ctx.Err() == nil {
			a.log.Warn("the pillar could not be fetched; pillar.get answers from an empty pillar until a state run or saltutil.refresh_pillar", "err", err)
		}
	}()
	if a.started.CompareAndSwap(false, true) {
		go a.startupStates(ctx)
	}
	mineEvery := a.config().mineEvery()
	if err := a.sendMine(ctx, cli); err != nil {
		return err
	}
	mine := time.NewTicker(max(mineEvery, time.Minute))
	if mineEvery == 0 {
		mine.Stop()
	}
	defer mine.Stop()
	grains := time.NewTicker(grainsEvery)
	defer grains.Stop()
	poll := time.NewTicker(pollOutbox)
	defer poll.Stop()
	for {
		if _, err := a.drain(ctx, cli); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-cli.Done():
			return errors.New("connection closed by the master")
		case cfg := <-a.reload:
			old := a.config()
			a.apply(cfg)
			if !slices.Equal(old.Addrs(), cfg.Addrs()) || old.MasterFinger != cfg.MasterFinger {
				return errReload
			}
			if err := a.sendMine(ctx, cli); err != nil {
				return err
			}
		case <-a.outbox.Kicked():
		case <-poll.C:
		case <-mine.C:
			if err := a.sendMine(ctx, cli); err != nil {
				return err
			}
		case <-grains.C:
			if a.grainsChanged() {
				if err := a.sendMine(ctx, cli); err != nil {
					return err
				}
			}
		}
	}
}

// authenticate says hello until the master accepts the key: while it is
// pending the agent waits acceptance_wait_time, growing with jitter up to
// acceptance_wait_time_max, or until the master says it was accepted.
func (a *Agent) authenticate(ctx context.Context, cli *gateway.Client) error {
	for attempt := 1; ; attempt++ {
		cfg := a.config()
		hello := proto.Hello{ID: a.id, Version: a.opts.Version, AutosignGrains: a.grainsNamed(cfg.AutosignGrains)}
		var rep proto.HelloReply
		if err := cli.Call(ctx, proto.MethodHello, hello, &rep); err != nil {
			return fmt.Errorf("authentication: %w", err)
		}
		first, limit := cfg.acceptWait()
		switch rep.State {
		case proto.StateAccepted:
			return nil
		case proto.StatePending:
			if attempt == 1 {
				a.log.Warn("the master has not accepted this agent's key yet; waiting (brine key -a " + a.id + ")")
			}
		case proto.StateRejected, proto.StateDenied:
			a.log.Error("the master refuses this agent's key", "state", rep.State, "reason", rep.Reason)
			first = limit
		default:
			return fmt.Errorf("authentication: unexpected answer %q", rep.State)
		}
		select {
		case <-time.After(backoff.Delay(first, limit, attempt)):
		case <-a.accepted:
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
	m := proto.Mine{Grains: a.Grains(), Data: map[string]any{}, Errors: map[string]string{}}
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
	if err := cli.Call(ctx, proto.MethodMine, m, nil); err != nil {
		return fmt.Errorf("mine update: %w", err)
	}
	return nil
}

// drain delivers the outbox, oldest first and one at a time, so that the
// master stores an agent's events in the order they happened; each item is
// removed only once the master acknowledged it. An item the master
// refuses for good (a reserved tag, an oversized event) is dropped, logged
// and reported in dropped: re-sending it would never succeed.
func (a *Agent) drain(ctx context.Context, cli *gateway.Client) (dropped []error, err error) {
	for {
		items, names, errs := a.outbox.Pending(drainBatch)
		for _, err := range errs {
			a.log.Error("outbox", "err", err)
		}
		if len(items) == 0 {
			return dropped, nil
		}
		for i, it := range items {
			err := a.deliver(ctx, cli, it)
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
		}
	}
}

func (a *Agent) deliver(ctx context.Context, cli *gateway.Client, it Item) error {
	method := proto.MethodEvent
	if it.Kind == "return" {
		method = proto.MethodReturn
	}
	return cli.Call(ctx, method, it.Body, nil)
}

// UpdateMine runs the mine functions and sends them now (mine.update).
func (a *Agent) UpdateMine(ctx context.Context) error {
	cli := a.cli.Load()
	if cli == nil {
		return ErrNoMaster
	}
	return a.sendMine(ctx, cli)
}

// SendMine stores one value in this agent's mine record (mine.send); a nil
// value removes the function's data (mine.delete).
func (a *Agent) SendMine(ctx context.Context, name string, value any) error {
	m := proto.Mine{Data: map[string]any{name: value}}
	if value == nil {
		m = proto.Mine{Delete: []string{name}}
	}
	return masterCaller{a}.Call(ctx, proto.MethodMine, m, nil)
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
