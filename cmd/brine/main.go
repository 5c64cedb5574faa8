// Command brine is the one binary of brine: the master (event bus, reactor,
// integrations) and every client command operators use against it.
//
// Exit codes: 0 success; 1 the command failed (the reason is printed on one
// line); 2 the command line was wrong; 3 the master could not be reached.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/internal/logging"
)

// Exit codes, documented in the package comment and in `brine --help`.
const (
	exitFailure     = 1
	exitUsage       = 2
	exitUnreachable = 3
)

// usageError marks a wrong command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// retcodeError ends the command with a job's retcode as exit status
// (salt-call, salt --retcode-passthrough).
type retcodeError struct {
	code int
	err  error
}

func (e retcodeError) Error() string { return e.err.Error() }
func (e retcodeError) Unwrap() error { return e.err }

// unreachableError marks a master that could not be reached (exit 3).
type unreachableError struct{ err error }

func (e unreachableError) Error() string { return e.err.Error() }
func (e unreachableError) Unwrap() error { return e.err }

func main() {
	// Packages given no logger log to slog's default (and libraries to the
	// log package, which then goes through it too): mask those lines as
	// the configured loggers do, so that no path writes a secret.
	slog.SetDefault(slog.New(logging.Redacting(slog.NewTextHandler(os.Stderr, nil))))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if sub, ok := saltNames[filepath.Base(os.Args[0])]; ok {
		root.SetArgs(append([]string{sub}, os.Args[1:]...))
	}
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "brine: %v\n", err)
	var ue usageError
	var ne unreachableError
	var re retcodeError
	switch {
	case errors.As(err, &re):
		os.Exit(re.code)
	case errors.As(err, &ue):
		os.Exit(exitUsage)
	case errors.As(err, &ne):
		os.Exit(exitUnreachable)
	default:
		os.Exit(exitFailure)
	}
}

// saltNames are the names of Salt's commands this binary answers to when
// it is installed (or linked) under them, as one binary with busybox-style
// names: `ln -s brine /usr/local/bin/salt-key`.
var saltNames = map[string]string{
	"salt-master": "master",
	"salt-minion": "agent",
	"salt-key":    "key",
	"salt-call":   "call",
	"salt-run":    "run",
	"salt-cloud":  "cloud",
	"salt":        "exec",
}

// globalFlags are shared by every subcommand.
type globalFlags struct {
	configDir string
	dataDir   string
	logLevel  string
	logFormat string
}

// saltLogFlag is Salt's -l LEVEL on the commands that mirror salt,
// salt-run and salt-call (brine key's -l is salt-key's list): the same
// setting as --log-level.
func (g *globalFlags) saltLogFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&g.logLevel, "log-level-salt", "l", "", "the same as --log-level (Salt's -l)")
	_ = cmd.Flags().MarkHidden("log-level-salt")
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "brine",
		Short: "Event-driven provisioning bridge, compatible with Salt's events and reactor",
		Long: `brine carries infrastructure events on a durable bus, reacts to them with
Salt-format reaction files, and keeps DNS, DHCP and Slack in sync with the
machines that exist.

Exit codes: 0 success, 1 failure, 2 bad command line, 3 master unreachable.`,
		Example: `  brine master                                   # run with embedded defaults
  brine event send myco/deploy/done app=web version=42
  brine event watch 'salt/cloud/*' --pretty`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.configDir, "config-dir", "c", "/etc/brine", "configuration directory (holding master and master.d/) or file")
	root.PersistentFlags().StringVar(&g.dataDir, "data-dir", "", "data directory (default: data_dir, $BRINE_DATA or ./brine-data)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", "log level: debug, info, warn, error (default: log_level or info)")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "", "log format: text or json (default: log_format or text)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(newMasterCmd(g), newEventCmd(g), newVersionCmd())
	root.AddCommand(newReactorCmd(g))
	root.AddCommand(newRunCmd(g), newJobsCmd(g), newSlackCmd(g))
	root.AddCommand(newDdnsCmd(g))
	root.AddCommand(newCloudCmd(g))
	root.AddCommand(newMineCmd(g))
	root.AddCommand(newKeyCmd(g))
	root.AddCommand(newAgentCmd(g), newCallCmd(g))
	root.AddCommand(newExecCmd(g), newInstallAliasesCmd())
	root.AddCommand(newGenDocsCmd())
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command group (`brine event`, `brine
// key`…) refuse a subcommand it does not have with a usage error (exit 2);
// cobra would print the group's help and exit 0, so that a script's typo
// (`brine event fire`) looked like success.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.HasParent() && c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())}
			}
			return cmd.Help()
		}
	}
}

// exactArgs is cobra.RangeArgs reporting a usage error.
func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
