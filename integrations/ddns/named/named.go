// Package named runs a real BIND 9 name server for tests and benchmarks: a
// primary for the zones asked for, with TSIG keys allowed to update and
// transfer them, on 127.0.0.1 (or another address of this host) at a free
// high port, in a directory of its own.
//
// As root the server runs as nobody (setpriv), as Debian's named would; it
// needs no system configuration and leaves nothing behind after Stop. The
// Debian package bind9 provides named; when it is missing Start says so.
package named

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/internal/loopback"
)

// ErrNotInstalled means named (Debian package bind9) is not on this machine.
var ErrNotInstalled = errors.New("named not found: install the Debian package bind9 (make deps)")

// Key is a TSIG key the server knows.
type Key struct {
	// Name is the key name, without the trailing dot.
	Name string
	// Algorithm is BIND's name for it, e.g. hmac-sha256 (the default).
	Algorithm string
	// Secret is base64; Start generates one when empty.
	Secret string
	// Grant is the update-policy rule after "grant <name>", applied to
	// every zone; default "zonesub ANY" (anything in the zone).
	Grant string
}

// Config is what the server serves.
type Config struct {
	// Zones are primary zones (no trailing dot), each created with an SOA,
	// an NS and ns1 at 127.0.0.1 when it is a forward zone.
	Zones []string
	// Keys may update (per their Grant) and transfer every zone.
	Keys []Key
	// Threads is named's -n (default 2).
	Threads int
	// Parent is where the server's directory is made (default the system
	// temporary directory); BIND syncs its journal to disk on every update,
	// so a tmpfs here measures everything but the disk.
	Parent string
	// Address is the IPv4 address to listen on (default 127.0.0.1): a
	// bridge's address lets masters in network namespaces reach it.
	Address string
}

// Server is a running named.
type Server struct {
	// Addr is host:port of the server, TCP and UDP.
	Addr string
	// Dir holds named.conf, the zone files and their journals.
	Dir string
	// Keys are the configured keys, secrets filled in.
	Keys []Key

	addr    string
	port    int
	threads int
	zones   []string
	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	log     *bytes.Buffer
}

// Start writes the configuration and starts named, returning once it
// answers for every zone.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if _, err := exec.LookPath("named"); err != nil {
		return nil, ErrNotInstalled
	}
	dir, err := os.MkdirTemp(cfg.Parent, "brine-named-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, threads: cfg.Threads, zones: cfg.Zones, addr: cfg.Address}
	if s.addr == "" {
		s.addr = "127.0.0.1"
	}
	if s.threads <= 0 {
		s.threads = 2
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, k := range cfg.Keys {
		if k.Algorithm == "" {
			k.Algorithm = "hmac-sha256"
		}
		if k.Secret == "" {
			b := make([]byte, 32)
			if _, err := rand.Read(b); err != nil {
				return fail(err)
			}
			k.Secret = base64.StdEncoding.EncodeToString(b)
		}
		if k.Grant == "" {
			k.Grant = "zonesub ANY"
		}
		s.Keys = append(s.Keys, k)
	}
	if s.port, err = loopback.Port(); err != nil {
		return fail(err)
	}
	s.Addr = net.JoinHostPort(s.addr, strconv.Itoa(s.port))
	if err := s.write(); err != nil {
		return fail(err)
	}
	if err := s.start(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Key returns the configured key called name.
func (s *Server) Key(name string) Key {
	for _, k := range s.Keys {
		if k.Name == name {
			return k
		}
	}
	return Key{}
}

func (s *Server) write() error {
	var conf strings.Builder
	for _, k := range s.Keys {
		fmt.Fprintf(&conf, "key %q { algorithm %s; secret %q; };\n", k.Name, k.Algorithm, k.Secret)
	}
	fmt.Fprintf(&conf, `options {
	directory %[1]q; pid-file %[2]q;
	session-keyfile %[3]q; managed-keys-directory %[1]q;
	listen-on port %[4]d { %[6]s; }; listen-on-v6 { none; };
	recursion no; dnssec-validation no; notify no;
	allow-transfer { %[5]s };
};
controls { };
logging { category default { null; }; category lame-servers { null; }; };
`, s.Dir, filepath.Join(s.Dir, "named.pid"), filepath.Join(s.Dir, "session.key"), s.port, s.transferACL(), s.addr)
	for _, z := range s.zones {
		fmt.Fprintf(&conf, "zone %q { type primary; file %q; update-policy {", z, z+".db")
		for _, k := range s.Keys {
			fmt.Fprintf(&conf, " grant %s %s;", k.Name, k.Grant)
		}
		if len(s.Keys) == 0 {
			conf.WriteString(" grant none. zonesub ANY;") // no key: nobody may update
		}
		conf.WriteString(" }; };\n")
		zone := "$TTL 300\n@ IN SOA ns1.example.test. hostmaster.example.test. ( 1 3600 600 86400 300 )\n@ IN NS ns1.example.test.\n"
		if !strings.HasSuffix(z, ".arpa") {
			zone += "ns1 IN A 127.0.0.1\n"
		}
		if err := os.WriteFile(filepath.Join(s.Dir, z+".db"), []byte(zone), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "named.conf"), []byte(conf.String()), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("named-checkconf", "-z", filepath.Join(s.Dir, "named.conf")).CombinedOutput(); err != nil {
		return fmt.Errorf("named-checkconf: %v: %s", err, out)
	}
	return s.chown()
}

func (s *Server) transferACL() string {
	if len(s.Keys) == 0 {
		return "none;"
	}
	var b strings.Builder
	for _, k := range s.Keys {
		fmt.Fprintf(&b, "key %q; ", k.Name)
	}
	return b.String()
}

// chown gives the directory to nobody when running as root: named writes
// its journals (*.jnl) and session key there.
func (s *Server) chown() error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := nobody()
	if err != nil {
		return err
	}
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		return err
	}
	return filepath.Walk(s.Dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

func nobody() (int, int, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return 0, 0, fmt.Errorf("named: running as root needs user nobody: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid, nil
}

func (s *Server) start(ctx context.Context) error {
	args := []string{"named", "-g", "-4", "-n", strconv.Itoa(s.threads), "-c", filepath.Join(s.Dir, "named.conf")}
	if os.Geteuid() == 0 {
		// The parent-death signal does not survive the change of user, so
		// setpriv sets it again: a killed test leaves no named behind.
		args = append([]string{"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--pdeathsig=KILL"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = s.Dir
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("named: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, log
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for _, z := range s.zones {
		for !s.serves(z) {
			select {
			case <-done:
				return fmt.Errorf("named exited at start-up: %s", s.Log())
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("named does not answer for %s after 20s: %s", z, s.Log())
			}
		}
	}
	return nil
}

// serves reports whether the server answers authoritatively for zone, over
// UDP and TCP: named opens its TCP listener after the UDP one, and a test
// that asks over TCP right after start-up would find the port closed.
func (s *Server) serves(zone string) bool {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	for _, network := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: network, Timeout: 200 * time.Millisecond}
		r, _, err := c.Exchange(m, s.Addr)
		if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
			return false
		}
	}
	return true
}

// Transfer reads zone's records by AXFR, signed with the server's first
// key (every key may transfer): what a test or benchmark checks the zone
// against.
func (s *Server) Transfer(zone string) ([]dns.RR, error) {
	if len(s.Keys) == 0 {
		return nil, errors.New("named: no key may transfer the zone")
	}
	k := s.Keys[0]
	name := dns.Fqdn(k.Name)
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(name, dns.Fqdn(k.Algorithm), 300, time.Now().Unix())
	tr := &dns.Transfer{TsigSecret: map[string]string{name: k.Secret}}
	ch, err := tr.In(m, s.Addr)
	if err != nil {
		return nil, fmt.Errorf("axfr %s: %w", zone, err)
	}
	var out []dns.RR
	for env := range ch {
		if env.Error != nil {
			return nil, fmt.Errorf("axfr %s: %w", zone, env.Error)
		}
		out = append(out, env.RR...)
	}
	return out, nil
}

// Log returns what named printed so far (for failure messages).
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// Stop stops named, keeping its directory so that Restart can bring the
// same zones back; Close removes everything.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Restart starts named again on the same address with the zones as they
// were when it stopped.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	return s.start(ctx)
}

// Close stops named and removes its directory.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.Dir)
}
