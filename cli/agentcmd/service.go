package agentcmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/agent/agentsvc"
)

// NewServiceCmd is `brine-agent service install|remove`: the agent
// registered with the Windows Service Control Manager, as Salt's Windows
// installer registers salt-minion. Elsewhere the service is the unit file
// the package installs, and both say so.
func NewServiceCmd(f *Flags) *cobra.Command {
	var name, display string
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install or remove the agent as a Windows service",
	}
	install := &cobra.Command{
		Use:   "install",
		Short: "Register this binary as the agent's Windows service, started at boot",
		Long: `Register the agent with the Service Control Manager: it starts this
binary with -c CONFIG-DIR (and --log-level, when given) at boot and stops it
with the machine. Off Windows, install the systemd unit brine-agent.service
(the package does) instead.`,
		Example: `  brine-agent service install -c C:\ProgramData\brine
  sc.exe start brine-agent`,
		Args: RangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary: %w", err)
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return fmt.Errorf("finding this binary: %w", err)
			}
			dir, err := filepath.Abs(f.ConfigDir)
			if err != nil {
				return err
			}
			args := []string{"-c", dir}
			if f.LogLevel != "" {
				args = append(args, "--log-level", f.LogLevel)
			}
			if err := agentsvc.Install(name, display, exe, args); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "installed service %s: %s -c %s\n", name, exe, dir)
			return err
		},
	}
	install.Flags().StringVar(&display, "display-name", "brine agent (Salt minion)", "the service's display name")
	remove := &cobra.Command{
		Use:   "remove",
		Short: "Unregister the agent's Windows service",
		Args:  RangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := agentsvc.Remove(name); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "removed service %s\n", name)
			return err
		},
	}
	cmd.PersistentFlags().StringVar(&name, "name", ServiceName, "the service's name")
	cmd.AddCommand(install, remove)
	return cmd
}
