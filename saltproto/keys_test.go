package saltproto

import (
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Keys are slow to make: the tests share a few.
var (
	testKeysOnce sync.Once
	testKeys     []*rsa.PrivateKey
	testKeysErr  error
)

func testKey(t *testing.T, i int) *rsa.PrivateKey {
	t.Helper()
	testKeysOnce.Do(func() {
		dir, err := os.MkdirTemp("", "saltproto-keys-")
		if err != nil {
			testKeysErr = err
			return
		}
		defer os.RemoveAll(dir)
		for n := range 3 {
			k, _, err := LoadOrCreateKeyPair(dir, "k"+string(rune('0'+n)), 2048)
			if err != nil {
				testKeysErr = err
				return
			}
			testKeys = append(testKeys, k)
		}
	})
	if testKeysErr != nil {
		t.Fatal(testKeysErr)
	}
	return testKeys[i]
}

func TestGenKeys(t *testing.T) {
	dir := t.TempDir()
	mk, err := LoadOrCreateMasterKeys(dir, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if mk.Key.N.BitLen() != 2048 || mk.Key.E != 65537 {
		t.Errorf("key of %d bits, e=%d", mk.Key.N.BitLen(), mk.Key.E)
	}
	pemBytes, err := os.ReadFile(filepath.Join(dir, "master.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pemBytes, []byte("-----BEGIN RSA PRIVATE KEY-----\n")) || !bytes.HasSuffix(pemBytes, []byte("\n-----END RSA PRIVATE KEY-----")) {
		t.Errorf("master.pem is not PyCryptodome's PKCS#1 PEM:\n%s", pemBytes)
	}
	if fi, err := os.Stat(filepath.Join(dir, "master.pem")); err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("master.pem mode %v, %v; want 0400", fi.Mode(), err)
	}
	if !strings.HasPrefix(mk.Pub, "-----BEGIN PUBLIC KEY-----\n") || !strings.HasSuffix(mk.Pub, "\n-----END PUBLIC KEY-----") {
		t.Errorf("master.pub:\n%s", mk.Pub)
	}
	again, err := LoadOrCreateMasterKeys(dir, 2048)
	if err != nil || !again.Key.Equal(mk.Key) || again.Pub != mk.Pub {
		t.Fatalf("a second load made another key (%v)", err)
	}
	// master.pub is written back from the key when it is missing.
	if err := os.Remove(filepath.Join(dir, "master.pub")); err != nil {
		t.Fatal(err)
	}
	if again, err = LoadOrCreateMasterKeys(dir, 2048); err != nil || again.Pub != mk.Pub {
		t.Fatalf("master.pub not restored: %v", err)
	}
	// A master.pub of another key is an error, not a silent mismatch.
	if err := os.WriteFile(filepath.Join(dir, "master.pub"), []byte(PublicKeyPEM(&testKey(t, 0).PublicKey)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateMasterKeys(dir, 2048); err == nil {
		t.Error("mismatched master.pub: no error")
	}
}

func TestParseKeys(t *testing.T) {
	k := testKey(t, 0)
	pkcs1 := string(pycryptodomePEM("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&k.PublicKey)))
	for name, s := range map[string]string{
		"spki":                PublicKeyPEM(&k.PublicKey),
		"pkcs1":               pkcs1,
		"with newline around": "\n" + PublicKeyPEM(&k.PublicKey) + "\n\n",
	} {
		pub, err := ParsePublicKey(s)
		if err != nil || !pub.Equal(&k.PublicKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, s := range map[string]string{
		"empty":   "",
		"garbage": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
		"private": string(PrivateKeyPEM(k)),
	} {
		if _, err := ParsePublicKey(s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParsePrivateKey([]byte("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: DES-EDE3-CBC,0011223344556677\n\nAAAA\n-----END RSA PRIVATE KEY-----\n")); err == nil || !strings.Contains(err.Error(), "key_pass") {
		t.Errorf("encrypted key: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	body := "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\nabcdef\n"
	d := sha256.Sum256([]byte(body))
	h := hex.EncodeToString(d[:])
	var pairs []string
	for i := 0; i < len(h); i += 2 {
		pairs = append(pairs, h[i:i+2])
	}
	want := strings.Join(pairs, ":")
	for name, text := range map[string]string{
		"pycryptodome":    "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----",
		"trailing lf":     "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----\n",
		"crlf":            strings.ReplaceAll("-----BEGIN PUBLIC KEY-----\n"+body+"-----END PUBLIC KEY-----\n", "\n", "\r\n"),
		"blank lines too": "\n-----BEGIN PUBLIC KEY-----\n\n" + body + "\n-----END PUBLIC KEY-----\n\n",
	} {
		got, err := Fingerprint([]byte(text), "sha256")
		if err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", name, got, err, want)
		}
	}
	if f, _ := Fingerprint([]byte("x"), "md5"); f != "d4:1d:8c:d9:8f:00:b2:04:e9:80:09:98:ec:f8:42:7e" {
		t.Errorf("md5 of nothing: %s", f)
	}
	if _, err := Fingerprint(nil, "whirlpool"); err == nil {
		t.Error("unknown hash: no error")
	}
}

func TestRSA(t *testing.T) {
	k := testKey(t, 0)
	ct, err := EncryptOAEP(&k.PublicKey, []byte("token"))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := DecryptOAEP(k, ct); err != nil || string(pt) != "token" {
		t.Errorf("oaep: %q, %v", pt, err)
	}
	if _, err := DecryptOAEP(testKey(t, 1), ct); err == nil {
		t.Error("oaep with another key: no error")
	}
	sig, err := SignMessage(k, []byte("msg"))
	if err != nil {
		t.Fatal(err)
	}
	if !VerifySignature(&k.PublicKey, []byte("msg"), sig) || VerifySignature(&k.PublicKey, []byte("msh"), sig) || VerifySignature(&testKey(t, 1).PublicKey, []byte("msg"), sig) {
		t.Error("sign_message/verify_signature disagree")
	}
}

func TestX931(t *testing.T) {
	k := testKey(t, 0)
	for _, n := range []int{0, 4, 64, k.Size() - 3, k.Size() - 2} {
		msg := bytes.Repeat([]byte{'a'}, n)
		sig, err := PrivateEncrypt(k, msg)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if len(sig) != k.Size() {
			t.Errorf("%d bytes: signature of %d bytes", n, len(sig))
		}
		// OpenSSL returns min(s, n-s).
		s := new(big.Int).SetBytes(sig)
		if s.Cmp(new(big.Int).Sub(k.N, s)) > 0 {
			t.Errorf("%d bytes: the larger of s and n-s", n)
		}
		got, err := PublicDecrypt(&k.PublicKey, sig)
		if n == 0 || n == k.Size()-3 {
			// OpenSSL pads these and its own check refuses them (an
			// empty message: no 0xBA is found before the trailer; 0x6B
			// 0xBA: no filler byte); so does PublicDecrypt.
			if err == nil {
				t.Errorf("%d bytes: recovered %q", n, got)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("%d bytes: recovered %q, %v", n, got, err)
		}
		if _, err := PublicDecrypt(&testKey(t, 1).PublicKey, sig); err == nil {
			t.Errorf("%d bytes: another key recovers something", n)
		}
	}
	if _, err := PrivateEncrypt(k, make([]byte, k.Size()-1)); err == nil {
		t.Error("too long a message: no error")
	}
	tok, err := PrivateEncrypt(k, []byte("salt"))
	if err != nil {
		t.Fatal(err)
	}
	if !VerifyMinionToken(&k.PublicKey, tok) || VerifyMinionToken(&testKey(t, 1).PublicKey, tok) {
		t.Error("VerifyMinionToken")
	}
}

// TestKeysPython: a master.pem and master.pub written by salt.crypt.gen_keys
// load here, and Go's are Salt's byte for byte (PyCryptodome re-exports
// them unchanged) with the same fingerprint; signatures, X9.31 and OAEP
// go both ways, and the deterministic ones are the same bytes.
func TestKeysPython(t *testing.T) {
	o := python(t)
	pyDir, goDir := tempDir(t), tempDir(t)
	o.call(t, "gen_keys", map[string]any{"dir": pyDir, "name": "master", "keysize": 2048})
	before, err := os.ReadFile(filepath.Join(pyDir, "master.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pyKeys, err := LoadOrCreateMasterKeys(pyDir, 2048)
	if err != nil {
		t.Fatalf("Salt's master.pem: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(pyDir, "master.pem")); !bytes.Equal(before, after) {
		t.Fatal("loading Salt's keys rewrote master.pem")
	}
	goKeys, err := LoadOrCreateMasterKeys(goDir, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		dir  string
		keys *MasterKeys
	}{"salt's": {pyDir, pyKeys}, "go's": {goDir, goKeys}} {
		pem, pub := filepath.Join(c.dir, "master.pem"), filepath.Join(c.dir, "master.pub")
		r := o.callMap(t, "load_keys", map[string]any{"pem": pem, "pub": pub})
		if r["n"] != c.keys.Key.N.Text(16) || r["pub_n"] != c.keys.Key.N.Text(16) {
			t.Errorf("%s keys: Salt reads another modulus", name)
		}
		if r["pem_same"] != true || r["pub_same"] != true {
			t.Errorf("%s keys: PyCryptodome's export differs from the files (pem %v, pub %v)", name, r["pem_same"], r["pub_same"])
		}
		want := o.callString(t, "finger", map[string]any{"path": pub})
		if got, err := Fingerprint([]byte(c.keys.Pub), "sha256"); err != nil || got != want {
			t.Errorf("%s keys: fingerprint %s, Salt's pem_finger %s", name, got, want)
		}
		msg := []byte("a message to sign \xff")
		sig, err := SignMessage(c.keys.Key, msg)
		if err != nil {
			t.Fatal(err)
		}
		if o.call(t, "verify", map[string]any{"pub": pub, "msg": hex.EncodeToString(msg), "sig": hex.EncodeToString(sig)}) != true {
			t.Errorf("%s keys: Salt does not verify Go's signature", name)
		}
		pySig := unhex(t, o.callString(t, "sign", map[string]any{"pem": pem, "msg": hex.EncodeToString(msg)}))
		if !bytes.Equal(pySig, sig) || !VerifySignature(&c.keys.Key.PublicKey, msg, pySig) {
			t.Errorf("%s keys: Salt's sign_message differs from SignMessage", name)
		}
		digest := sha256.Sum256([]byte("a session key"))
		hexDigest := []byte(hex.EncodeToString(digest[:]))
		x, err := PrivateEncrypt(c.keys.Key, hexDigest)
		if err != nil {
			t.Fatal(err)
		}
		pyX := unhex(t, o.callString(t, "private_encrypt", map[string]any{"pem": pem, "msg": hex.EncodeToString(hexDigest)}))
		if !bytes.Equal(pyX, x) {
			t.Errorf("%s keys: Salt's private_encrypt differs from PrivateEncrypt:\n py %x\n go %x", name, pyX, x)
		}
		if got := unhex(t, o.callString(t, "public_decrypt", map[string]any{"pub": pub, "sig": hex.EncodeToString(x)})); !bytes.Equal(got, hexDigest) {
			t.Errorf("%s keys: Salt's public_decrypt of Go's signature: %q", name, got)
		}
		if got, err := PublicDecrypt(&c.keys.Key.PublicKey, pyX); err != nil || !bytes.Equal(got, hexDigest) {
			t.Errorf("%s keys: PublicDecrypt of Salt's signature: %q, %v", name, got, err)
		}
		secret := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab")
		ct, err := EncryptOAEP(&c.keys.Key.PublicKey, secret)
		if err != nil {
			t.Fatal(err)
		}
		if got := unhex(t, o.callString(t, "oaep_decrypt", map[string]any{"pem": pem, "ct": hex.EncodeToString(ct)})); !bytes.Equal(got, secret) {
			t.Errorf("%s keys: Salt's OAEP decrypt of Go's: %q", name, got)
		}
		pyCT := unhex(t, o.callString(t, "oaep_encrypt", map[string]any{"pub": pub, "msg": hex.EncodeToString(secret)}))
		if got, err := DecryptOAEP(c.keys.Key, pyCT); err != nil || !bytes.Equal(got, secret) {
			t.Errorf("%s keys: DecryptOAEP of Salt's: %q, %v", name, got, err)
		}
	}
}
