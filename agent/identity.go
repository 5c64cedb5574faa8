package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
)

// Key file names in pki_dir, after Salt's minion.pem/minion.pub and
// minion_master.pub.
const (
	keyName       = "minion"
	masterKeyFile = "minion_master.pub"
)

// Identity is the agent's key pair, made on first start.
func Identity(pkiDir string) (curve.KeyPair, error) {
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return curve.KeyPair{}, fmt.Errorf("pki_dir: %w", err)
	}
	return curve.LoadOrCreateKeyPair(pkiDir, keyName)
}

// ErrMasterKey reports a master whose key is not the one this agent trusts.
var ErrMasterKey = errors.New("master key mismatch")

// masterKey returns the key of the master at addr the agent may trust: the
// one recorded in pki_dir (trust on first use) or, the first time, the one
// the master presents, checked against master_finger when it is set and
// recorded. A presented key that differs from the recorded one or from the
// pinned fingerprint is refused: the agent does not talk to an impostor.
func masterKey(ctx context.Context, pkiDir, addr, finger string) (curve.Key, error) {
	path := filepath.Join(pkiDir, masterKeyFile)
	b, err := os.ReadFile(path)
	recorded := err == nil
	var k curve.Key
	switch {
	case recorded:
		if k, err = curve.ParseKey(strings.TrimSpace(string(b))); err != nil {
			return k, fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if k, err = gateway.MasterKey(ctx, addr); err != nil {
			return k, err
		}
	default:
		return k, fmt.Errorf("master key: %w", err)
	}
	if got := curve.Fingerprint(k); finger != "" && got != finger {
		holder := "the master at " + addr + " presents"
		if recorded {
			holder = path + " holds"
		}
		return curve.Key{}, fmt.Errorf("%w: %s a key with fingerprint %s, not master_finger %s; refusing to connect "+
			"(if the master's key was replaced on purpose, remove %s)", ErrMasterKey, holder, got, finger, path)
	}
	if recorded {
		return k, nil
	}
	return recordMasterKey(path, addr, k)
}

// recordMu serializes the recording of the master's key: with several
// masters the agent asks them all at once, and the first key recorded is
// the one the others must hold.
var recordMu sync.Mutex

// recordMasterKey records k, presented by the master at addr, in path,
// unless a key was recorded meanwhile, which k must then be.
func recordMasterKey(path, addr string, k curve.Key) (curve.Key, error) {
	recordMu.Lock()
	defer recordMu.Unlock()
	if b, err := os.ReadFile(path); err == nil {
		got, err := curve.ParseKey(strings.TrimSpace(string(b)))
		if err != nil {
			return curve.Key{}, fmt.Errorf("%s: %w", path, err)
		}
		if got != k {
			return curve.Key{}, fmt.Errorf("%w: the master at %s presents a key with fingerprint %s, not the one just recorded in %s (%s); refusing to connect",
				ErrMasterKey, addr, curve.Fingerprint(k), path, curve.Fingerprint(got))
		}
		return k, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+masterKeyFile+"-*")
	if err != nil {
		return curve.Key{}, fmt.Errorf("master key: %w", err)
	}
	_, err = f.WriteString(k.String() + "\n")
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return curve.Key{}, fmt.Errorf("master key: %w", err)
	}
	return k, nil
}
