package master

import (
	"context"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/logging"
)

// configWatchInterval is how often the master looks at its configuration
// files for a change.
const configWatchInterval = 2 * time.Second

// handleSignals reloads the configuration on SIGHUP, and when a file of it
// changes on disk (the reactor mapping in master.d is edited more than any
// other key), until ctx ends or a part of the master fails.
func (m *Master) handleSignals(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(configWatchInterval)
	defer tick.Stop()
	seen := m.configSeen
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.ctx.Done():
			return
		case <-hup:
			seen = config.Fingerprint(m.opts.ConfigPath)
			m.Reload(m.ctx)
		case <-tick.C:
			if m.opts.Load == nil || m.opts.ConfigPath == "" {
				continue
			}
			if now := config.Fingerprint(m.opts.ConfigPath); !slices.Equal(now, seen) {
				seen = now
				m.log.Info("configuration files changed; reloading")
				m.Reload(m.ctx)
			}
		}
	}
}

// Reload re-reads the configuration and hands it to every part that can
// take it live, firing brine/master/<id>/reload with the outcome. Settings
// that need a restart (ports, data directory, bus) are reported, not
// applied; a configuration that does not load changes nothing, and a part
// that refuses its new section keeps its running one.
func (m *Master) Reload(ctx context.Context) {
	tag := "brine/master/" + m.cfg.Settings.ID + "/reload"
	if m.opts.Load == nil {
		return
	}
	cfg, err := m.opts.Load()
	if err != nil {
		m.log.Error("configuration reload failed; keeping the running one", "err", err)
		m.fire(ctx, tag, map[string]any{"success": false, "error": err.Error()})
		return
	}
	if err := m.checkKeys(cfg); err != nil {
		m.log.Error("configuration reload refused; keeping the running one", "err", err)
		m.fire(ctx, tag, map[string]any{"success": false, "error": err.Error()})
		return
	}
	old, cur := m.cfg.Settings, cfg.Settings
	if old.DataDir != cur.DataDir || old.Interface != cur.Interface || old.PublishPort != cur.PublishPort ||
		old.RetPort != cur.RetPort || !reflect.DeepEqual(old.Bus, cur.Bus) || old.KeyFile != cur.KeyFile || old.MaxEventSize != cur.MaxEventSize {
		m.log.Warn("data_dir, interface, ports, key_file, max_event_size and bus settings take effect at the next start")
	}
	if l, err := logging.ParseLevel(cur.LogLevel); err == nil {
		m.level.Set(l)
	}
	var failed []string
	report := func(err error) {
		if err != nil {
			m.log.Error("reload", "err", err)
			failed = append(failed, err.Error())
		}
	}
	for _, in := range m.integrations {
		report(in.Reload(ctx, cfg))
	}
	report(m.reloadAPI(cfg))
	report(m.reloadKeys(cfg))
	report(m.reloadReactor(cfg))
	report(m.publisher.configure(cfg))
	report(m.pillars.configure(cfg))
	m.cfg = cfg
	m.log.Info("configuration reloaded", "files", strings.Join(cfg.Files, ","))
	data := map[string]any{"success": len(failed) == 0, "files": cfg.Files}
	if len(failed) > 0 {
		data["errors"] = failed
	}
	m.fire(ctx, tag, data)
}
