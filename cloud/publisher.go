package cloud

import (
	"context"

	"github.com/brinehq/brine/bus"
)

// BusPublisher fires events on a bus directly, for code running inside the
// master (where a gateway client would only loop back).
type BusPublisher struct {
	Bus bus.Publisher
	// Source is the events' source, e.g. brine://master1/cloud.
	Source string
}

// Publish builds the event and returns its id once the bus stored it.
func (p BusPublisher) Publish(ctx context.Context, tag string, data map[string]any) (string, error) {
	ev, err := bus.Fire(ctx, p.Bus, tag, data, bus.Origin{Source: p.Source})
	if err != nil {
		return "", err
	}
	return ev.ID, nil
}
