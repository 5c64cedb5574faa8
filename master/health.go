package master

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/bus/natsbus"
)

// backlogLimit is the number of events waiting for the reactor (or another
// durable consumer) past which /healthz calls it degraded.
const backlogLimit = 10000

// checks are what /healthz reports: the bus, the reactor's consumer and
// the other durable consumers (the mine, jobs, each integration).
func (m *Master) checks(reactorConsumer string) []api.Check {
	return []api.Check{
		{Name: "bus", Func: func(ctx context.Context) error {
			_, err := m.bus.LastSeq(ctx)
			return err
		}},
		{Name: "reactor", Func: func(ctx context.Context) error { return m.reactorHealth(ctx, reactorConsumer) }},
		{Name: "integrations", Func: func(ctx context.Context) error { return m.consumersHealth(ctx, reactorConsumer) }},
	}
}

// gauges are the master's gauges on /metrics, sampled at each scrape.
func (m *Master) gauges() []api.Gauge {
	return []api.Gauge{
		{Name: "brine_bus_consumer_lag", Help: "Events a durable consumer has not acknowledged yet (pending + in flight).",
			Label: "consumer", Sample: m.consumerLag},
		{Name: "brine_reactor_dead_letters", Help: "Reactions in the dead-letter list (brine reactor dlq).",
			Sample: func(ctx context.Context) (map[string]float64, error) {
				n, err := m.dlq.Len(ctx)
				return map[string]float64{"": float64(n)}, err
			}},
		{Name: "brine_gateway_watchers", Help: "ZeroMQ watchers connected to the publish port now.",
			Sample: func(context.Context) (map[string]float64, error) {
				return map[string]float64{"": float64(m.gateway.Watchers())}, nil
			}},
	}
}

// reactorHealth reports the reactor degraded when its durable consumer is
// missing (no reactor attached yet) or far behind.
func (m *Master) reactorHealth(ctx context.Context, name string) error {
	c, err := m.bus.Consumer(ctx, name)
	if errors.Is(err, natsbus.ErrNoConsumer) {
		return fmt.Errorf("no reactor attached to consumer %q", name)
	}
	if err != nil {
		return fmt.Errorf("reactor %w", err)
	}
	if c.Pending > backlogLimit {
		return fmt.Errorf("%d events waiting for the reactor (limit %d)", c.Pending, backlogLimit)
	}
	return nil
}

// consumersHealth reports the durable consumers other than the reactor's
// degraded when one is far behind.
func (m *Master) consumersHealth(ctx context.Context, reactorConsumer string) error {
	lag, err := m.consumerLag(ctx)
	if err != nil {
		return err
	}
	var behind []string
	for name, n := range lag {
		if name != reactorConsumer && n > backlogLimit {
			behind = append(behind, fmt.Sprintf("%s is %.0f events behind", name, n))
		}
	}
	if len(behind) > 0 {
		slices.Sort(behind)
		return fmt.Errorf("%s (limit %d)", strings.Join(behind, "; "), backlogLimit)
	}
	return nil
}

// consumerLag samples every durable consumer of the event stream.
func (m *Master) consumerLag(ctx context.Context) (map[string]float64, error) {
	cs, err := m.bus.Consumers(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(cs))
	for _, c := range cs {
		out[c.Name] = float64(c.Pending) + float64(c.AckPending)
	}
	return out, nil
}
