package main

import (
	"errors"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/logging"
	"github.com/brinehq/brine/master"
)

func newMasterCmd(g *globalFlags) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Run the master: durable event bus, ZeroMQ gateway, reactor and integrations",
		Long: `Run the master. With no configuration at all it embeds a NATS JetStream
event store under ./brine-data (or $BRINE_DATA), listens on 127.0.0.1:4505
(events to watchers) and 127.0.0.1:4506 (requests), and creates the client key
<data_dir>/master.key on first start.

Configuration: <config-dir>/master and <config-dir>/master.d/*.conf (YAML, Salt
key names). SIGHUP reloads it, and so does a change to one of its files;
SIGINT/SIGTERM shut down without losing an acknowledged event. A key brine
does not know is reported with its file and line (and the key it probably
means); with --strict (or strict: true) the master refuses to start instead.`,
		Example: `  brine master
  brine master -c /etc/brine --log-format json
  BRINE_DATA=/var/lib/brine brine master`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			load := func() (*config.Master, error) {
				cfg, err := loadConfig(g)
				if cfg != nil && strict {
					cfg.Settings.Strict = true
				}
				return cfg, err
			}
			cfg, err := load()
			if err != nil {
				return err
			}
			m, err := master.New(cmd.Context(), master.Options{
				Config:     cfg,
				Load:       load,
				ConfigPath: g.ConfigDir,
				Version:    agentcmd.Version(),
			})
			if err != nil {
				return asUsage(err)
			}
			return m.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse to start with a configuration key brine does not know (default: warn)")
	return cmd
}

// loadConfig reads the configuration -c names, with the command line's
// overrides applied.
func loadConfig(g *globalFlags) (*config.Master, error) {
	cfg, err := config.Load(g.ConfigDir)
	if err != nil {
		return nil, err
	}
	s := &cfg.Settings
	if g.dataDir != "" {
		s.DataDir = g.dataDir
		if !cfg.Has("key_file") {
			s.KeyFile = filepath.Join(s.DataDir, "master.key")
		}
	}
	if g.LogLevel != "" {
		s.LogLevel = g.LogLevel
	}
	if g.LogFormat != "" {
		s.LogFormat = g.LogFormat
	}
	return cfg, nil
}

// asUsage marks a log level or format the command line got wrong as a
// usage error (exit 2).
func asUsage(err error) error {
	var se *logging.SettingError
	if errors.As(err, &se) {
		return usageError{err}
	}
	return err
}
