package main

import (
	"io"
	"log/slog"
	"path/filepath"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/deploy"
	"github.com/brinehq/brine/internal/logging"
)

// newCloudDeployer is the deploy step of `brine cloud`: host keys are
// trusted on first use in <data_dir>/known_hosts, scripts named without a
// path are looked up in <config-dir>/cloud.deploy.d. Its log goes to
// errOut at --log-level (warn unless given, so that the progress lines
// stay readable); with verbose, every line a script prints is also shown
// there, prefixed with the VM's name.
func newCloudDeployer(g *globalFlags, verbose bool, errOut io.Writer) (*deploy.Deployer, *slog.Logger, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, nil, err
	}
	level := slog.LevelWarn
	if g.LogLevel != "" {
		if level, err = logging.ParseLevel(g.LogLevel); err != nil {
			return nil, nil, usageError{err}
		}
	}
	log, err := logging.New(errOut, cfg.Settings.LogFormat, level)
	if err != nil {
		return nil, nil, usageError{err}
	}
	dc := deploy.Config{
		DataDir:    cfg.Settings.DataDir,
		ScriptDirs: []string{filepath.Join(cloud.ConfigDir(g.ConfigDir), "cloud.deploy.d")},
		Log:        log.With("component", "deploy"),
	}
	if verbose {
		dc.Output = errOut
	}
	d, err := deploy.New(dc)
	if err != nil {
		return nil, nil, err
	}
	return d, log, nil
}
