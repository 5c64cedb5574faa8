package saltfleet

import (
	"crypto/rsa"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/brinehq/brine/bench/internal/runner"
	"github.com/brinehq/brine/saltproto"
)

// KeyPair is a minion's RSA key and its public key as the minion sends it
// (minion.pub's text, PyCryptodome's PEM).
type KeyPair struct {
	Key *rsa.PrivateKey
	Pub string
}

// DefaultKeyDir is where Keys keeps the fleet's keys between runs: a
// thousand 2048-bit RSA keys take minutes to generate on two cores, none
// of it what a benchmark measures, and a minion's key pair is as good the
// second time (a fresh master has never seen it).
func DefaultKeyDir(bits int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("brine-bench-salt-minion-keys-%d", bits))
}

// Keys loads n key pairs of bits from dir, minion-0000.pem/.pub on, as
// salt.crypt.gen_keys writes them, generating those missing (all cores
// at once). Pair i is always the same key, whichever minion id uses it.
func Keys(dir string, n, bits int) ([]KeyPair, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	out := make([]KeyPair, n)
	err := runner.Each(runtime.NumCPU(), n, func(i int) error {
		key, pub, err := saltproto.LoadOrCreateKeyPair(dir, fmt.Sprintf("minion-%04d", i), bits)
		if err == nil && key.N.BitLen() != bits {
			err = fmt.Errorf("%s holds a key of %d bits, want %d", dir, key.N.BitLen(), bits)
		}
		if err != nil {
			return fmt.Errorf("minion key %d: %w", i, err)
		}
		out[i] = KeyPair{Key: key, Pub: pub}
		return nil
	})
	return out, err
}
