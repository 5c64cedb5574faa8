package dnsmasq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/internal/atomicfile"
)

// writeIfChanged replaces path with content atomically (atomicfile: a
// reader, dnsmasq on SIGHUP, sees the old file or the new one, never a
// part), unless it already holds exactly that. It reports whether it wrote.
func writeIfChanged(path string, content []byte) (bool, error) {
	mode := fs.FileMode(0o644) // dnsmasq reads its files after dropping to nobody
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, content):
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := atomicfile.WriteBytes(path, content, mode); err != nil {
		return false, err
	}
	return true, nil
}

var (
	// errNoReload: the configuration names no way to reload dnsmasq.
	errNoReload = errors.New("no pidfile or reload_command configured")
	// errNotRunning: the pid file is missing, so dnsmasq is not running;
	// it reads the files when it starts.
	errNotRunning = errors.New("dnsmasq is not running (no pid file)")
)

// reloadTimeout bounds a reload_command.
const reloadTimeout = 30 * time.Second

// reload makes dnsmasq re-read the files: SIGHUP to the pid in PidFile, or
// ReloadCommand. It returns how ("sighup" or "command").
func reload(ctx context.Context, cfg *Config) (string, error) {
	switch {
	case cfg.PidFile != "":
		return "sighup", hangup(cfg.PidFile)
	case len(cfg.ReloadCommand) > 0:
		ctx, cancel := context.WithTimeout(ctx, reloadTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, cfg.ReloadCommand[0], cfg.ReloadCommand[1:]...).CombinedOutput()
		if err != nil {
			return "command", fmt.Errorf("reload_command %q: %w: %s", strings.Join(cfg.ReloadCommand, " "), err, strings.TrimSpace(string(out)))
		}
		return "command", nil
	}
	return "", errNoReload
}

// hangup sends SIGHUP to the dnsmasq whose pid is in pidfile. Where /proc
// tells the process name, a pid that is not dnsmasq's (a stale pid file
// whose number was reused) is refused rather than signalled.
func hangup(pidfile string) error {
	b, err := os.ReadFile(pidfile)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", errNotRunning, pidfile)
	}
	if err != nil {
		return fmt.Errorf("pidfile: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("pidfile %s: %q is not a process id", pidfile, strings.TrimSpace(string(b)))
	}
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		if name := strings.TrimSpace(string(comm)); name != "dnsmasq" {
			return fmt.Errorf("pidfile %s: process %d is %q, not dnsmasq", pidfile, pid, name)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("pidfile %s: SIGHUP to %d: %w", pidfile, pid, err)
	}
	return nil
}
