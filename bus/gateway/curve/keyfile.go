package curve

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/internal/atomicfile"
)

// Key files: <name>.key holds the secret key and <name>.pub the public key,
// each as 40 characters of Z85 and a newline (what libzmq's tools print).

const (
	secretSuffix = ".key"
	publicSuffix = ".pub"
	// maxKeyFile bounds what is read from a key file: 40 characters, a
	// newline and room for a CR or stray blanks.
	maxKeyFile = 64
)

// ErrKeyFileMode reports a secret key file that group or others may access.
var ErrKeyFileMode = errors.New("secret key file is accessible by group or others")

// SecretKeyPath and PublicKeyPath return where SaveKeyPair writes the key
// pair called name in dir.
func SecretKeyPath(dir, name string) string { return filepath.Join(dir, name+secretSuffix) }

// PublicKeyPath: see SecretKeyPath.
func PublicKeyPath(dir, name string) string { return filepath.Join(dir, name+publicSuffix) }

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("curve: invalid key name %q", name)
	}
	return nil
}

// SaveKeyPair writes kp as <name>.key (mode 0600) and <name>.pub (mode 0644)
// in dir. The secret key file is written aside, synced and then linked into
// place, so that no reader ever sees it partly written or with a looser mode;
// an existing <name>.key is never replaced (the error matches fs.ErrExist).
// The public key file is replaced if it exists.
func SaveKeyPair(dir, name string, kp KeyPair) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("curve: key directory: %w", err)
	}
	if err := writeAside(dir, name+secretSuffix, kp.Secret, 0o600, false); err != nil {
		return err
	}
	return writeAside(dir, name+publicSuffix, kp.Public, 0o644, true)
}

// writeAside writes k to a temporary file in dir and moves it to file:
// rename (which replaces) when replace is set, link (which never does)
// otherwise.
func writeAside(dir, file string, k Key, mode fs.FileMode, replace bool) (err error) {
	path := filepath.Join(dir, file)
	tmp, err := os.CreateTemp(dir, "."+file+".*")
	if err != nil {
		return fmt.Errorf("curve: writing %s: %w", path, err)
	}
	defer func() {
		if rerr := os.Remove(tmp.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("curve: removing %s: %w", tmp.Name(), rerr)
		}
	}()
	_, err = tmp.WriteString(k.String() + "\n")
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("curve: writing %s: %w", path, err)
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("curve: writing %s: %w", path, err)
	}
	return atomicfile.SyncDir(dir)
}

// LoadKeyPair reads the key pair called name from dir. Like ssh, it refuses
// a secret key file that group or others may read, write or execute (the
// error names the file and its mode and matches ErrKeyFileMode). The public
// key is computed from the secret key; <name>.pub, when present, must hold
// the same key.
func LoadKeyPair(dir, name string) (KeyPair, error) {
	if err := checkName(name); err != nil {
		return KeyPair{}, err
	}
	path := SecretKeyPath(dir, name)
	// Stat first, so that a FIFO in the key's place cannot block Open.
	if fi, err := os.Stat(path); err != nil {
		return KeyPair{}, fmt.Errorf("curve: %w", err)
	} else if !fi.Mode().IsRegular() {
		return KeyPair{}, fmt.Errorf("curve: %s is not a regular file (mode %s)", path, fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return KeyPair{}, fmt.Errorf("curve: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return KeyPair{}, fmt.Errorf("curve: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return KeyPair{}, fmt.Errorf("curve: %s is not a regular file (mode %s)", path, fi.Mode())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return KeyPair{}, fmt.Errorf("curve: %w: %s has mode %04o, want 0600 or stricter (chmod 600 %s)", ErrKeyFileMode, path, perm, path)
	}
	var kp KeyPair
	if kp.Secret, err = readKey(f, path); err != nil {
		return KeyPair{}, err
	}
	kp.Public = publicKey(kp.Secret)

	pubPath := PublicKeyPath(dir, name)
	pf, err := os.Open(pubPath)
	if errors.Is(err, fs.ErrNotExist) {
		return kp, nil
	}
	if err != nil {
		return KeyPair{}, fmt.Errorf("curve: %w", err)
	}
	defer pf.Close()
	pub, err := readKey(pf, pubPath)
	if err != nil {
		return KeyPair{}, err
	}
	if pub != kp.Public {
		return KeyPair{}, fmt.Errorf("curve: %s holds %s, but the public key of %s is %s", pubPath, pub, path, kp.Public)
	}
	return kp, nil
}

func readKey(r io.Reader, path string) (Key, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxKeyFile+1))
	if err != nil {
		return Key{}, fmt.Errorf("curve: reading %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return Key{}, fmt.Errorf("curve: %s: %w: over %d bytes", path, ErrKeyText, maxKeyFile)
	}
	k, err := ParseKey(strings.TrimSpace(string(b)))
	if err != nil {
		return Key{}, fmt.Errorf("curve: %s: %w", path, err)
	}
	return k, nil
}

// LoadOrCreateKeyPair loads the key pair called name from dir, or generates
// and saves one when <name>.key does not exist. A missing <name>.pub next to
// an existing secret key is written again. When two processes create the
// pair at once, both end up with the one that was linked first.
func LoadOrCreateKeyPair(dir, name string) (KeyPair, error) {
	kp, err := LoadKeyPair(dir, name)
	if err == nil {
		if _, serr := os.Stat(PublicKeyPath(dir, name)); errors.Is(serr, fs.ErrNotExist) {
			if err := writeAside(dir, name+publicSuffix, kp.Public, 0o644, true); err != nil {
				return KeyPair{}, err
			}
		}
		return kp, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return KeyPair{}, err
	}
	kp, err = GenerateKeyPair()
	if err != nil {
		return KeyPair{}, err
	}
	err = SaveKeyPair(dir, name, kp)
	if errors.Is(err, fs.ErrExist) {
		return LoadKeyPair(dir, name)
	}
	if err != nil {
		return KeyPair{}, err
	}
	return kp, nil
}
