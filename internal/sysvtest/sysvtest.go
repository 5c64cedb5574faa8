// Package sysvtest installs throwaway SysV services for the tests of the
// service execution module, the service states and the service beacon:
// a real LSB init script in /etc/init.d, driven by Debian's service and
// update-rc.d, whose daemon is a sleep with a pid file.
package sysvtest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/brinehq/brine/internal/testenv"
)

// script is the init script: %[1]s the name, %[2]s the pid file, %[3]s the
// sleep's argument, %[4]d the exit status of start (0: it starts). The
// daemon is running while its pid file's process has a command line (a
// zombie, which a container's init may leave unreaped, has none); stop
// waits until it is gone, as start-stop-daemon --retry does.
const script = `#!/bin/sh
### BEGIN INIT INFO
# Provides:          %[1]s
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: brine's test service
### END INIT INFO
PIDFILE=%[2]s
running() { [ -f "$PIDFILE" ] && [ -n "$(tr -d '\000' <"/proc/$(cat "$PIDFILE")/cmdline" 2>/dev/null)" ]; }
case "$1" in
start)
	[ %[4]d = 0 ] || exit %[4]d
	running && exit 0
	# Detached and with no inherited descriptors, as a daemon.
	setsid sleep %[3]s </dev/null >/dev/null 2>&1 &
	echo $! >"$PIDFILE"
	;;
stop)
	if running; then
		pid=$(cat "$PIDFILE")
		kill "$pid"
		for i in $(seq 50); do
			[ -n "$(tr -d '\000' <"/proc/$pid/cmdline" 2>/dev/null)" ] || break
			sleep 0.1
		done
	fi
	rm -f "$PIDFILE"
	;;
restart|force-reload)
	"$0" stop && "$0" start
	;;
reload)
	running || exit 7
	;;
status)
	running && { echo "%[1]s is running"; exit 0; }
	echo "%[1]s is not running"
	exit 3
	;;
*)
	echo "Usage: $0 {start|stop|restart|reload|status}" >&2
	exit 2
	;;
esac
`

// Service is an installed test service.
type Service struct {
	Name, Script, PIDFile string
	// Sleep is the daemon's command line, unique to this service (what
	// service.status's sig matches).
	Sleep string
}

// Options shape the service.
type Options struct {
	// StartStatus is what start exits with; not 0 makes a service that
	// fails to start.
	StartStatus int
}

// Install writes a service named prefix-<random> to /etc/init.d, removed
// with its rc links (and its daemon stopped) when the test ends. It fails
// the test, saying why, without root, without the tools, or on a machine
// that runs systemd (where service would not run the script directly).
func Install(t testing.TB, prefix string, o Options) Service {
	t.Helper()
	testenv.NeedRoot(t, "this test writes an init script to /etc/init.d and runs update-rc.d: run the tests as root (CI does)")
	for _, tool := range []string{"service", "update-rc.d", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (Debian's init-system-helpers, sysvinit-utils, util-linux): %v", tool, err)
		}
	}
	if fi, err := os.Stat("/run/systemd/system"); err == nil && fi.IsDir() {
		t.Fatal("this test drives a SysV script: this machine runs systemd")
	}
	name := fmt.Sprintf("%s-%08x", prefix, rand.Uint32())
	s := Service{Name: name, Script: filepath.Join("/etc/init.d", name), PIDFile: filepath.Join(t.TempDir(), name+".pid"),
		Sleep: fmt.Sprintf("3599.%d", rand.IntN(1e6))}
	if err := os.WriteFile(s.Script, fmt.Appendf(nil, script, name, s.PIDFile, s.Sleep, o.StartStatus), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(s.Script, "stop").Run()
		_ = exec.Command("update-rc.d", "-f", name, "remove").Run()
		_ = os.Remove(s.Script)
	})
	return s
}
