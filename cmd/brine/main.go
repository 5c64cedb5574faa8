// Command brine is the master (event bus, reactor, integrations) and every
// client command operators use against it, and the agent too (brine agent,
// brine call); managed machines can run cmd/brine-agent, the agent alone.
//
// Exit codes: 0 success; 1 the command failed (the reason is printed on one
// line); 2 the command line was wrong; 3 the master could not be reached.
package main

import (
	"github.com/spf13/cobra"

	"github.com/brinehq/brine/cli/agentcmd"
)

// Exit codes, documented in the package comment and in `brine --help`
// (agentcmd.ExitCode maps the errors below to them).
const (
	exitFailure     = agentcmd.ExitFailure
	exitUsage       = agentcmd.ExitUsage
	exitUnreachable = 3
)

// usageError marks a wrong command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string    { return e.err.Error() }
func (e usageError) Unwrap() error    { return e.err }
func (e usageError) CLIExitCode() int { return exitUsage }

// retcodeError ends the command with a job's retcode as exit status
// (salt-call, salt --retcode-passthrough).
type retcodeError struct {
	code int
	err  error
}

func (e retcodeError) Error() string    { return e.err.Error() }
func (e retcodeError) Unwrap() error    { return e.err }
func (e retcodeError) CLIExitCode() int { return e.code }

// unreachableError marks a master that could not be reached (exit 3).
type unreachableError struct{ err error }

func (e unreachableError) Error() string    { return e.err.Error() }
func (e unreachableError) Unwrap() error    { return e.err }
func (e unreachableError) CLIExitCode() int { return exitUnreachable }

func main() {
	agentcmd.Main(newRootCmd(), saltNames)
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

// globalFlags are shared by every subcommand: the agent's (config dir,
// log level and format) and the master's data directory.
type globalFlags struct {
	agentcmd.Flags
	dataDir string
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
	g.Add(root)
	root.PersistentFlags().StringVar(&g.dataDir, "data-dir", "", "data directory (default: data_dir, $BRINE_DATA or ./brine-data)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	agentcmd.SetVersion(root)
	root.AddCommand(newMasterCmd(g), newEventCmd(g), agentcmd.NewVersionCmd(root.Name()))
	root.AddCommand(newReactorCmd(g))
	root.AddCommand(newRunCmd(g), newJobsCmd(g), newSlackCmd(g))
	root.AddCommand(newDdnsCmd(g))
	root.AddCommand(newCloudCmd(g))
	root.AddCommand(newMineCmd(g))
	root.AddCommand(newKeyCmd(g))
	root.AddCommand(agentcmd.NewAgentCmd(&g.Flags), agentcmd.NewCallCmd(&g.Flags))
	root.AddCommand(newExecCmd(g), agentcmd.NewInstallAliasesCmd(saltNames))
	root.AddCommand(agentcmd.NewGenDocsCmd())
	agentcmd.RefuseUnknownSubcommands(root)
	return root
}

// rangeArgs is cobra.RangeArgs reporting a usage error.
func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
