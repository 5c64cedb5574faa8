package dnsmasq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// writeIfChanged replaces path with content atomically, unless it already
// holds exactly that: a temporary file in the same directory is written and
// fsynced, renamed over path, and the directory fsynced, so that a reader
// (dnsmasq on SIGHUP) sees the old file or the new one, never a part, and a
// crash leaves one of them. It reports whether it wrote.
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
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if tmp != "" {
			os.Remove(tmp)
		}
	}()
	_, err = f.Write(content)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	tmp = ""
	if err := syncDir(dir); err != nil {
		return true, fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return true, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
