package deploy

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// BuiltinScript is the script name of the built-in bootstrap, which a
// profile without script gets (salt-cloud's default is bootstrap-salt):
// it installs brine-agent, not salt-minion, from a binary the master
// uploads, so the VM needs no internet access.
const BuiltinScript = "bootstrap-brine"

// AgentBinariesDir is where packages put the agent binaries of other
// platforms, searched after agent_binaries and the brine executable's
// directory.
const AgentBinariesDir = "/usr/lib/brine/agents"

// Errors of the built-in bootstrap; test them with errors.Is.
var (
	// ErrNoAgentBinary: the VM's OS or architecture has no brine-agent
	// binary (none is built for it, or none was found where brine looks).
	ErrNoAgentBinary = errors.New("no agent binary for the VM")
	// ErrChecksum: the uploaded agent binary's sha256 on the VM is not
	// the one sent.
	ErrChecksum = errors.New("uploaded agent binary corrupted")
	// ErrNeedRoot: the bootstrap would run as a user other than root
	// without sudo.
	ErrNeedRoot = errors.New("the built-in bootstrap needs root")
)

// bootstrapScript installs and starts the agent on the VM; bootstrapUnit
// is the systemd unit it installs (the one copy of brine-agent.service in
// the tree).
var (
	//go:embed bootstrap-brine.sh
	bootstrapScript []byte
	//go:embed brine-agent.service
	bootstrapUnit []byte
)

// DefaultAgentDirs are the directories searched for agent binaries after a
// VM's agent_binaries: the directory of the running brine executable (and
// its cross/ subdirectory, where make cross puts them) and
// AgentBinariesDir.
func DefaultAgentDirs() []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			dir := filepath.Dir(exe)
			dirs = append(dirs, dir, filepath.Join(dir, "cross"))
		}
	}
	return append(dirs, AgentBinariesDir)
}

// platform is a VM's GOOS and GOARCH, and what uname -sm said.
type platform struct {
	goos, goarch, uname string
}

func (p platform) String() string { return p.goos + "/" + p.goarch }

// unameOS and unameArch map uname -s and uname -m to Go's names, for the
// platforms brine builds agents for (make cross).
var (
	unameOS   = map[string]string{"Linux": "linux", "FreeBSD": "freebsd", "Darwin": "darwin"}
	unameArch = map[string]string{
		"x86_64": "amd64", "amd64": "amd64",
		"aarch64": "arm64", "arm64": "arm64",
		"i386": "386", "i486": "386", "i586": "386", "i686": "386",
		"armv7l": "arm", "armv7": "arm", "armv8l": "arm",
	}
)

// parseUname reads uname -sm's output.
func parseUname(out string) (platform, error) {
	out = strings.TrimSpace(out)
	p := platform{uname: out}
	f := strings.Fields(out)
	if len(f) != 2 {
		return p, fmt.Errorf("uname -sm said %q, not an OS and a machine name", out)
	}
	up := strings.ToUpper(f[0])
	if strings.HasPrefix(up, "MINGW") || strings.HasPrefix(up, "MSYS") || strings.HasPrefix(up, "CYGWIN") || strings.HasPrefix(up, "WINDOWS") {
		return p, fmt.Errorf("uname -sm said %q: a Windows machine, which the built-in bootstrap does not install (give the profile a script of its own)", out)
	}
	var ok bool
	if p.goos, ok = unameOS[f[0]]; !ok {
		return p, fmt.Errorf("uname -sm said %q: brine builds no agent for %s (it does for Linux, FreeBSD and Darwin)", out, f[0])
	}
	if p.goarch, ok = unameArch[f[1]]; !ok {
		return p, fmt.Errorf("uname -sm said %q: brine builds no agent for the machine %s (it does for x86_64, aarch64/arm64, i386-i686 and armv7l)", out, f[1])
	}
	return p, nil
}

// agentFile is the name of p's agent binary in an agent directory.
func agentFile(p platform) string { return "brine-agent-" + p.goos + "-" + p.goarch }

// findAgent looks for p's agent binary in dirs: brine-agent-<os>-<arch>,
// or brine-agent where p is the master's own platform.
func findAgent(p platform, dirs []string) (string, error) {
	names := []string{agentFile(p)}
	if p.goos == runtime.GOOS && p.goarch == runtime.GOARCH {
		names = append(names, "brine-agent")
	}
	for _, d := range dirs {
		for _, n := range names {
			path := filepath.Join(d, n)
			if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
				return path, nil
			}
		}
	}
	return "", fmt.Errorf("uname -sm said %q (%s), and there is no %s in %s: set agent_binaries to a directory holding it (make cross builds every platform's into bin/cross)",
		p.uname, p, strings.Join(names, " or "), strings.Join(dirs, ", "))
}

// bootstrap is the built-in deploy script: it finds the VM's platform,
// uploads the matching agent binary (checking its sha256 there), the
// minion configuration and the systemd unit, then runs bootstrap-brine.sh
// as root to install and start the agent. It returns the script's exit
// status; an error means it could not be run.
func (d *Deployer) bootstrap(client *ssh.Client, o *options, user string, log *slog.Logger, out *outputTail) (int, error) {
	if user != "root" && !o.useSudo(user) {
		return 0, fmt.Errorf("%w: %s: logged in to %s as %s, with sudo: False; it installs into /usr/bin and /etc/brine: set sudo: True (and sudo_password if sudo asks for one) or ssh_username: root",
			ErrNeedRoot, o.name, o.host, user)
	}
	uname, code, err := d.capture(client, "uname -sm")
	if err != nil {
		return 0, fmt.Errorf("%s: running uname -sm on %s: %w", o.name, o.host, err)
	}
	if code != 0 {
		return 0, fmt.Errorf("%w: %s: uname -sm failed on %s (exit status %d: %q): the built-in bootstrap needs a POSIX shell (Linux, FreeBSD, macOS); Windows VMs are not supported by it, give their profile a script of its own",
			ErrNoAgentBinary, o.name, o.host, code, strings.TrimSpace(uname))
	}
	p, err := parseUname(uname)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrNoAgentBinary, o.name, err)
	}
	bin, err := findAgent(p, o.agentDirs)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrNoAgentBinary, o.name, err)
	}
	log.Info("agent binary chosen", "platform", p.String(), "uname", p.uname, "binary", bin)
	f, err := os.Open(bin)
	if err != nil {
		return 0, fmt.Errorf("%s: the agent binary: %w", o.name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: the agent binary: %w", o.name, err)
	}
	dir, cleanup, err := d.prepare(client, o, log)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	remote := dir + "/brine-agent"
	if err := d.uploadAgent(client, o, f, bin, st.Size(), remote, log); err != nil {
		return 0, err
	}
	if err := d.put(client, o, dir+"/brine-agent.service", bootstrapUnit, log); err != nil {
		return 0, err
	}
	return d.runScript(client, o, user, dir, log, out)
}

// uploadAgent copies the binary to remote, reporting progress, and checks
// that its sha256 there is that of the bytes sent.
func (d *Deployer) uploadAgent(client *ssh.Client, o *options, f io.Reader, bin string, size int64, remote string, log *slog.Logger) error {
	mb := float64(size) / 1e6
	d.progress(o, log, fmt.Sprintf("uploading %s (%.1f MB) to %s:%s", filepath.Base(bin), mb, o.host, remote))
	sum := sha256.New()
	pr := &progressReader{r: io.TeeReader(f, sum), size: size, step: size / 4, report: func(n int64) {
		d.progress(o, log, fmt.Sprintf("… %d%% (%.1f of %.1f MB)", n*100/max(size, 1), float64(n)/1e6, mb))
	}}
	start := time.Now()
	cmd := fmt.Sprintf("umask 077 && cat > %s", shellQuote(remote))
	if code, err := d.exec(client, o, cmd, pr, log, "upload", nil); err != nil || code != 0 {
		if err == nil {
			err = fmt.Errorf("exit status %d (see the log)", code)
		}
		return fmt.Errorf("uploading %s to %s:%s: %w", bin, o.host, remote, err)
	}
	elapsed := time.Since(start)
	if pr.n != size {
		return fmt.Errorf("uploading %s to %s:%s: sent %d of %d bytes", bin, o.host, remote, pr.n, size)
	}
	want := hex.EncodeToString(sum.Sum(nil))
	// GNU and busybox (sha256sum), FreeBSD (sha256), macOS (shasum).
	q := shellQuote(remote)
	got, code, err := d.capture(client, fmt.Sprintf("sha256sum %s 2>/dev/null || sha256 -q %s 2>/dev/null || shasum -a 256 %s", q, q, q))
	if err != nil {
		return fmt.Errorf("checking the sha256 of %s:%s: %w", o.host, remote, err)
	}
	fields := strings.Fields(got)
	if code != 0 || len(fields) == 0 {
		return fmt.Errorf("checking the sha256 of %s:%s: no sha256sum, sha256 or shasum there (exit status %d)", o.host, remote, code)
	}
	if fields[0] != want {
		return fmt.Errorf("%w: %s: %s:%s has sha256 %s, %s has %s", ErrChecksum, o.name, o.host, remote, fields[0], bin, want)
	}
	d.progress(o, log, fmt.Sprintf("uploaded %.1f MB in %s (%.1f MB/s), sha256 %s verified", mb, elapsed.Round(time.Millisecond), mb/max(elapsed.Seconds(), 1e-3), want[:12]))
	return nil
}

// progress logs a step of the bootstrap, and shows it with Output.
func (d *Deployer) progress(o *options, log *slog.Logger, msg string) {
	log.Info("bootstrap progress", "step", "upload", "line", msg)
	if d.cfg.Output != nil {
		d.outMu.Lock()
		fmt.Fprintf(d.cfg.Output, "%s: %s\n", o.name, msg)
		d.outMu.Unlock()
	}
}

// capture runs command and returns what it printed (stdout and stderr)
// and its exit status.
func (d *Deployer) capture(client *ssh.Client, command string) (string, int, error) {
	sess, err := client.NewSession()
	if err != nil {
		return "", 0, err
	}
	defer sess.Close()
	out, err := sess.CombinedOutput(command)
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return string(out), 0, nil
	case errors.As(err, &ee):
		return string(out), ee.ExitStatus(), nil
	}
	return string(out), 0, err
}

// progressReader calls report after each step bytes read.
type progressReader struct {
	r          io.Reader
	n          int64
	size, step int64
	next       int64
	report     func(n int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.step > 0 && p.n < p.size {
		if p.next == 0 {
			p.next = p.step
		}
		for p.n >= p.next {
			p.report(p.n)
			p.next += p.step
		}
	}
	return n, err
}
