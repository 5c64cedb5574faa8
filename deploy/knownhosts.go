package deploy

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ErrHostKeyChanged: the host presented a key other than the one trusted
// for it. The connection is refused: either the host was re-created at the
// same address (remove the line the message names) or someone is in the
// middle.
var ErrHostKeyChanged = errors.New("host key changed")

// trustStore is a trust-on-first-use store of host keys in OpenSSH's
// known_hosts format: a host's first key is recorded, a later different key
// is refused. One store is shared by VMs deployed in parallel.
type trustStore struct {
	path string
	// probe is a key no host has, used to ask the file which keys it
	// holds for a host.
	probe ssh.PublicKey

	mu sync.Mutex
}

func newTrustStore(path string) (*trustStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("known hosts: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("known hosts: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("known hosts: %w", err)
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return &trustStore{path: path, probe: probe}, nil
}

// known returns the keys recorded for addr (host:port).
func (s *trustStore) known(addr string) ([]knownhosts.KnownKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cb, err := knownhosts.New(s.path)
	if err != nil {
		return nil, fmt.Errorf("known hosts: %w", err)
	}
	var ke *knownhosts.KeyError
	if err := cb(addr, tcpAddr(addr), s.probe); errors.As(err, &ke) {
		return ke.Want, nil
	}
	return nil, nil
}

// hostKeyAlgorithms are the algorithms to ask addr for, so that a host
// known by its ed25519 key is not asked for its RSA key and then refused
// as changed. Empty (the library's default) for an unknown host.
func (s *trustStore) hostKeyAlgorithms(addr string) ([]string, error) {
	keys, err := s.known(addr)
	if err != nil {
		return nil, err
	}
	var algs []string
	for _, k := range keys {
		if k.Key.Type() == ssh.KeyAlgoRSA {
			algs = append(algs, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
		}
		algs = append(algs, k.Key.Type())
	}
	return algs, nil
}

// callback verifies host keys against the store, recording a host's first
// key. log is told of every key trusted for the first time.
func (s *trustStore) callback(log *slog.Logger) ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		cb, err := knownhosts.New(s.path)
		if err != nil {
			return fmt.Errorf("known hosts: %w", err)
		}
		err = cb(hostname, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &re):
			return fmt.Errorf("%w: %s presents a key revoked at %s:%d", ErrHostKeyChanged, hostname, re.Revoked.Filename, re.Revoked.Line)
		case errors.As(err, &ke) && len(ke.Want) == 0:
			return s.record(hostname, key, log)
		case errors.As(err, &ke):
			w := ke.Want[0]
			return fmt.Errorf("%w: %s presents %s key %s, but %s:%d trusts %s key %s for it; if the VM was re-created at this address, delete that line",
				ErrHostKeyChanged, hostname, key.Type(), ssh.FingerprintSHA256(key), w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key))
		}
		return fmt.Errorf("known hosts: %w", err)
	}
}

// record appends hostname's key; the caller holds s.mu.
func (s *trustStore) record(hostname string, key ssh.PublicKey, log *slog.Logger) error {
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("known hosts: %w", err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key) + "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("known hosts: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("known hosts: %w", err)
	}
	log.Info("trusting the host key seen first", "host", hostname, "type", key.Type(), "fingerprint", ssh.FingerprintSHA256(key), "file", s.path)
	return nil
}

// forget removes the lines of the given addresses (at any port); lines
// naming other hosts too keep those. The file is replaced atomically.
func (s *trustStore) forget(addrs []string) (int, error) {
	drop := map[string]bool{}
	for _, a := range addrs {
		drop[a] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(s.path)
	if err != nil {
		return 0, fmt.Errorf("known hosts: %w", err)
	}
	var out []string
	removed := 0
	for _, line := range strings.SplitAfter(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], "@") {
			out = append(out, line)
			continue
		}
		var keep []string
		for _, h := range strings.Split(fields[0], ",") {
			if !drop[hostOf(h)] {
				keep = append(keep, h)
			}
		}
		switch {
		case len(keep) == 0:
			removed++
		case len(keep) < len(strings.Split(fields[0], ",")):
			removed++
			out = append(out, strings.Join(keep, ",")+" "+strings.Join(fields[1:], " ")+"\n")
		default:
			out = append(out, line)
		}
	}
	if removed == 0 {
		return 0, nil
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(out, "")), 0o600); err != nil {
		return 0, fmt.Errorf("known hosts: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return 0, fmt.Errorf("known hosts: %w", err)
	}
	return removed, nil
}

// hostOf is the address of a known_hosts host entry: "[h]:port" or "h".
func hostOf(entry string) string {
	if strings.HasPrefix(entry, "[") {
		if h, _, err := net.SplitHostPort(entry); err == nil {
			return strings.Trim(h, "[]")
		}
	}
	return entry
}

// acceptAny is ssh_host_key_check: False, an explicit opt-out: every key
// is accepted and logged, none recorded.
func acceptAny(log *slog.Logger) ssh.HostKeyCallback {
	return func(hostname string, _ net.Addr, key ssh.PublicKey) error {
		log.Warn("host key not checked (ssh_host_key_check: False)", "host", hostname, "type", key.Type(), "fingerprint", ssh.FingerprintSHA256(key))
		return nil
	}
}

// tcpAddr is addr as the net.Addr knownhosts wants; it reads only the
// string form.
func tcpAddr(addr string) net.Addr {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return &net.TCPAddr{}
	}
	return a
}
