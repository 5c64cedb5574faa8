package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	if b, err := os.ReadFile(path); err == nil {
		k, err := curve.ParseKey(strings.TrimSpace(string(b)))
		if err != nil {
			return curve.Key{}, fmt.Errorf("%s: %w", path, err)
		}
		if finger != "" && curve.Fingerprint(k) != NormalizeFinger(finger) {
			return curve.Key{}, fmt.Errorf("%w: %s holds a key with fingerprint %s, but master_finger is %s; "+
				"remove the file if the master's key was replaced on purpose", ErrMasterKey, path, curve.Fingerprint(k), NormalizeFinger(finger))
		}
		return k, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return curve.Key{}, fmt.Errorf("master key: %w", err)
	}
	k, err := gateway.MasterKey(ctx, addr)
	if err != nil {
		return curve.Key{}, err
	}
	if finger != "" && curve.Fingerprint(k) != NormalizeFinger(finger) {
		return curve.Key{}, fmt.Errorf("%w: the master at %s presents a key with fingerprint %s, not master_finger %s: refusing to connect",
			ErrMasterKey, addr, curve.Fingerprint(k), NormalizeFinger(finger))
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(k.String()+"\n"), 0o644); err != nil {
		return curve.Key{}, fmt.Errorf("master key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return curve.Key{}, fmt.Errorf("master key: %w", err)
	}
	return k, nil
}
