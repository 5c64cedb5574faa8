package agentcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/agent/agentsvc"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/internal/logging"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/output"
	"github.com/brinehq/brine/wire"
)

// ServiceName is the agent's service: the systemd unit brine-agent.service
// and the Windows service the Service Control Manager knows it by.
const ServiceName = "brine-agent"

// agentLong is the agent's help, for `brine agent` and `brine-agent`.
const agentLong = `Run the agent: Salt's minion. It reads <config-dir>/minion and
<config-dir>/minion.d/*.conf (Salt's keys: master, master_port, id, grains,
mine_functions, mine_interval, acceptance_wait_time, master_finger, pki_dir,
cachedir…), makes its key pair in pki_dir on first start, connects to the
master over CURVE-encrypted ZeroMQ and waits until its key is accepted
(brine key -a ID, auto_accept, or a reaction). Then it fires
salt/minion/<id>/start, reports its grains and mine data, and delivers the
events applications send with brine call event.send — queued on disk while
the master is away, never lost.

SIGHUP reloads the configuration; SIGINT/SIGTERM stop the agent cleanly.
On Windows it runs as the service ` + ServiceName + ` when the Service Control
Manager starts it (brine-agent service install).`

// NewAgentCmd is `brine agent`, salt-minion.
func NewAgentCmd(f *Flags) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the agent on a managed machine (like salt-minion)",
		Long:  agentLong,
		Example: `  brine agent -c /etc/brine
  brine agent -c ./agent-conf --log-level debug`,
		Args: RangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runAgent(cmd, f, strict) },
	}
	addAgentFlags(cmd.Flags(), &strict)
	return cmd
}

func addAgentFlags(fl *pflag.FlagSet, strict *bool) {
	fl.BoolVar(strict, "strict", false, "refuse to start with a configuration key brine does not know (default: warn)")
}

// runAgent runs the agent until the command's context ends, under the
// service manager's control where there is one (Windows): everything,
// loading the configuration included, runs inside agentsvc.Run, so that
// a configuration error reaches the Service Control Manager as the
// service's failure rather than as a process that never answered it.
func runAgent(cmd *cobra.Command, f *Flags, strict bool) error {
	return agentsvc.Run(cmd.Context(), ServiceName, func(ctx context.Context) error {
		load := func() (*agent.Loaded, error) { return loadAgent(f, strict) }
		cfg, err := load()
		if err != nil {
			return err
		}
		log, err := agentLog(cmd.ErrOrStderr(), cfg)
		if err != nil {
			return err
		}
		a, err := agent.New(cfg, agent.Options{Version: Version(), Log: log, Load: load})
		if err != nil {
			return err
		}
		log.Info("agent starting", "id", a.ID(), "master", strings.Join(cfg.Master, ","), "key", a.PublicKey().String(),
			"config", strings.Join(cfg.Tree.Files, ","), "version", Version(), "commit", Commit())
		err = a.Run(ctx)
		log.Info("agent stopped", "queued", a.Queued())
		return err
	})
}

// loadAgent reads the agent's configuration with the command line's
// overrides; strict refuses keys brine does not know.
func loadAgent(f *Flags, strict bool) (*agent.Loaded, error) {
	cfg, err := agent.LoadConfig(f.ConfigDir)
	if err != nil {
		return nil, err
	}
	if f.LogLevel != "" {
		cfg.LogLevel = f.LogLevel
	}
	if f.LogFormat != "" {
		cfg.LogFormat = f.LogFormat
	}
	if strict {
		if err := config.Strict(cfg.Warnings); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// agentLog is the agent's logger, writing to w at the configured level.
func agentLog(w io.Writer, cfg *agent.Loaded) (*slog.Logger, error) {
	level, err := logging.ParseLevel(cfg.LogLevel)
	if err != nil {
		return nil, UsageError{err}
	}
	log, err := logging.New(w, cfg.LogFormat, level)
	if err != nil {
		return nil, UsageError{err}
	}
	return log, nil
}

// NewCallCmd is `brine call`, salt-call.
func NewCallCmd(f *Flags) *cobra.Command {
	var (
		asJSON  bool
		state   StateFlags
		timeout time.Duration
		local   bool
		out     string
		// salt-call's masterless and exit options
		fileRoot, pillarRoot string
		passthrough          bool
	)
	cmd := &cobra.Command{
		Use:   "call FUN [ARG…] [KEY=VALUE…]",
		Short: "Run an execution function on this agent (like salt-call)",
		Long: `Run one of the agent's execution functions here, as salt-call does, with
the agent's configuration and key (so run it as the agent's user):
event.send, grains.items, grains.get, network.ip_addrs, … Arguments are
parsed as Salt parses them (YAML scalars; KEY=VALUE keywords; a JSON
mapping as one argument). The return is printed as Salt's nested output
and sent to the master as salt/job/<jid>/ret/<id>; events and the return
are queued on disk first, so a master that is away gets them later from
the agent daemon.

With --local (or file_client: local in the configuration) it runs
masterless, as salt-call --local: salt:// files come from file_roots and
the pillar is compiled from pillar_roots with its top file, here; no
master is contacted, no key is needed or made, nothing is queued.
A failed function exits 1; with --retcode-passthrough, with its retcode
(a failed state: 2), as Salt's.`,
		Example: `  brine call event.send myapp/deploy/complete '{"version": "1.4.2"}'
  brine call event.send instar/custom/event '{"what": "something happened", "is it serious": true}' with_grains='[os, fqdn]'
  brine call grains.items --json
  brine call network.ip_addrs --local
  brine call --local --file-root ./states --pillar-root ./pillar --retcode-passthrough state.apply`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return UsageError{errors.New("call needs a FUN")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := ParseCall(args)
			if err != nil {
				return UsageError{err}
			}
			if out != "" {
				if err := output.Check(out); err != nil {
					return UsageError{err}
				}
			}
			cfg, err := loadAgent(f, false)
			if err != nil {
				return err
			}
			if err := cfg.Masterless(local, fileRoot, pillarRoot); err != nil {
				return UsageError{err}
			}
			local = cfg.Local()
			// salt-call prints the return, not the agent's log, unless
			// asked with --log-level.
			log := slog.New(slog.DiscardHandler)
			if f.LogLevel != "" {
				if log, err = agentLog(cmd.ErrOrStderr(), cfg); err != nil {
					return err
				}
			}
			a, err := agent.New(cfg, agent.Options{Version: Version(), Log: log, Masterless: local})
			if err != nil {
				return err
			}
			if !local {
				// Connected first, as salt-call: the function may need
				// the master (salt:// files, mine.get).
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				done, cerr := a.Connect(ctx)
				cancel()
				if cerr == nil {
					defer done()
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "brine: the master is not reachable (%v); running %s without it\n", cerr, req.Fun)
				}
			}
			res, err := a.Call(cmd.Context(), req.Fun, req.Args, req.Kwargs)
			if err != nil {
				return err
			}
			opts := output.Options{Color: ColorOn(cmd.OutOrStdout()), StateOutput: state.Output, StateQuiet: !state.Verbose}
			agentOpts := a.Opts()
			if !cmd.Flags().Changed("state-output") && !cmd.Flags().Changed("state_output") {
				opts.StateOutput, _ = agentOpts["state_output"].(string)
			}
			if v, ok := agentOpts["state_verbose"].(bool); ok && !cmd.Flags().Changed("state-verbose") && !cmd.Flags().Changed("state_verbose") {
				opts.StateQuiet = !v
			}
			if err := output.CheckStateOutput(opts.StateOutput); err != nil {
				return err
			}
			if err := printCall(cmd.OutOrStdout(), res, out, asJSON, opts); err != nil {
				return err
			}
			if !local {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				derr := a.Deliver(ctx)
				cancel()
				if derr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "brine: not delivered yet (%v): %d message(s) queued in %s; the agent will deliver them\n",
						derr, a.Queued(), cfg.CacheDir)
				}
			}
			if !res.Success {
				err := fmt.Errorf("%s failed (retcode %d)", req.Fun, res.Retcode)
				if s, ok := res.Return.(string); ok && s != "" {
					err = fmt.Errorf("%s failed (retcode %d): %s", req.Fun, res.Retcode, strings.SplitN(s, "\n", 2)[0])
				}
				code := ExitFailure
				if passthrough {
					code = max(res.Retcode, 1)
				}
				return RetcodeError{Code: code, Err: err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"local": RETURN} as JSON`)
	cmd.Flags().StringVar(&out, "out", "", "outputter: "+strings.Join(output.Formats, ", ")+" (default: what the function names, else nested)")
	cmd.Flags().DurationVarP(&timeout, "timeout", "t", 10*time.Second, "how long to try to reach the master before leaving the messages queued")
	cmd.Flags().BoolVar(&local, "local", false, "run masterless, as salt-call --local: file_client local (file_roots and pillar_roots here), no master, no key")
	cmd.Flags().StringVar(&fileRoot, "file-root", "", "with --local: this directory is the base file root (file_roots)")
	cmd.Flags().StringVar(&pillarRoot, "pillar-root", "", "with --local: this directory is the base pillar root (pillar_roots)")
	cmd.Flags().BoolVar(&passthrough, "retcode-passthrough", false, "exit with the function's retcode (a failed state: 2) rather than 1")
	state.Add(cmd.Flags())
	f.SaltLogFlag(cmd)
	return cmd
}

// printCall prints a return as salt-call does: {"local": return} through
// an outputter (nested by default, the function's own when it names one),
// or as one line of JSON.
func printCall(w io.Writer, ret wire.Return, format string, asJSON bool, opts output.Options) error {
	raw, err := json.Marshal(map[string]any{"local": py.Finite(ret.Return)})
	if err != nil {
		return err
	}
	if asJSON {
		_, err = fmt.Fprintf(w, "%s\n", raw)
		return err
	}
	v, err := output.Decode(raw)
	if err != nil {
		return err
	}
	if format == "" {
		format = ret.Out
	}
	if output.Check(format) != nil {
		format = "nested"
	}
	var rets output.Returns
	rets.Add("local", v.(map[string]any)["local"])
	return output.Write(w, format, rets, opts)
}

// StateFlags are Salt's options for the highstate outputter.
type StateFlags struct {
	Output  string
	Verbose bool
}

// Add binds the flags, under Salt's names and their dashed forms.
func (s *StateFlags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&s.Output, "state-output", "", "how states print: "+strings.Join(output.StateOutputs, ", ")+" (default full)")
	fl.StringVar(&s.Output, "state_output", "", "same as --state-output")
	fl.BoolVar(&s.Verbose, "state-verbose", true, "print states that succeeded without changes (false: only changes and failures)")
	fl.BoolVar(&s.Verbose, "state_verbose", true, "same as --state-verbose")
	_ = fl.MarkHidden("state_output")
	_ = fl.MarkHidden("state_verbose")
}
