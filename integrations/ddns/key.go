package ddns

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// ErrKey: a TSIG key could not be found or read.
var ErrKey = errors.New("tsig key")

// DefaultAlgorithm signs updates when neither the call, the configuration
// nor a BIND key file names an algorithm. Salt's runner defaults to
// hmac-md5; brine to SHA-256, as tsig-keygen does.
const DefaultAlgorithm = "hmac-sha256"

// algorithms maps the names operators write (Salt's, BIND's, any case, with
// or without a trailing dot) to the wire name.
var algorithms = map[string]string{
	"hmac-md5": dns.HmacMD5, "hmac-md5.sig-alg.reg.int": dns.HmacMD5,
	"hmac-sha1": dns.HmacSHA1, "hmac-sha224": dns.HmacSHA224, "hmac-sha256": dns.HmacSHA256,
	"hmac-sha384": dns.HmacSHA384, "hmac-sha512": dns.HmacSHA512,
}

// Algorithm returns the wire name of a TSIG algorithm.
func Algorithm(name string) (string, error) {
	a, ok := algorithms[strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")]
	if !ok {
		return "", fmt.Errorf("%w: algorithm %q: want hmac-md5, hmac-sha1, hmac-sha224, hmac-sha256, hmac-sha384 or hmac-sha512", ErrKey, name)
	}
	return a, nil
}

// Key is a TSIG key. It signs and verifies messages itself (miekg/dns v1
// dropped hmac-md5, which Salt users still have), and its secret never
// prints: fmt, slog and JSON see the name and algorithm only.
type Key struct {
	// Name is the key name as a domain name (trailing dot).
	Name string
	// Algorithm is the wire name, e.g. "hmac-sha256.".
	Algorithm string
	secret    []byte
}

// NewKey builds a key from its name, algorithm and base64 secret.
func NewKey(name, algorithm, secret string) (*Key, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: no key name", ErrKey)
	}
	alg, err := Algorithm(algorithm)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(secret))
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("%w: %s: the secret is not base64", ErrKey, name)
	}
	return &Key{Name: dns.CanonicalName(name), Algorithm: alg, secret: raw}, nil
}

// String names the key without its secret.
func (k *Key) String() string {
	return strings.TrimSuffix(k.Name, ".") + " (" + strings.TrimSuffix(k.Algorithm, ".") + ")"
}

// MarshalJSON writes the name and algorithm only.
func (k *Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"name": k.Name, "algorithm": k.Algorithm})
}

// Generate implements dns.TsigProvider.
func (k *Key) Generate(msg []byte, t *dns.TSIG) ([]byte, error) {
	if dns.CanonicalName(t.Hdr.Name) != k.Name {
		return nil, dns.ErrSecret
	}
	var h func() hash.Hash
	switch dns.CanonicalName(t.Algorithm) {
	case dns.HmacMD5:
		h = md5.New
	case dns.HmacSHA1:
		h = sha1.New
	case dns.HmacSHA224:
		h = sha256.New224
	case dns.HmacSHA256:
		h = sha256.New
	case dns.HmacSHA384:
		h = sha512.New384
	case dns.HmacSHA512:
		h = sha512.New
	default:
		return nil, dns.ErrKeyAlg
	}
	m := hmac.New(h, k.secret)
	m.Write(msg)
	return m.Sum(nil), nil
}

// Verify implements dns.TsigProvider.
func (k *Key) Verify(msg []byte, t *dns.TSIG) error {
	b, err := k.Generate(msg, t)
	if err != nil {
		return err
	}
	mac, err := hex.DecodeString(t.MAC)
	if err != nil {
		return err
	}
	if !hmac.Equal(b, mac) {
		return dns.ErrSig
	}
	return nil
}

// bindKey matches one `key "name" { algorithm X; secret "Y"; };` clause.
var bindKey = regexp.MustCompile(`(?s)key\s+"?([^"\s{]+)"?\s*\{(.*?)\}\s*;`)

var (
	bindAlgorithm = regexp.MustCompile(`algorithm\s+"?([\w.-]+)"?\s*;`)
	bindSecret    = regexp.MustCompile(`secret\s+"([^"]+)"\s*;`)
)

// LoadKeyFile reads a key file in either format operators have: Salt's JSON
// keyring (`{"keyname.": "base64secret"}`) or BIND's `key "name" {
// algorithm …; secret "…"; };` (as tsig-keygen writes). keyname picks a key
// when the file holds several; algorithm applies to keyring keys (a BIND
// file names its own, and a different explicit algorithm is an error).
func LoadKeyFile(path, keyname, algorithm string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: keyfile: %w", ErrKey, err)
	}
	text := strings.TrimSpace(string(b))
	if strings.HasPrefix(text, "{") {
		var ring map[string]string
		if err := json.Unmarshal(b, &ring); err != nil {
			return nil, fmt.Errorf("%w: keyfile %s: not a JSON keyring {\"name.\": \"secret\"}: %w", ErrKey, path, err)
		}
		name, secret, err := pick(path, keyname, ring)
		if err != nil {
			return nil, err
		}
		if algorithm == "" {
			algorithm = DefaultAlgorithm
		}
		k, err := NewKey(name, algorithm, secret)
		if err != nil {
			return nil, fmt.Errorf("keyfile %s: %w", path, err)
		}
		return k, nil
	}
	clauses := bindKey.FindAllStringSubmatch(text, -1)
	if len(clauses) == 0 {
		return nil, fmt.Errorf("%w: keyfile %s: neither a JSON keyring nor a BIND key file (key \"name\" { algorithm …; secret \"…\"; };)", ErrKey, path)
	}
	secrets, algs := map[string]string{}, map[string]string{}
	for _, c := range clauses {
		s := bindSecret.FindStringSubmatch(c[2])
		a := bindAlgorithm.FindStringSubmatch(c[2])
		if s == nil || a == nil {
			return nil, fmt.Errorf("%w: keyfile %s: key %q lacks an algorithm or a secret", ErrKey, path, c[1])
		}
		secrets[c[1]], algs[c[1]] = s[1], a[1]
	}
	name, secret, err := pick(path, keyname, secrets)
	if err != nil {
		return nil, err
	}
	k, err := NewKey(name, algs[name], secret)
	if err != nil {
		return nil, fmt.Errorf("keyfile %s: %w", path, err)
	}
	if algorithm != "" {
		want, err := Algorithm(algorithm)
		if err != nil {
			return nil, err
		}
		if want != k.Algorithm {
			return nil, fmt.Errorf("%w: keyfile %s: key %s is %s, but keyalgorithm says %s", ErrKey, path, name, algs[name], algorithm)
		}
	}
	return k, nil
}

// pick chooses the key called keyname (with or without a trailing dot), or
// the only key when no name is given.
func pick(path, keyname string, keys map[string]string) (string, string, error) {
	if keyname == "" {
		if len(keys) == 1 {
			for n, s := range keys {
				return n, s, nil
			}
		}
		names := make([]string, 0, len(keys))
		for n := range keys {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", "", fmt.Errorf("%w: keyfile %s holds %d keys (%s): set keyname", ErrKey, path, len(keys), strings.Join(names, ", "))
	}
	for n, s := range keys {
		if dns.CanonicalName(n) == dns.CanonicalName(keyname) {
			return n, s, nil
		}
	}
	return "", "", fmt.Errorf("%w: keyfile %s has no key %q", ErrKey, path, keyname)
}
