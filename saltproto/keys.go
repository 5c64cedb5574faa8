package saltproto

import (
	"bytes"
	"crypto"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
)

// DefaultKeySize is the master's keysize default (and the minion's).
const DefaultKeySize = 2048

// MasterKeys is salt.crypt.MasterKeys without the signing pair: the
// master's RSA key and master.pub as the file holds it (the text the
// master sends as pub_key and minions store as minion_master.pub).
type MasterKeys struct {
	Key *rsa.PrivateKey
	// Pub is master.pub's content, sent verbatim in every auth reply.
	Pub string
}

// LoadOrCreateMasterKeys loads dir/master.pem and dir/master.pub, creating
// them as salt.crypt.gen_keys does when master.pem is missing (keysize
// bits, 0400 private key), and writing master.pub from the key when only
// it is missing (MasterKeys.get_pub_str).
func LoadOrCreateMasterKeys(dir string, keysize int) (*MasterKeys, error) {
	key, pub, err := LoadOrCreateKeyPair(dir, "master", keysize)
	if err != nil {
		return nil, err
	}
	return &MasterKeys{Key: key, Pub: pub}, nil
}

// LoadOrCreateKeyPair is gen_keys plus the read that follows it, for any
// key name: "master", the signing pair master_sign_key_name ("master_sign")
// or, in tests, a minion's "minion".
func LoadOrCreateKeyPair(dir, name string, keysize int) (*rsa.PrivateKey, string, error) {
	priv := filepath.Join(dir, name+".pem")
	pubPath := filepath.Join(dir, name+".pub")
	b, err := os.ReadFile(priv)
	if errors.Is(err, fs.ErrNotExist) {
		if err := GenKeys(dir, name, keysize); err != nil {
			return nil, "", err
		}
		b, err = os.ReadFile(priv)
	}
	if err != nil {
		return nil, "", fmt.Errorf("saltproto: %w", err)
	}
	key, err := ParsePrivateKey(b)
	if err != nil {
		return nil, "", fmt.Errorf("saltproto: %s: %w", priv, err)
	}
	pb, err := os.ReadFile(pubPath)
	if errors.Is(err, fs.ErrNotExist) {
		pb = []byte(PublicKeyPEM(&key.PublicKey))
		if err := os.WriteFile(pubPath, pb, 0o644); err != nil {
			return nil, "", fmt.Errorf("saltproto: %w", err)
		}
	} else if err != nil {
		return nil, "", fmt.Errorf("saltproto: %w", err)
	}
	pub, err := ParsePublicKey(string(pb))
	if err != nil {
		return nil, "", fmt.Errorf("saltproto: %s: %w", pubPath, err)
	}
	if !pub.Equal(&key.PublicKey) {
		return nil, "", fmt.Errorf("saltproto: %s is not the public key of %s", pubPath, priv)
	}
	return key, string(pb), nil
}

// GenKeys is salt.crypt.gen_keys(dir, name, keysize): a new RSA key
// (e=65537) written as dir/name.pem (PKCS#1, mode 0400) and dir/name.pub
// (SubjectPublicKeyInfo), in PyCryptodome's PEM layout: 64-character
// lines, no newline after the END line. A name.pem already there wins, as
// in Salt, where another process may have made it first.
func GenKeys(dir, name string, keysize int) error {
	if keysize == 0 {
		keysize = DefaultKeySize
	}
	key, err := rsa.GenerateKey(rand.Reader, keysize)
	if err != nil {
		return fmt.Errorf("saltproto: generate %s key: %w", name, err)
	}
	priv := filepath.Join(dir, name+".pem")
	f, err := os.OpenFile(priv, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("saltproto: %w", err)
	}
	if _, err := f.Write(PrivateKeyPEM(key)); err != nil {
		f.Close()
		return fmt.Errorf("saltproto: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("saltproto: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pub"), []byte(PublicKeyPEM(&key.PublicKey)), 0o644); err != nil {
		return fmt.Errorf("saltproto: %w", err)
	}
	return nil
}

// pycryptodomePEM is Cryptodome.IO.PEM.encode: Go's pem.Encode but
// without the newline after the END line, so that the files are Salt's
// byte for byte.
func pycryptodomePEM(typ string, der []byte) []byte {
	return bytes.TrimSuffix(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), []byte("\n"))
}

// PrivateKeyPEM is key.exportKey("PEM"): "RSA PRIVATE KEY", PKCS#1.
func PrivateKeyPEM(key *rsa.PrivateKey) []byte {
	return pycryptodomePEM("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
}

// PublicKeyPEM is key.publickey().exportKey("PEM"): "PUBLIC KEY",
// SubjectPublicKeyInfo.
func PublicKeyPEM(pub *rsa.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		// An *rsa.PublicKey always marshals.
		panic(err)
	}
	return string(pycryptodomePEM("PUBLIC KEY", der))
}

// ParsePrivateKey reads an unencrypted RSA private key in PEM, PKCS#1
// ("RSA PRIVATE KEY", what Salt writes) or PKCS#8 ("PRIVATE KEY"). A key
// encrypted with key_pass is refused with a message saying so.
func ParsePrivateKey(b []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if _, ok := block.Headers["DEK-Info"]; ok {
		return nil, errors.New("the key is encrypted with a passphrase (key_pass), which is not supported")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("a %T, not an RSA key", k)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("a %q PEM block, not an RSA private key", block.Type)
}

// ParsePublicKey reads a public key as salt.crypt.get_rsa_pub_key does (a
// minion's "pub" in _auth, master.pub): PEM "PUBLIC KEY"
// (SubjectPublicKeyInfo, what Salt writes) or "RSA PUBLIC KEY" (PKCS#1,
// which M2Crypto-era minions may hold).
func ParsePublicKey(s string) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil {
		return nil, errors.New("bad RSA public key: no PEM block")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad RSA public key: %w", err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("bad RSA public key: a %T", k)
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad RSA public key: %w", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("bad RSA public key: a %q PEM block", block.Type)
}

// Fingerprint is salt.utils.crypt.pem_finger(path, sum_type=hashType) of
// a key file's content: the digest of the lines between the first and
// the last non-blank ones (the base64 body with its newlines), in hex
// pairs joined by colons. It is what `salt-key -F master` prints and what
// a minion's master_finger must equal; hashType is the hash_type option
// ("sha256" by default; md5, sha1, sha224, sha384, sha512 too).
func Fingerprint(pemText []byte, hashType string) (string, error) {
	var h hash.Hash
	switch strings.ToLower(hashType) {
	case "", "sha256":
		h = sha256.New()
	case "sha224":
		h = sha256.New224()
	case "sha384":
		h = sha512.New384()
	case "sha512":
		h = sha512.New()
	case "sha1":
		h = sha1.New()
	case "md5":
		h = md5.New()
	default:
		return "", fmt.Errorf("saltproto: unknown hash_type %q", hashType)
	}
	var lines [][]byte
	for _, l := range bytes.SplitAfter(pemText, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	if len(lines) > 2 {
		for _, l := range lines[1 : len(lines)-1] {
			h.Write(bytes.ReplaceAll(l, []byte("\r\n"), []byte("\n")))
		}
	}
	hx := hex.EncodeToString(h.Sum(nil))
	var b strings.Builder
	for i := 0; i < len(hx); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hx[i : i+2])
	}
	return b.String(), nil
}

// EncryptOAEP is PKCS1_OAEP.new(pub).encrypt(msg): RSA-OAEP with SHA-1
// and MGF1-SHA-1, no label, the padding of every RSA encryption in Salt's
// protocol (the session key to a minion, the minion's token both ways,
// the per-request pillar key).
func EncryptOAEP(pub *rsa.PublicKey, msg []byte) ([]byte, error) {
	ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, msg, nil)
	if err != nil {
		return nil, fmt.Errorf("saltproto: oaep encrypt: %w", err)
	}
	return ct, nil
}

// DecryptOAEP is PKCS1_OAEP.new(key).decrypt(ct).
func DecryptOAEP(key *rsa.PrivateKey, ct []byte) ([]byte, error) {
	pt, err := rsa.DecryptOAEP(sha1.New(), nil, key, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("saltproto: oaep decrypt: %w", err)
	}
	return pt, nil
}

// SignMessage is salt.crypt.sign_message: PKCS#1 v1.5 over SHA-1 (what
// signs the auth reply, each publish when sign_pub_messages is on, the
// pillar, and master.pub for master_sign_pubkey).
func SignMessage(key *rsa.PrivateKey, msg []byte) ([]byte, error) {
	d := sha1.Sum(msg)
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA1, d[:])
	if err != nil {
		return nil, fmt.Errorf("saltproto: sign: %w", err)
	}
	return sig, nil
}

// VerifySignature is salt.crypt.verify_signature.
func VerifySignature(pub *rsa.PublicKey, msg, sig []byte) bool {
	d := sha1.Sum(msg)
	return rsa.VerifyPKCS1v15(pub, crypto.SHA1, d[:], sig) == nil
}

// SignPubkey is the pub_sig of master_sign_pubkey when the master has its
// own signing pair: binascii.b2a_base64(sign_message(sign_key, pub)),
// newline included, as Salt sends it.
func SignPubkey(signKey *rsa.PrivateKey, pub string) ([]byte, error) {
	sig, err := SignMessage(signKey, []byte(pub))
	if err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n"), nil
}

// PrivateEncrypt is salt.crypt.private_encrypt: OpenSSL's
// RSA_private_encrypt with RSA_X931_PADDING, which Salt uses for the
// "sig" of the session key in an auth reply and minions use for their
// "tok". X9.31 padding is 0x6B, 0xBB..., 0xBA, the message, 0xCC (0x6A
// when there is no room for filler); OpenSSL then returns the smaller of
// s and n-s, and so does this. The signature is deterministic, so Salt's
// and this one are the same bytes. Go's crypto/rsa has no raw private
// operation: it is done here with math/big, blinded so that its timing
// says nothing of the message, and checked against the public key.
func PrivateEncrypt(key *rsa.PrivateKey, msg []byte) ([]byte, error) {
	k := key.Size()
	j := k - len(msg) - 2
	if j < 0 {
		return nil, errors.New("saltproto: x931: data too large for key size")
	}
	em := make([]byte, 0, k)
	if j == 0 {
		em = append(em, 0x6a)
	} else {
		em = append(em, 0x6b)
		em = append(em, bytes.Repeat([]byte{0xbb}, j-1)...)
		em = append(em, 0xba)
	}
	em = append(em, msg...)
	em = append(em, 0xcc)

	n, e := key.N, big.NewInt(int64(key.E))
	m := new(big.Int).SetBytes(em)
	if m.Cmp(n) >= 0 {
		return nil, errors.New("saltproto: x931: data too large for modulus")
	}
	var r, rInv *big.Int
	for {
		var err error
		r, err = rand.Int(rand.Reader, n)
		if err != nil {
			return nil, fmt.Errorf("saltproto: x931 blinding: %w", err)
		}
		if r.Sign() == 0 {
			continue
		}
		if rInv = new(big.Int).ModInverse(r, n); rInv != nil {
			break
		}
	}
	blinded := new(big.Int).Exp(r, e, n)
	blinded.Mul(blinded, m).Mod(blinded, n)
	s := privateOp(key, blinded)
	s.Mul(s, rInv).Mod(s, n)
	if new(big.Int).Exp(s, e, n).Cmp(m) != 0 {
		return nil, errors.New("saltproto: x931: private operation failed its check")
	}
	if alt := new(big.Int).Sub(n, s); s.Cmp(alt) > 0 {
		s = alt
	}
	return s.FillBytes(make([]byte, k)), nil
}

// privateOp is c^d mod n, by the CRT when the key has two primes.
func privateOp(key *rsa.PrivateKey, c *big.Int) *big.Int {
	pc := key.Precomputed
	if len(key.Primes) != 2 || pc.Dp == nil || pc.Dq == nil || pc.Qinv == nil {
		return new(big.Int).Exp(c, key.D, key.N)
	}
	p, q := key.Primes[0], key.Primes[1]
	m1 := new(big.Int).Exp(new(big.Int).Mod(c, p), pc.Dp, p)
	m2 := new(big.Int).Exp(new(big.Int).Mod(c, q), pc.Dq, q)
	h := m1.Sub(m1, m2)
	h.Mul(h, pc.Qinv).Mod(h, p)
	h.Mul(h, q).Add(h, m2)
	return h
}

// PublicDecrypt is salt.crypt.public_decrypt: OpenSSL's
// RSA_public_decrypt with RSA_X931_PADDING, which returns what
// PrivateEncrypt signed. The master checks a minion's "tok" with it (it
// must give "salt"), a minion the "sig" of its session key.
func PublicDecrypt(pub *rsa.PublicKey, sig []byte) ([]byte, error) {
	k := pub.Size()
	if len(sig) > k {
		return nil, errors.New("saltproto: x931: signature longer than the modulus")
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return nil, errors.New("saltproto: x931: signature not below the modulus")
	}
	m := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
	if m.Bit(0) != 0 || m.Bit(1) != 0 || m.Bit(2) != 1 || m.Bit(3) != 1 {
		// The low nibble is not 0xC: the signer sent n-s.
		m.Sub(pub.N, m)
	}
	em := m.FillBytes(make([]byte, k))
	if em[0] != 0x6a && em[0] != 0x6b {
		return nil, errors.New("saltproto: x931: invalid header")
	}
	p := em[1:]
	var j int
	if em[0] == 0x6b {
		j = k - 3
		i := 0
		for ; i < j; i++ {
			if p[i] == 0xba {
				break
			}
			if p[i] != 0xbb {
				return nil, errors.New("saltproto: x931: invalid padding")
			}
		}
		if i == 0 || i == j {
			return nil, errors.New("saltproto: x931: invalid padding")
		}
		p = p[i+1:]
		j -= i
	} else {
		j = k - 2
	}
	if len(p) < j+1 || p[j] != 0xcc {
		return nil, errors.New("saltproto: x931: invalid trailer")
	}
	return bytes.Clone(p[:j]), nil
}
