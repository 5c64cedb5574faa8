// Package agentcmd holds the commands that run on a managed machine — the
// agent (salt-minion), call (salt-call), version, service and
// install-aliases — and what every brine command line shares: the global
// flags, the exit codes and the version stamped at build time.
//
// Both binaries are built from it: cmd/brine, the master and the
// operators' commands, adds its own commands to these; cmd/brine-agent is
// only these, so that what is installed on every machine of a fleet links
// no master, cloud (vSphere, EC2), NATS server or integration code and
// stays small (≤ 25 MB, checked by scripts/check-binaries.sh).
//
// Exit codes: 0 success; 1 the command failed (the reason is printed on one
// line); 2 the command line was wrong; 3 the master could not be reached
// (cmd/brine's client commands); a job's retcode with --retcode-passthrough.
package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/internal/logging"
)

// Exit codes, documented in the package comment and in `brine --help`.
const (
	ExitFailure = 1
	ExitUsage   = 2
)

// exitCoder is an error that chooses the process's exit status. The
// method's name is brine's own so that an error wrapping another
// program's failure (*exec.ExitError has ExitCode) does not pass that
// program's status off as brine's.
type exitCoder interface{ CLIExitCode() int }

// ExitCode is the exit status err ends the command with: 0 for nil, the
// status an error in its chain chooses, else ExitFailure.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.CLIExitCode()
	}
	return ExitFailure
}

// UsageError marks a wrong command line (exit 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string    { return e.Err.Error() }
func (e UsageError) Unwrap() error    { return e.Err }
func (e UsageError) CLIExitCode() int { return ExitUsage }

// RetcodeError ends the command with a job's retcode as exit status
// (salt-call --retcode-passthrough).
type RetcodeError struct {
	Code int
	Err  error
}

func (e RetcodeError) Error() string    { return e.Err.Error() }
func (e RetcodeError) Unwrap() error    { return e.Err }
func (e RetcodeError) CLIExitCode() int { return e.Code }

// RangeArgs is cobra.RangeArgs reporting a usage error.
func RangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return UsageError{err}
		}
		return nil
	}
}

// Flags are the global flags of every command.
type Flags struct {
	ConfigDir string
	LogLevel  string
	LogFormat string
}

// Add binds the flags to root's persistent flags.
func (f *Flags) Add(root *cobra.Command) {
	root.PersistentFlags().StringVarP(&f.ConfigDir, "config-dir", "c", agent.DefaultConfigDir, "configuration directory (holding master or minion and its .d/) or file")
	root.PersistentFlags().StringVar(&f.LogLevel, "log-level", "", "log level: debug, info, warn, error (default: log_level or info)")
	root.PersistentFlags().StringVar(&f.LogFormat, "log-format", "", "log format: text or json (default: log_format or text)")
}

// SaltLogFlag is Salt's -l LEVEL on the commands that mirror salt,
// salt-run and salt-call (brine key's -l is salt-key's list): the same
// setting as --log-level.
func (f *Flags) SaltLogFlag(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.LogLevel, "log-level-salt", "l", "", "the same as --log-level (Salt's -l)")
	_ = cmd.Flags().MarkHidden("log-level-salt")
}

// Main runs root as the process's command line and exits with its status.
// Started under one of names' keys (a link named salt-call, salt-call.exe
// on Windows), it runs the subcommand that key maps to ("" is root
// itself), with that command's flags, as busybox does.
func Main(root *cobra.Command, names map[string]string) {
	// Packages given no logger log to slog's default (and libraries to the
	// log package, which then goes through it too): mask those lines as
	// the configured loggers do, so that no path writes a secret.
	slog.SetDefault(slog.New(logging.Redacting(slog.NewTextHandler(os.Stderr, nil))))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if sub, ok := names[strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")]; ok && sub != "" {
		root.SetArgs(append([]string{sub}, os.Args[1:]...))
	}
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
	os.Exit(ExitCode(err))
}

// RefuseUnknownSubcommands makes every command group (`brine event`, `brine
// key`…) refuse a subcommand it does not have with a usage error (exit 2);
// cobra would print the group's help and exit 0, so that a script's typo
// (`brine event fire`) looked like success.
func RefuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		RefuseUnknownSubcommands(sub)
	}
	if c.HasParent() && c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UsageError{fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())}
			}
			return cmd.Help()
		}
	}
}
