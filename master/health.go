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
		{Name: "cluster", Func: m.clusterHealth, Detail: func(ctx context.Context) any { return m.clusterStatus(ctx) }},
	}
}

// ClusterStatus is the cluster as one master sees it: /healthz's detail
// and `brine run manage.cluster`.
type ClusterStatus struct {
	natsbus.ClusterState
	Master string `json:"master"`
	// Masters are the live masters (their leases), this one included.
	Masters []string `json:"masters"`
	// Leases are the single-writer leases held now, with their holder.
	Leases map[string]string `json:"leases"`
	Error  string            `json:"error,omitempty"`
}

func (m *Master) clusterStatus(ctx context.Context) ClusterStatus {
	st := ClusterStatus{Master: m.cfg.Settings.ID, Masters: append(m.cluster.Peers(), m.cfg.Settings.ID), Leases: map[string]string{}}
	slices.Sort(st.Masters)
	var err error
	if st.ClusterState, err = m.bus.ClusterState(ctx); err != nil {
		st.Error = err.Error()
	}
	if hs, err := m.cluster.leases.Holders(ctx); err == nil {
		for name, h := range hs {
			st.Leases[name] = h.Master
		}
	}
	return st
}

// clusterHealth is degraded when the event stream has no leader (no
// quorum: writes are refused) or a replica is behind or offline.
func (m *Master) clusterHealth(ctx context.Context) error {
	st, err := m.bus.ClusterState(ctx)
	if err != nil {
		return err
	}
	if !st.Quorum {
		return errors.New("the event stream has no leader: no quorum of the cluster, writes are refused")
	}
	var bad []string
	for _, p := range st.Peers {
		switch {
		case p.Offline:
			bad = append(bad, p.Name+" is offline")
		case !p.Current:
			bad = append(bad, fmt.Sprintf("%s is %d operations behind", p.Name, p.Lag))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
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
		{Name: "brine_cluster_peer_lag", Help: "Operations each replica of the event stream is behind its leader.",
			Label: "peer", Sample: func(ctx context.Context) (map[string]float64, error) {
				st, err := m.bus.ClusterState(ctx)
				out := map[string]float64{}
				for _, p := range st.Peers {
					out[p.Name] = float64(p.Lag)
				}
				return out, err
			}},
		{Name: "brine_cluster_leader", Help: "1 when this master's server leads the event stream.",
			Sample: func(ctx context.Context) (map[string]float64, error) {
				st, err := m.bus.ClusterState(ctx)
				v := 0.0
				if st.Leader != "" && st.Leader == st.Server {
					v = 1
				}
				return map[string]float64{"": v}, err
			}},
		{Name: "brine_salt_minions", Help: "Salt-protocol minions signed in to this master (sessions), and SUB sockets connected to it (subscribers).",
			Label: "kind", Sample: func(context.Context) (map[string]float64, error) {
				if m.salt == nil {
					return map[string]float64{}, nil
				}
				return map[string]float64{"sessions": float64(m.salt.Sessions()), "subscribers": float64(m.salt.Publisher().Subscribers())}, nil
			}},
		{Name: "brine_cluster_masters", Help: "Live masters on this bus (their leases), this one included.",
			Sample: func(context.Context) (map[string]float64, error) {
				return map[string]float64{"": float64(len(m.cluster.Peers()) + 1)}, nil
			}},
		{Name: "brine_cluster_leases_held", Help: "Single-writer leases this master holds (1 per lease).",
			Label: "lease", Sample: func(context.Context) (map[string]float64, error) {
				out := map[string]float64{}
				for _, name := range m.cluster.leases.Held() {
					out[name] = 1
				}
				return out, nil
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
