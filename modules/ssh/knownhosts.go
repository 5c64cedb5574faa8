package ssh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// DefaultPort is ssh's port, which host names are written without.
const DefaultPort = 22

// Fail is Salt's {status: error, error: msg} return.
func Fail(msg string) map[string]any { return map[string]any{"status": "error", "error": msg} }

// KnownHostsFile is Salt's _get_known_hosts_file: config (default
// .ssh/known_hosts under user's home, /etc/ssh/ssh_known_hosts without a
// user) made absolute; a Salt error return when it cannot be.
func KnownHostsFile(config, user string) (string, map[string]any, error) {
	if config == "" {
		config = "/etc/ssh/ssh_known_hosts"
		if user != "" {
			config = ".ssh/known_hosts"
		}
	}
	if filepath.IsAbs(config) {
		return config, nil, nil
	}
	if user == "" {
		return "", Fail("Cannot determine absolute path to file."), nil
	}
	acct, ok, err := lookupUser(user)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return "", Fail(fmt.Sprintf("User %s does not exist", user)), nil
	}
	return filepath.Join(acct.home, config), nil, nil
}

// noPort is Salt's `not port or port == 22` (a port given as the
// string "22" is not the default to Salt).
func noPort(port any) bool {
	switch p := port.(type) {
	case nil:
		return true
	case int64:
		return p == 0 || p == DefaultPort
	case int:
		return p == 0 || p == DefaultPort
	case string:
		return p == ""
	}
	return false
}

// sshHostname is Salt's _hostname_and_port_to_ssh_hostname.
func sshHostname(hostname string, port any) string {
	if noPort(port) {
		return hostname
	}
	return "[" + hostname + "]:" + py.Str(port)
}

// parseOpenSSH is Salt's _parse_openssh_output: the "host enc key" lines
// of ssh-keygen -F or ssh-keyscan whose key is base64.
func parseOpenSSH(out, hashType string) ([]any, error) {
	var entries []any
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		fp, ok, err := Fingerprint(f[2], hashType)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		entries = append(entries, map[string]any{"hostname": f[0], "key": f[2], "enc": f[1], "fingerprint": fp})
	}
	return entries, nil
}

// GetKnownHostEntries is Salt's get_known_host_entries: the file's
// entries for hostname (ssh-keygen -F), nil when there are none, or a
// Salt error return.
func GetKnownHostEntries(ctx context.Context, user, hostname, config string, port any, hashType string) ([]any, map[string]any, error) {
	full, fail, err := KnownHostsFile(config, user)
	if err != nil || fail != nil {
		return nil, fail, err
	}
	out, err := run(ctx, "ssh-keygen", "-F", sshHostname(hostname, port), "-f", full)
	if err != nil {
		return nil, nil, err
	}
	entries, err := parseOpenSSH(out, hashType)
	return entries, nil, err
}

// RecvKnownHostEntries is Salt's recv_known_host_entries: the host's
// keys as ssh-keyscan reads them (up to five tries), nil when none came.
func RecvKnownHostEntries(ctx context.Context, hostname string, enc, port any, hash bool, timeout int64, hashType string) ([]any, error) {
	args := []string{}
	if !noPort(port) {
		args = append(args, "-p", py.Str(port))
	}
	if e, ok := enc.(string); ok && e != "" {
		args = append(args, "-t", e)
	}
	if hash {
		args = append(args, "-H")
	}
	args = append(args, "-T", strconv.FormatInt(timeout, 10), hostname)
	var out string
	for attempt := 0; attempt < 5 && out == ""; attempt++ {
		var err error
		if out, err = run(ctx, "ssh-keyscan", args...); err != nil {
			return nil, err
		}
	}
	return parseOpenSSH(out, hashType)
}

func column(entries []any, key string) []string {
	var out []string
	for _, e := range entries {
		out = append(out, py.Str(e.(map[string]any)[key]))
	}
	return out
}

// CheckKnownHost is Salt's check_known_host: "add" when the file has no
// entry for hostname, "update" when key (or fingerprint) is not among
// them, else "exists".
func CheckKnownHost(ctx context.Context, user, hostname, key, fingerprint, config string, port any, hashType string) (any, error) {
	if hostname == "" {
		return Fail("hostname argument required"), nil
	}
	entries, fail, err := GetKnownHostEntries(ctx, user, hostname, config, port, hashType)
	if err != nil {
		return nil, err
	}
	if fail != nil {
		// Salt's reads the error return as entries and raises.
		return nil, errors.New(Str(fail["error"]))
	}
	switch {
	case len(entries) == 0:
		return "add", nil
	case key != "" && !slices.Contains(column(entries, "key"), key):
		return "update", nil
	case key == "" && fingerprint != "" && !slices.Contains(column(entries, "fingerprint"), fingerprint):
		return "update", nil
	}
	return "exists", nil
}

// RmKnownHost is Salt's rm_known_host: ssh-keygen -R, whose output is the
// return's comment.
func RmKnownHost(ctx context.Context, user, hostname, config string, port any) (map[string]any, error) {
	if hostname == "" {
		return Fail("hostname argument required"), nil
	}
	full, fail, err := KnownHostsFile(config, user)
	if err != nil || fail != nil {
		return fail, err
	}
	if !isFile(full) {
		return Fail(fmt.Sprintf("Known hosts file %s does not exist", full)), nil
	}
	out, err := run(ctx, "ssh-keygen", "-R", sshHostname(hostname, port), "-f", full)
	if err != nil {
		return nil, err
	}
	if err := chownTo(full, user); err != nil {
		return nil, err
	}
	return map[string]any{"status": "removed", "comment": out}, nil
}

// chownTo gives path to user when the agent runs as root (ssh-keygen
// writes a new file).
func chownTo(path, user string) error {
	if os.Geteuid() != 0 || user == "" {
		return nil
	}
	acct, ok, err := lookupUser(user)
	if err != nil || !ok {
		return err
	}
	if err := os.Chown(path, acct.uid, acct.gid); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return nil
}

// HashKnownHosts is Salt's hash_known_hosts: ssh-keygen -H on the file,
// its mode kept (the original is left as <file>.old, as ssh-keygen does).
func HashKnownHosts(ctx context.Context, user, config string) (map[string]any, error) {
	full, fail, err := KnownHostsFile(config, user)
	if err != nil || fail != nil {
		return fail, err
	}
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() {
		return Fail(fmt.Sprintf("Known hosts file %s does not exist", full)), nil
	}
	out, err := run(ctx, "ssh-keygen", "-H", "-f", full)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(full, st.Mode().Perm()); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", full, err)
	}
	if err := chownTo(full, user); err != nil {
		return nil, err
	}
	return map[string]any{"status": "updated", "comment": out}, nil
}

// KnownHost is what set_known_host is asked: Salt's arguments.
type KnownHost struct {
	User, Hostname, Fingerprint, Key string
	// Port and Enc are as given (nil when not): Salt writes a missing
	// enc as "None" and compares the port as given.
	Port, Enc any
	Config    string
	Hash      bool
	Timeout   int64
	HashType  string
}

// SetKnownHost is Salt's set_known_host: the host's key (given, or read
// with ssh-keyscan and checked against fingerprint) written to the file
// in place of its entries of the same type, the file hashed when asked.
// The return is Salt's: {status: exists, keys}, {status: updated, old,
// new} or {status: error, error}.
func SetKnownHost(ctx context.Context, k KnownHost) (map[string]any, error) {
	if k.Hostname == "" {
		return Fail("hostname argument required"), nil
	}
	if k.Port != nil && !is22(k.Port) && k.Hash {
		return Fail("argument port can not be used in conjunction with argument hash_known_hosts"), nil
	}
	stored, fail, err := GetKnownHostEntries(ctx, k.User, k.Hostname, k.Config, k.Port, k.HashType)
	if err != nil {
		return nil, err
	}
	if fail != nil {
		return fail, nil
	}
	storedKeys := column(stored, "key")
	update, check := false, false
	switch {
	case len(stored) == 0:
		update = true
	case k.Fingerprint != "" && !slices.Contains(column(stored, "fingerprint"), k.Fingerprint):
		update = true
	case k.Key != "" && !slices.Contains(storedKeys, k.Key):
		update = true
	case k.Key == "" && k.Fingerprint == "":
		check = true
	}
	if !update && !check {
		return map[string]any{"status": "exists", "keys": py.List(storedKeys)}, nil
	}
	var remote []any
	if k.Key == "" {
		remote, err = RecvKnownHostEntries(ctx, k.Hostname, k.Enc, k.Port, k.Hash, k.Timeout, k.HashType)
		if err != nil {
			return nil, err
		}
		if len(remote) == 0 {
			return Fail("Unable to receive remote host keys"), nil
		}
		if k.Fingerprint != "" && !slices.Contains(column(remote, "fingerprint"), k.Fingerprint) {
			return Fail("Remote host public keys found but none of their fingerprints match the one you have provided"), nil
		}
		if check {
			for _, key := range column(remote, "key") {
				if slices.Contains(storedKeys, key) {
					return map[string]any{"status": "exists", "keys": py.List(storedKeys)}, nil
				}
			}
		}
	}
	full, fail, err := KnownHostsFile(k.Config, k.User)
	if err != nil || fail != nil {
		return fail, err
	}
	var origMode os.FileMode
	if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
		origMode = st.Mode().Perm()
		if err := removeMatched(ctx, full, sshHostname(k.Hostname, k.Port), k.Enc); err != nil {
			return nil, err
		}
	}
	if k.Key != "" {
		remote = []any{map[string]any{"hostname": k.Hostname, "enc": k.Enc, "key": k.Key}}
	}
	var b strings.Builder
	for _, e := range remote {
		e := e.(map[string]any)
		host := py.Str(e["hostname"])
		if k.Hash || k.Port == nil || is22(k.Port) || strings.Contains(host, ":") {
			fmt.Fprintf(&b, "%s %s %s\n", host, py.Str(e["enc"]), py.Str(e["key"]))
		} else {
			e["port"] = k.Port
			fmt.Fprintf(&b, "[%s]:%s %s %s\n", host, py.Str(k.Port), py.Str(e["enc"]), py.Str(e["key"]))
		}
	}
	var acct account
	if k.User != "" {
		if acct, _, err = lookupUser(k.User); err != nil {
			return nil, err
		}
	}
	if dir := filepath.Dir(full); !isDir(dir) {
		// Salt logs a directory it cannot make and fails at the append.
		if err := os.MkdirAll(dir, 0o777); err == nil && k.User != "" {
			if err := os.Chown(dir, acct.uid, acct.gid); err != nil {
				return nil, fmt.Errorf("chown %s: %w", dir, err)
			}
			if err := os.Chmod(dir, 0o700); err != nil {
				return nil, fmt.Errorf("chmod %s: %w", dir, err)
			}
		}
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err == nil {
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		//lint:ignore ST1005 Salt's words.
		return nil, fmt.Errorf("Couldn't append to known hosts file: '%w'", err)
	}
	if os.Geteuid() == 0 && k.User != "" {
		if err := os.Chown(full, acct.uid, acct.gid); err != nil {
			return nil, fmt.Errorf("chown %s: %w", full, err)
		}
	}
	mode := origMode
	if mode == 0 {
		mode = 0o600
	}
	if err := os.Chmod(full, mode); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", full, err)
	}
	if k.Key != "" && k.Hash {
		if _, err := HashKnownHosts(ctx, k.User, full); err != nil {
			return nil, err
		}
	}
	var old any
	if stored != nil {
		old = stored
	}
	return map[string]any{"status": "updated", "old": old, "new": remote}, nil
}

// is22 is Salt's `port == 22`: a number, not the string "22".
func is22(port any) bool {
	switch p := port.(type) {
	case int64:
		return p == DefaultPort
	case int:
		return p == DefaultPort
	case float64:
		return p == DefaultPort
	}
	return false
}

// removeMatched is the first half of Salt's set_known_host update: the
// lines ssh-keygen -F finds for the host whose key type is enc ("rsa"
// when none is given, which matches no line) removed from the file in
// place.
func removeMatched(ctx context.Context, full, host string, enc any) error {
	want := "rsa"
	if e, ok := enc.(string); ok && e != "" {
		want = e
	}
	out, err := run(ctx, "ssh-keygen", "-F", host, "-f", full)
	if err != nil {
		return err
	}
	var lines []string
	if out != "" {
		lines = strings.Split(out, "\n")
	}
	var remove []int
	for i := 0; i+1 < len(lines); i += 2 {
		f := strings.Fields(lines[i])
		next := strings.Fields(lines[i+1])
		if len(f) == 0 || len(next) < 2 {
			return fmt.Errorf("ssh-keygen -F %s: unexpected output %q", host, out)
		}
		n, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			return fmt.Errorf("ssh-keygen -F %s: unexpected output %q", host, out)
		}
		if next[len(next)-2] == want {
			remove = append(remove, n)
		}
	}
	if len(remove) == 0 {
		return nil
	}
	b, err := os.ReadFile(full)
	if err != nil {
		//lint:ignore ST1005 Salt's words.
		return fmt.Errorf("Couldn't remove old entry(ies) from known hosts file: '%w'", err)
	}
	fileLines := strings.SplitAfter(string(b), "\n")
	if fileLines[len(fileLines)-1] == "" {
		fileLines = fileLines[:len(fileLines)-1]
	}
	slices.Sort(remove)
	for i := len(remove) - 1; i >= 0; i-- {
		if n := remove[i]; n >= 1 && n <= len(fileLines) {
			fileLines = slices.Delete(fileLines, n-1, n)
		}
	}
	if err := os.WriteFile(full, []byte(strings.Join(fileLines, "")), 0o666); err != nil {
		//lint:ignore ST1005 Salt's words.
		return fmt.Errorf("Couldn't remove old entry(ies) from known hosts file: '%w'", err)
	}
	return nil
}
