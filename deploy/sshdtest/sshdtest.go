// Package sshdtest starts a real OpenSSH server (Debian's openssh-server,
// /usr/sbin/sshd) for tests of code that logs in over SSH: on 127.0.0.1 at
// a free high port, with a fresh host key, a fresh authorized key for root
// and a config of its own; StartGuest starts it as a VM of its own, whose
// /etc, /usr, /var and /run are overlays of the host's, for a deploy to
// install and start an agent in. It needs root, as sshd does to log users
// in; a test that cannot have it fails, saying why.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/brinehq/brine/internal/loopback"
	"github.com/brinehq/brine/internal/syncbuf"
	"github.com/brinehq/brine/internal/testenv"
)

// sshdPath is Debian's openssh-server daemon, which `make deps` installs.
const sshdPath = "/usr/sbin/sshd"

// Server is a running sshd.
type Server struct {
	Port    int
	HostKey ssh.PublicKey
	// KeyFile is the private key authorized to log in as root.
	KeyFile string
	// KeyPEM is its content, which must never show up anywhere.
	KeyPEM string
	// Log is sshd's own log (-e), for failure messages.
	Log *syncbuf.Buffer
	dir string
	cmd *exec.Cmd
}

// NeedRoot fails (never skips) a test that cannot start sshd, saying why.
func NeedRoot(t testing.TB) {
	t.Helper()
	testenv.NeedRoot(t, fmt.Sprintf("this test starts %s, which must run as root (run the tests as root, e.g. in the CI container)", sshdPath))
	if _, err := os.Stat(sshdPath); err != nil {
		t.Fatalf("%s is missing: install Debian's openssh-server (make deps does): %v", sshdPath, err)
	}
}

// Start starts sshd; it is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, nil)
}

// Guest describes the machine StartGuest plays.
type Guest struct {
	// ReadOnlyUsr mounts /usr read-only, with an empty, writable
	// /usr/local.
	ReadOnlyUsr bool
	// Systemd makes /run/systemd/system exist, as where systemd is the
	// init system (without it, it does not, even where the host's init
	// is systemd).
	Systemd bool
}

// guestScript sets up a guest's mount namespace, then starts sshd: $1 is
// the directory for the overlays' changes, $2 and $3 are 1 for
// Guest.ReadOnlyUsr and Guest.Systemd, the rest is sshd's command line.
const guestScript = `set -e
g=$1 ro=$2 systemd=$3; shift 3
for d in etc usr var run; do
	mkdir -p "$g/$d-up" "$g/$d-work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$g/$d-up,workdir=$g/$d-work" "/$d"
done
if [ "$ro" = 1 ]; then
	mount -o remount,ro /usr
	mount -t tmpfs -o mode=755 tmpfs /usr/local
fi
if [ -d /run/systemd ]; then mount -t tmpfs -o mode=755 tmpfs /run/systemd; fi
if [ "$systemd" = 1 ]; then mkdir -p /run/systemd/system; fi
exec "$@"
`

// StartGuest starts sshd as the only machine of a VM: in a mount
// namespace of its own, in which /etc, /usr, /var and /run are
// copy-on-write overlays of the host's (their changes kept in the test's
// directory), so that what a deploy installs and starts there (as root)
// leaves the host as it was. Path reads the guest's files; every process
// left in the guest is killed when the test ends.
func StartGuest(t testing.TB, g Guest) *Server {
	t.Helper()
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	return start(t, []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", guestScript, "guest", "", flag(g.ReadOnlyUsr), flag(g.Systemd)})
}

// Path is where the host sees path of the server's machine (the guest's,
// for StartGuest).
func (s *Server) Path(path string) string {
	return fmt.Sprintf("/proc/%d/root%s", s.cmd.Process.Pid, path)
}

// GuestPids are the processes running in the guest's mount namespace
// (sshd and what a deploy started), for StartGuest.
func (s *Server) GuestPids(t testing.TB) []int {
	t.Helper()
	pids, err := s.guestPids()
	if err != nil {
		t.Fatalf("the guest's processes: %v", err)
	}
	return pids
}

func (s *Server) guestPids() ([]int, error) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", s.cmd.Process.Pid))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && l == ns {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// start starts sshd, run by the command line wrap when it is set (with
// its empty argument replaced by the server's directory, and sshd's
// command line appended).
func start(t testing.TB, wrap []string) *Server {
	t.Helper()
	NeedRoot(t)
	// sshd wants its privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: t.TempDir(), Log: &syncbuf.Buffer{}}
	if wrap != nil {
		// Overlay mount options are separated by commas, which a
		// subtest's name puts into its TempDir.
		dir, err := os.MkdirTemp("", "sshd-guest")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		s.dir = dir
	}
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostFile := filepath.Join(s.dir, "ssh_host_ed25519_key")
	WritePrivateKey(t, hostFile, hostPriv)
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	s.HostKey = hostSigner.PublicKey()
	_, userPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s.KeyFile = filepath.Join(s.dir, "id_ed25519")
	s.KeyPEM = WritePrivateKey(t, s.KeyFile, userPriv)
	userSigner, err := ssh.NewSignerFromKey(userPriv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "authorized_keys"), ssh.MarshalAuthorizedKey(userSigner.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Port = FreePort(t)
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
UsePAM no
StrictModes no
PermitRootLogin yes
PasswordAuthentication yes
KbdInteractiveAuthentication no
LogLevel VERBOSE
`, s.Port, hostFile, filepath.Join(s.dir, "sshd.pid"), filepath.Join(s.dir, "authorized_keys"))
	confFile := filepath.Join(s.dir, "sshd_config")
	if err := os.WriteFile(confFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{sshdPath, "-D", "-e", "-f", confFile}
	if wrap != nil {
		args := slices.Clone(wrap)
		for i, a := range args {
			if a == "" {
				args[i] = s.dir
			}
		}
		argv = append(args, argv...)
	}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	// sshd dies with the test binary, which a timed-out test ends without
	// running Cleanup.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.cmd.Stdout, s.cmd.Stderr = s.Log, s.Log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting sshd: %v", err)
	}
	t.Cleanup(func() {
		if wrap != nil {
			// What a deploy started in the guest outlives sshd.
			pids, _ := s.guestPids()
			for _, pid := range pids {
				if pid != s.cmd.Process.Pid {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on port %d: %v\n%s", s.Port, err, s.Log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewKey returns a fresh ed25519 private key.
func NewKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// WritePrivateKey writes key to path (mode 0600) in OpenSSH's format and
// returns what it wrote.
func WritePrivateKey(t testing.TB, path string, key ed25519.PrivateKey) string {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	b := pem.EncodeToMemory(block)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// PasswordUser makes sure a local user exists for password logins and
// gives it a fresh random password, which it returns.
func PasswordUser(t testing.TB, name string) string {
	t.Helper()
	NeedRoot(t)
	if err := exec.Command("id", name).Run(); err != nil {
		if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v: %s", name, err, out)
		}
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	pw := fmt.Sprintf("pw-%x", b)
	cmd := exec.Command("chpasswd")
	cmd.Stdin = strings.NewReader(name + ":" + pw + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chpasswd: %v: %s", err, out)
	}
	return pw
}

// FreePort returns a port free on 127.0.0.1, or fails the test.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := loopback.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
