package masterproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/internal/loopback"
)

// Setup is a benchmark's working directory and the master it will run:
// the brine binary, loopback ports and a master configuration with
// auto_accept on 127.0.0.1.
type Setup struct {
	// Bin is the brine binary's absolute path.
	Bin string
	// Dir is the working directory; MasterDir holds the master's
	// configuration (and its data, under data/).
	Dir, MasterDir string
	// AgentsDir holds the configuration and cache directories of the
	// agents the benchmark runs (fleet.AgentConfig): Dir/agents unless
	// PlaceAgents moved it.
	AgentsDir        string
	PubPort, ReqPort int
	// NoFile is the open-file limit this process (and the master it
	// starts) runs with.
	NoFile uint64

	keep bool
}

// PlaceAgents puts the agents' directories in a new directory under
// parent instead of beside the master's, and returns its cleanup (which
// keeps it when Prepare was asked to keep). A benchmark of the master
// with a thousand agents in its process puts them on a filesystem of
// their own: on one disk, each agent's per-job files (proc/<jid>, its
// outbox's synced return) are a thousand machines' disk work done by one,
// and on ext4 without a journal every inode created scans past those
// deleted in the last minutes, so that work grew round after round and
// slowed the master's own file creation beside it.
func (s *Setup) PlaceAgents(parent string) (func(), error) {
	dir, err := os.MkdirTemp(parent, "brine-bench-agents-")
	if err != nil {
		return nil, fmt.Errorf("the agents' directory: %w", err)
	}
	s.AgentsDir = dir
	if s.keep {
		fmt.Fprintf(os.Stderr, "keeping %s\n", dir)
		return func() {}, nil
	}
	return func() { os.RemoveAll(dir) }, nil
}

// Prepare checks the brine binary bin, raises the open-file limit to at
// least nofile, makes a working directory for benchmark name (removed by
// the returned cleanup unless keep), picks two loopback ports and writes
// the master's configuration.
func Prepare(name, bin string, nofile uint64, keep bool) (*Setup, func(), error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, nil, fmt.Errorf("the brine binary: %w (go build -o %s ./cmd/brine)", err, bin)
	}
	lim, err := RaiseNoFile(nofile)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "brine-bench-"+name+"-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	if keep {
		fmt.Fprintf(os.Stderr, "bench/%s: keeping %s\n", name, dir)
		cleanup = func() {}
	}
	s := &Setup{Bin: abs, Dir: dir, MasterDir: filepath.Join(dir, "master"), AgentsDir: filepath.Join(dir, "agents"),
		NoFile: lim.Cur, keep: keep}
	if s.PubPort, err = loopback.Port(); err == nil {
		s.ReqPort, err = loopback.Port()
	}
	if err == nil {
		err = os.MkdirAll(s.MasterDir, 0o700)
	}
	if err == nil {
		conf := fmt.Sprintf("id: bench\ndata_dir: %s\ninterface: 127.0.0.1\npublish_port: %d\nret_port: %d\nauto_accept: true\n",
			filepath.Join(s.MasterDir, "data"), s.PubPort, s.ReqPort)
		err = os.WriteFile(filepath.Join(s.MasterDir, "master"), []byte(conf), 0o600)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return s, cleanup, nil
}

// Describe adds to rep's setup what every master benchmark reports: the
// open-file limit, the disk's fsync latency and brine's version.
func (s *Setup) Describe(rep *report.Report) {
	rep.Setup["rlimit_nofile"] = fmt.Sprintf("%d (raised with setrlimit, inherited by the master)", s.NoFile)
	if fs, err := report.ProbeFsync(s.Dir, 200); err == nil {
		rep.Setup["disk_fsync"] = fs
	}
	if !strings.HasPrefix(s.AgentsDir, s.Dir+string(filepath.Separator)) {
		rep.Setup["agents_dir"] = fmt.Sprintf("%s (%s), apart from the master's %s (%s)",
			s.AgentsDir, report.FSType(s.AgentsDir), s.Dir, report.FSType(s.Dir))
	}
	if v, err := exec.Command(s.Bin, "version").Output(); err == nil {
		rep.Setup["brine_version"] = strings.TrimSpace(string(v))
	}
}

// AddConfig appends yaml, further keys, to the master's configuration
// (Prepare's): a benchmark's file_roots, log level or experiment.
func (s *Setup) AddConfig(yaml string) error {
	f, err := os.OpenFile(filepath.Join(s.MasterDir, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(yaml)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReqAddr is the master's request address.
func (s *Setup) ReqAddr() string { return fmt.Sprintf("127.0.0.1:%d", s.ReqPort) }

// PubAddr is the master's publish address.
func (s *Setup) PubAddr() string { return fmt.Sprintf("127.0.0.1:%d", s.PubPort) }

// KeyFile is where the master writes its key when it starts.
func (s *Setup) KeyFile() string { return filepath.Join(s.MasterDir, "data", "master.key") }
