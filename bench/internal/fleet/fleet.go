// Package fleet is the bench agent fleet: what the benchmarks that measure
// a master with agents (bench/agents, bench/jobs, bench/orchestrate,
// bench/states, bench/beacons) bring up before they measure anything and
// take down after. It starts a `brine master` process (bench/masterproc)
// with an operator's connection and a watch of its bus, configures agents
// for it — agent.Agent in the bench's process (New) or `brine agent`
// processes (AgentConfig) — waits until the master lists them connected,
// runs the CLI against it with its CPU accounted, and stops them all.
//
// Each benchmark had its own copy of these steps, and the copies had
// begun to drift (one agent's configuration written one way here and
// another there, a connected agent waited for differently). Kept in one
// place, a change to how the fleet is brought up reaches every benchmark
// at once, and a benchmark's code is what it measures.
package fleet

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/agent/grains"
	"github.com/brinehq/brine/bench/internal/runner"
	"github.com/brinehq/brine/bench/masterproc"
)

// StopTimeout is how long Stop waits for the agents to return once their
// context ended.
const StopTimeout = runner.StopTimeout

// AgentConfig writes agent id's configuration directory, s.AgentsDir/<id>,
// for the master of s: its address and ports, its id, a cache directory of
// its own and extra (further YAML keys, or ""). It returns the directory,
// for agent.LoadConfig or `brine agent -c`.
func AgentConfig(s *masterproc.Setup, id, extra string) (string, error) {
	dir := filepath.Join(s.AgentsDir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	conf := fmt.Sprintf("master: 127.0.0.1\nmaster_port: %d\npublish_port: %d\nid: %s\ncachedir: %s\n",
		s.ReqPort, s.PubPort, id, filepath.Join(dir, "cache"))
	return dir, os.WriteFile(filepath.Join(dir, "minion"), []byte(conf+extra), 0o600)
}

// NewAgent configures agent id (AgentConfig) and makes it — its key pair,
// outbox and grains — before anything is timed. A configuration the agent
// warns about is an error: the benchmark would not measure what it says.
func NewAgent(s *masterproc.Setup, id, extra string, log *slog.Logger) (*agent.Agent, error) {
	dir, err := AgentConfig(s, id, extra)
	if err != nil {
		return nil, err
	}
	cfg, err := agent.LoadConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	if len(cfg.Warnings) > 0 {
		return nil, fmt.Errorf("agent %s configuration: %v", id, cfg.Warnings)
	}
	a, err := agent.New(cfg, agent.Options{Version: "bench", Log: log, Grains: grains.Collector{Output: sharedOutput}})
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	return a, nil
}

// makers is how many agents New makes at once.
const makers = 64

// commandOutput is one command's output, run once for the whole fleet.
type commandOutput struct {
	once sync.Once
	out  string
	err  error
}

// commands holds the fleet's commandOutputs by command line.
var commands sync.Map

// sharedOutput runs a command the grains ask for (dpkg, systemctl, ip,
// lspci, man) once for every agent of the process: they all run on this
// one machine, so the output is the same, and a thousand agents each
// starting eight processes made building the fleet take minutes.
func sharedOutput(ctx context.Context, name string, args ...string) (string, error) {
	v, _ := commands.LoadOrStore(name+"\x00"+strings.Join(args, "\x00"), &commandOutput{})
	c := v.(*commandOutput)
	c.once.Do(func() { c.out, c.err = grains.RunCommand(ctx, name, args...) })
	return c.out, c.err
}

// Fleet is agents running in the benchmark's process, each with its own
// configuration directory, key pair, on-disk outbox, connection and
// session, logging to one LogCounter.
type Fleet struct {
	// Agents and IDs are in the order of New's id(i).
	Agents []*agent.Agent
	IDs    []string
	// Logs counts what the agents logged.
	Logs *masterproc.LogCounter

	run runner.Group
}

// New makes n agents of the master of s, agent i with id id(i) and the
// extra configuration keys extra, several at a time: a thousand agents'
// key pairs and grains take a while, none of it measured. Making an
// agent mostly waits on the disk (its key files and outbox are synced), so
// many are made at once, not a few per core.
func New(s *masterproc.Setup, n int, id func(i int) string, extra string) (*Fleet, error) {
	f := &Fleet{Agents: make([]*agent.Agent, n), IDs: make([]string, n), Logs: masterproc.NewLogCounter()}
	log := slog.New(f.Logs)
	err := runner.Each(makers, n, func(i int) error {
		a, err := NewAgent(s, id(i), extra, log)
		if err != nil {
			return err
		}
		f.Agents[i], f.IDs[i] = a, id(i)
		return nil
	})
	return f, err
}

// Start runs every agent (agent.Agent.Run) until ctx ends or Stop is
// called. It is called once.
func (f *Fleet) Start(ctx context.Context) {
	f.run.Start(ctx, len(f.Agents), func(ctx context.Context, i int) error { return f.Agents[i].Run(ctx) })
}

// Stop ends the agents and reports whether they all returned within
// StopTimeout. It may be called again (a deferred call after the
// benchmark's own), and before Start.
func (f *Fleet) Stop() bool {
	return f.run.Stop()
}

// Err is the first agent whose Run returned an error, once stopped; the
// fleet's own stop (context.Canceled) is no error.
func (f *Fleet) Err() (int, error) {
	return f.run.Err()
}

// Ready is how many agents are accepted and connected now.
func (f *Fleet) Ready() int {
	n := 0
	for _, a := range f.Agents {
		if a.Ready() {
			n++
		}
	}
	return n
}

// Queued is the items in every agent's outbox: zero once all they sent
// (start events, returns, events) was acknowledged by the master, stored.
func (f *Fleet) Queued() int {
	n := 0
	for _, a := range f.Agents {
		n += a.Queued()
	}
	return n
}

// Settled reports whether every agent is ready and its outbox empty.
func (f *Fleet) Settled() bool {
	for _, a := range f.Agents {
		if !a.Ready() || a.Queued() > 0 {
			return false
		}
	}
	return true
}
