package mine

import (
	"context"
	"errors"
	"maps"
	"slices"
)

// Watcher reports every record, then Synced, then each change (*Store does).
type Watcher interface {
	Watch(ctx context.Context, fn func(Change)) error
}

// Feed runs w.Watch on a goroutine of its own and hands its changes over a
// channel, so that a consumer's own select loop (with its timers and
// results) can wait for them. The error channel receives why the watch
// stopped if it stops before ctx ends, and nothing otherwise.
func Feed(ctx context.Context, w Watcher) (<-chan Change, <-chan error) {
	changes := make(chan Change, 1024)
	failed := make(chan error, 1)
	go func() {
		err := w.Watch(ctx, func(c Change) {
			select {
			case changes <- c:
			case <-ctx.Done():
			}
		})
		if ctx.Err() == nil {
			if err == nil {
				err = errors.New("the watch of the mine ended")
			}
			failed <- err
		}
	}()
	return changes, failed
}

// View is the whole mine as a consumer of Feed sees it.
type View struct {
	// Hosts are the records by id.
	Hosts map[string]*Host
	// Synced is set once every record stored when the watch began is in
	// Hosts; later changes are live.
	Synced bool
}

// Apply folds one change into the view.
func (v *View) Apply(c Change) {
	switch {
	case c.Synced:
		v.Synced = true
	case c.Host == nil:
		delete(v.Hosts, c.ID)
	default:
		if v.Hosts == nil {
			v.Hosts = map[string]*Host{}
		}
		v.Hosts[c.ID] = c.Host
	}
}

// List returns the hosts of the view, in no particular order.
func (v *View) List() []*Host { return slices.Collect(maps.Values(v.Hosts)) }
