package master

import (
	"context"
	"slices"
	"time"

	"github.com/brinehq/brine/config"
)

// presenceLoop fires Salt's presence events every loop_interval when
// presence_events is set: salt/presence/present with every connected id,
// and salt/presence/change with those that came and went. The settings
// are those the master started with (a reload does not change them).
func (m *Master) presenceLoop(ctx context.Context, s config.Settings) {
	if !s.PresenceEvents {
		return
	}
	every := time.Duration(s.LoopInterval) * time.Second
	if every <= 0 {
		every = time.Minute
	}
	// One master of a cluster fires them, for the agents of every master.
	_ = m.cluster.leases.Run(ctx, "presence", func(ctx context.Context) error {
		t := time.NewTicker(every)
		defer t.Stop()
		var last []string
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			now := m.connected(ctx)
			m.fire(ctx, "salt/presence/present", map[string]any{"present": now})
			var added, lost []string
			for _, id := range now {
				if !slices.Contains(last, id) {
					added = append(added, id)
				}
			}
			for _, id := range last {
				if !slices.Contains(now, id) {
					lost = append(lost, id)
				}
			}
			if len(added) > 0 || len(lost) > 0 {
				m.fire(ctx, "salt/presence/change", map[string]any{"new": nonNil(added), "lost": nonNil(lost)})
			}
			last = now
		}
	})
}
