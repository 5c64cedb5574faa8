// Command brine-agent is brine's agent for managed machines: salt-minion
// (the agent, run with no subcommand) and salt-call (`brine-agent call`),
// with the execution and state modules and the beacons, and nothing of the
// master, the cloud drivers or the integrations, so that it is small and
// static and builds for every OS a fleet runs. See cli/agentcmd.
//
// Exit codes: 0 success; 1 the command failed; 2 the command line was
// wrong; a job's retcode with call --retcode-passthrough.
package main

import "github.com/brinehq/brine/cli/agentcmd"

func main() {
	agentcmd.Main(agentcmd.NewAgentRoot(), agentcmd.AgentNames)
}
