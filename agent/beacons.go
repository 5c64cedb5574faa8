package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/beacons/diskusage"
	"github.com/brinehq/brine/beacons/inotify"
	"github.com/brinehq/brine/beacons/load"
	"github.com/brinehq/brine/beacons/log"
	"github.com/brinehq/brine/beacons/memusage"
	"github.com/brinehq/brine/beacons/network_info"
	"github.com/brinehq/brine/beacons/ps"
	"github.com/brinehq/brine/beacons/service"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/wire"
)

// Beacons are the agent's beacon modules, one line each.
var Beacons = []beacons.Module{
	diskusage.Module,
	inotify.Module,
	load.Module,
	log.Module,
	memusage.Module,
	network_info.Module,
	ps.Module,
	service.Module,
}

// beaconConfig reads the beacons option of cfg.
func beaconConfig(cfg *Loaded) (map[string]any, error) {
	out := map[string]any{}
	if cfg.Tree == nil {
		return out, nil
	}
	if err := cfg.Tree.Decode("beacons", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// newBeacons builds the agent's beacon runner and checks the configured
// beacons: a beacon that does not build stops the agent at start, with
// the file and line of its configuration, rather than idling unseen.
func (a *Agent) newBeacons(cfg *Loaded) error {
	reg, err := beacons.NewRegistry(Beacons...)
	if err != nil {
		return err
	}
	a.beacons = beacons.NewRunner(reg, a.id, a.fireBeacon, a.log.With("component", "beacons"))
	a.beacons.StateRunning = a.stateRunning
	bc, err := beaconConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := a.beacons.Check(bc); err != nil {
		return fmt.Errorf("%s: beacons: %w", cfg.Tree.Where("beacons"), err)
	}
	return nil
}

// fireBeacon queues a beacon's event: Salt's master fires a minion's
// beacon events as their data (with the id), not wrapped in a
// _minion_event load as event.send's.
func (a *Agent) fireBeacon(_ context.Context, tag string, data map[string]any) error {
	if err := wire.CheckTag(tag, a.id); err != nil {
		return err
	}
	it, err := loadItem(tag, data)
	if err != nil {
		return err
	}
	return a.outbox.Put(it)
}

// startBeacons runs the configured beacons until ctx ends. They run
// whether or not the master is there: their events wait in the outbox.
func (a *Agent) startBeacons(ctx context.Context) error {
	bc, err := beaconConfig(a.config())
	if err != nil {
		return err
	}
	return a.beacons.Start(ctx, bc)
}

// stateRunning says whether a state run is going on (Salt's
// disable_during_state_run).
func (a *Agent) stateRunning() bool {
	for _, j := range a.jobs.Running() {
		if fun, _ := j["fun"].(string); strings.HasPrefix(fun, "state.") {
			return true
		}
	}
	return false
}

// agentBeacons is modules.Beacons for the agent.
type agentBeacons struct{ a *Agent }

func (b agentBeacons) Config() (map[string]map[string]any, bool) { return b.a.beacons.Config() }

func (b agentBeacons) Set(cfg map[string]map[string]any, enabled bool) error {
	return b.a.beacons.Set(cfg, enabled)
}

func (b agentBeacons) Check(name string, cfg any) (map[string]any, error) {
	norm, err := b.a.beacons.Check(map[string]any{name: cfg})
	if err != nil {
		return nil, err
	}
	return norm[name], nil
}

func (b agentBeacons) Available() []string { return b.a.beacons.Available() }

// Save writes the beacons in force to minion.d/beacons.conf, as Salt's
// beacons.save does, so that they survive a restart.
func (b agentBeacons) Save() (string, error) {
	text, err := yaml.Marshal(map[string]any{"beacons": beacons.ListForm(b.a.beacons.Config())})
	if err != nil {
		return "", err
	}
	dir := b.a.config().Dir
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	path := filepath.Join(dir, "minion.d", "beacons.conf")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.WriteBytes(path, text, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// Reset puts the beacons of the configuration files in force again.
func (b agentBeacons) Reset() error {
	cfg := b.a.config()
	if b.a.opts.Load != nil {
		loaded, err := b.a.opts.Load()
		if err != nil {
			return err
		}
		cfg = loaded
	}
	return b.resetFrom(cfg)
}

// resetFrom puts the beacons of cfg in force (a reload, beacons.reset).
func (b agentBeacons) resetFrom(cfg *Loaded) error {
	bc, err := beaconConfig(cfg)
	if err != nil {
		return err
	}
	norm, err := b.a.beacons.Check(bc)
	if err != nil {
		return err
	}
	enabled := true
	if e, ok := bc["enabled"].(bool); ok {
		enabled = e
	}
	return b.a.beacons.Set(norm, enabled)
}
