package agentcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// AgentNames are the Salt commands brine-agent answers to when installed
// (or linked) under their names: salt-minion is the agent itself,
// salt-call is `brine-agent call`.
var AgentNames = map[string]string{
	"salt-minion": "",
	"salt-call":   "call",
}

// NewAgentRoot is brine-agent's command line. Started with no subcommand
// it is the agent, as salt-minion is (`brine-agent -c /etc/brine`, what
// brine-agent.service runs); `brine-agent call …` is salt-call.
func NewAgentRoot() *cobra.Command {
	f := &Flags{}
	var strict bool
	root := &cobra.Command{
		Use:   "brine-agent",
		Short: "brine's agent for managed machines (salt-minion and salt-call)",
		Long: agentLong + `

brine-agent is the part of brine installed on every managed machine; the
master and the operators' commands are the brine binary.

Exit codes: 0 success, 1 failure, 2 bad command line.`,
		Example: `  brine-agent -c /etc/brine
  brine-agent call grains.items
  brine-agent call --local state.apply`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UsageError{fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())}
			}
			return nil
		},
		RunE:          func(cmd *cobra.Command, _ []string) error { return runAgent(cmd, f, strict) },
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f.Add(root)
	addAgentFlags(root.Flags(), &strict)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	SetVersion(root)
	call := NewCallCmd(f)
	// Its examples name the binary a managed machine has.
	call.Example = strings.ReplaceAll(call.Example, "brine call", "brine-agent call")
	root.AddCommand(call, NewVersionCmd(root.Name()), NewServiceCmd(f), NewInstallAliasesCmd(AgentNames), NewGenDocsCmd())
	RefuseUnknownSubcommands(root)
	return root
}
