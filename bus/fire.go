package bus

import "context"

// Fire builds an event from tag, data and origin and publishes it: the one
// way brine's parts fire events of their own. It returns the event stored.
func Fire(ctx context.Context, p Publisher, tag string, data map[string]any, o Origin) (*Event, error) {
	ev, err := NewEvent(tag, data, o)
	if err != nil {
		return nil, err
	}
	if err := p.Publish(ctx, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Emitter fires the events of one part of the master under its source
// (brine://<master>/<part>).
type Emitter struct {
	Publisher Publisher
	Source    string
}

// Fire fires an event of the part, caused by nothing. Its signature is that
// of function.FireFunc, so a part can hand it to the functions it calls.
func (e Emitter) Fire(ctx context.Context, tag string, data map[string]any) error {
	_, err := Fire(ctx, e.Publisher, tag, data, Origin{Source: e.Source})
	return err
}

// Caused fires an event of the part caused by cause (its depth follows).
func (e Emitter) Caused(ctx context.Context, cause *Event, tag string, data map[string]any) error {
	_, err := Fire(ctx, e.Publisher, tag, data, Origin{Source: e.Source, Cause: cause})
	return err
}
