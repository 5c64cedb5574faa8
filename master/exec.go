package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/reactor"
)

// execPublish answers `brine exec`: a target that selects nobody is an
// empty Minions list, which the CLI reports as Salt does.
func (m *Master) execPublish(ctx context.Context, body json.RawMessage) (any, error) {
	t, err := jobs.DecodeTargeted(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rpc.ExecPublish, err)
	}
	pub, _, err := m.publisher.Publish(ctx, t, bus.Origin{Source: m.source + "/exec"}, false)
	if errors.Is(err, ErrNoMinions) {
		return pub, nil
	}
	return pub, err
}

func (m *Master) execFindJob(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.FindJobRequest
	if err := decode(rpc.ExecFindJob, body, &req); err != nil {
		return nil, err
	}
	return m.publisher.FindJob(ctx, req.JID, req.Minions), nil
}

func (m *Master) execTargets(ctx context.Context, body json.RawMessage) (any, error) {
	raw, err := (&bus.Event{Data: body}).DataMap()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rpc.ExecTargets, err)
	}
	tt, _ := raw["tgt_type"].(string)
	minions, missing, err := m.publisher.Targets(ctx, raw["tgt"], tt)
	if err != nil {
		return nil, err
	}
	conn := m.connected(ctx)
	rep := rpc.TargetReply{Minions: minions, Missing: missing, Connected: []string{}}
	for _, id := range minions {
		if _, ok := slices.BinarySearch(conn, id); ok {
			rep.Connected = append(rep.Connected, id)
		}
	}
	return rep, nil
}

// minions runs local.* and caller.* reactions (reactor.Minions).
type minions struct{ p *publisher }

func (x minions) RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error) {
	out, err := x.p.Run(ctx, t, o, wait)
	return out, noMinion(t, err)
}

func (x minions) PublishJob(ctx context.Context, t jobs.Targeted, o bus.Origin) (jobs.Published, error) {
	pub, _, err := x.p.Publish(ctx, t, o, false)
	return pub, noMinion(t, err)
}

// noMinion words an empty target for a reaction's error event.
func noMinion(t jobs.Targeted, err error) error {
	if errors.Is(err, ErrNoMinions) {
		return fmt.Errorf("%w: tgt %s (tgt_type %s) selects no agent with an accepted key", reactor.ErrNoMinion,
			jobs.TargetText(t.Tgt), t.TgtType)
	}
	return err
}
