// Package ssh is Salt's ssh execution module's authorized_keys and
// known_hosts functions, which the ssh_auth and ssh_known_hosts states are
// built on: the same files, read and written line for line as Salt's
// module does, with its return words ("new", "replace", "no change",
// "fail", "Key removed"…) so that the states' comments are Salt's.
//
// known_hosts is handled by OpenSSH's own tools, as Salt does: ssh-keygen
// -F finds a host's lines (hashed or not), -R removes them and -H hashes
// the file, and ssh-keyscan asks a server for its keys. Fingerprints are
// Salt's: the hex digest of the key's bytes, colon-separated (sha256
// unless fingerprint_hash_type says otherwise), not ssh-keygen's SHA256:
// base64 form.
package ssh

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"strings"

	"github.com/brinehq/brine/modules/user"
)

// ErrNoUser is a user not in /etc/passwd.
var ErrNoUser = errors.New("does not exist")

// account is what Salt's user.info gives these functions: the home
// directory and the ids files are chowned to.
type account struct {
	name     string
	home     string
	uid, gid int
}

// passwdRoot is the root whose /etc/passwd users are read from: the
// machine's; tests point it at a directory of their own so that keys of
// users other than root can be written without adding users.
var passwdRoot = ""

// lookupUser reads name from /etc/passwd (Salt's user.info); ok is false
// when there is no such user.
func lookupUser(name string) (account, bool, error) {
	users, err := user.Users(passwdRoot)
	if err != nil {
		return account{}, false, fmt.Errorf("user.info %s: %w", name, err)
	}
	for _, u := range users {
		if u.Name == name {
			return account{name: u.Name, home: u.Home, uid: u.UID, gid: u.GID}, true, nil
		}
	}
	return account{}, false, nil
}

var encAliases = map[string]string{
	"r": "ssh-rsa", "rsa": "ssh-rsa", "ssh-rsa": "ssh-rsa",
	"d": "ssh-dss", "dsa": "ssh-dss", "dss": "ssh-dss", "ssh-dss": "ssh-dss",
	"e": "ecdsa-sha2-nistp256", "ecdsa": "ecdsa-sha2-nistp256",
	"ecdsa-sha2-nistp521": "ecdsa-sha2-nistp521", "ecdsa-sha2-nistp384": "ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp256": "ecdsa-sha2-nistp256",
	"ed25519":             "ssh-ed25519", "ssh-ed25519": "ssh-ed25519",
}

var encAllowed = []string{
	"rsa-sha2-512", "rsa-sha2-256", "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com",
	"ssh-rsa-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
	"ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521-cert-v01@openssh.com",
	"sk-ecdsa-sha2-nistp256@openssh.com", "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
	"ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
}

// RefineEnc is Salt's _refine_enc: the key type an enc names (rsa,
// ed25519, e…), an error for one it does not know.
func RefineEnc(enc string) (string, error) {
	if e, ok := encAliases[enc]; ok {
		return e, nil
	}
	for _, a := range encAllowed {
		if a == enc {
			return enc, nil
		}
	}
	//lint:ignore ST1005 Salt's words.
	return "", fmt.Errorf("Incorrect encryption key type '%s'.", enc)
}

var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
	"sha3_224": func() hash.Hash { return sha3.New224() }, "sha3_256": func() hash.Hash { return sha3.New256() },
	"sha3_384": func() hash.Hash { return sha3.New384() }, "sha3_512": func() hash.Hash { return sha3.New512() },
}

// Fingerprint is Salt's _fingerprint: the colon-separated hex digest of
// the key's decoded bytes with hashType (sha256 when ""); ok is false for
// a key that is not base64, an error for a hash type Salt's hashlib has
// not.
func Fingerprint(key, hashType string) (string, bool, error) {
	ht := strings.ToLower(hashType)
	if ht == "" {
		ht = "sha256"
	}
	newHash, found := hashes[ht]
	if !found {
		//lint:ignore ST1005 Salt's words.
		return "", false, fmt.Errorf("The fingerprint_hash_type %s is not supported.", ht)
	}
	raw, ok := b64decode(key)
	if !ok {
		return "", false, nil
	}
	h := newHash()
	h.Write(raw)
	sum := hex.EncodeToString(h.Sum(nil))
	parts := make([]string, 0, len(sum)/2)
	for i := 0; i < len(sum); i += 2 {
		parts = append(parts, sum[i:i+2])
	}
	return strings.Join(parts, ":"), true, nil
}

// b64decode is Python's base64.b64decode(s, validate=True): the alphabet
// and padding only (Go's decoder would skip newlines).
func b64decode(s string) ([]byte, bool) {
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return nil, false
	}
	for _, c := range body {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return raw, true
}

// run runs a command as Salt's cmd.run does for this module: stderr into
// stdout, trailing whitespace stripped, its exit status ignored.
func run(ctx context.Context, name string, args ...string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		//lint:ignore ST1005 Salt's words.
		return "", fmt.Errorf("The '%s' binary was not found in $PATH.", name)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return strings.TrimRight(out.String(), " \t\r\n"), nil
}

// restorecon gives path its SELinux context when restorecon is installed,
// as Salt does after creating a key file or its directory.
func restorecon(ctx context.Context, path string) {
	if rcon, err := exec.LookPath("restorecon"); err == nil {
		_ = exec.CommandContext(ctx, rcon, path).Run()
	}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
