// Package integrations is the contract every integration of the master
// keeps — ddns, dnsmasq and slack, one folder each — the way CoreDNS
// plugins and Caddy modules keep theirs: a name, the runner functions it
// provides, Start with an environment, and Reload with a configuration it
// checks before changing anything. The master starts every integration the
// same way, and `brine reactor test` knows their functions from the same
// list (master.Integrations), without starting any.
//
// Adding an integration is a folder of its own that implements Integration,
// and one line in that list.
package integrations

import (
	"context"
	"log/slog"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/mine"
)

// Integration is one integration of the master.
type Integration interface {
	// Name is its key in the master configuration (`ddns:`) and its name in
	// logs and event sources.
	Name() string
	// Funcs declares the runner functions it provides, whether or not it is
	// configured. They may be listed before Start (a dry run registers them
	// by signature); they are called only after it.
	Funcs() []function.Func
	// Start reads the integration's section of cfg and starts its work with
	// env.Go. Without a section an integration stays off (its functions say
	// what is missing) and Start returns nil; a section it cannot use is an
	// error naming the file, and the master does not start.
	Start(ctx context.Context, env Env, cfg config.Decoder) error
	// Reload applies a new configuration (SIGHUP). It checks the section
	// first: an error leaves the running configuration in force. What only
	// a restart can change (adding or removing the section) is logged.
	Reload(ctx context.Context, cfg config.Decoder) error
}

// Env is what the master gives an integration it starts.
type Env struct {
	// MasterID is the id of this master (config `id`).
	MasterID string
	// Bus is the master's event bus: durable consumers, key-value buckets.
	Bus *natsbus.Bus
	// Events fires the integration's own events, from
	// brine://<master>/<name>.
	Events bus.Emitter
	// Mine is the host inventory.
	Mine *mine.Store
	// Log is the integration's logger (component=<name>).
	Log *slog.Logger
	// Go runs fn until the master stops: ctx ends at shutdown, and an error
	// fn returns stops the master.
	Go func(fn func(ctx context.Context) error)
	// Lease runs fn while this master holds the cluster-wide lease name,
	// waiting while another master does and again after losing it: work
	// that must have one writer among several masters (a zone's sync)
	// runs under it. ctx ends it (then nil).
	Lease func(ctx context.Context, name string, fn func(ctx context.Context) error) error
	// Cluster names the masters sharing the bus ("" for a master alone):
	// what the integration's own records say wrote them, rather than
	// one master of it.
	Cluster string
}

// Reporter is an integration that counts what it does: the master exports
// the counters on /metrics (brine_<name>_<counter>_total) and answers
// `brine <name> status` with them and the settings in force.
type Reporter interface {
	// Status is false while the integration is off.
	Status() (Status, bool)
}

// Status is a Reporter's state.
type Status struct {
	// Config is the configuration in force, without secrets.
	Config any `json:"config"`
	// Stats are the counters by name.
	Stats map[string]uint64 `json:"stats"`
	// Help says what the counters count, for /metrics.
	Help string `json:"-"`
}
