package curve

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestZ85Vectors(t *testing.T) {
	tests := []struct {
		raw  []byte
		text string
	}{
		// RFC 32's test vector.
		{[]byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}, "HelloWorld"},
		{[]byte{0, 0, 0, 0}, "00000"},
		{[]byte{0xFF, 0xFF, 0xFF, 0xFF}, "%nSc0"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := string(z85Encode(tt.raw)); got != tt.text {
			t.Errorf("z85Encode(% X) = %q, want %q", tt.raw, got, tt.text)
		}
		got, err := z85Decode(tt.text)
		if err != nil || !bytes.Equal(got, tt.raw) && len(tt.raw) > 0 {
			t.Errorf("z85Decode(%q) = % X, %v; want % X", tt.text, got, err, tt.raw)
		}
	}
}

func TestZ85DecodeErrors(t *testing.T) {
	for _, s := range []string{"Hell", "Hell\"", "%nSc1", "#####", "hello world"} {
		if b, err := z85Decode(s); err == nil {
			t.Errorf("z85Decode(%q) = % X, want an error", s, b)
		}
	}
}

// The key pairs of libzmq's CURVE test suite (zmq_curve(7)), hex as libzmq
// 4.3.4's zmq_z85_decode gives it.
var libzmqTestKeys = []struct {
	public, secret, publicHex, secretHex string
}{
	{ // client
		"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID", "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs",
		"BB88471D65E2659B30C55A5321CEBB5AAB2B70A398645C26DCA2B2FCB43FC518", "7BB864B489AFA3671FBE69101F94B38972F24816DFB01B51656B3FEC8DFD0888",
	},
	{ // server
		"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6",
		"54FCBA24E93249969316FB617C872BB0C1D1FF14800427C594CBFACF1BC2D652", "8E0BDD697628B91D8F245587EE95C5B04D48963F79259877B49CD9063AEAD3B7",
	},
}

func TestLibzmqTestKeys(t *testing.T) {
	for _, k := range libzmqTestKeys {
		pub, err := ParseKey(k.public)
		if err != nil {
			t.Fatal(err)
		}
		sec, err := ParseKey(k.secret)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ToUpper(hex.EncodeToString(pub[:])); got != k.publicHex {
			t.Errorf("ParseKey(%q) = %s, want %s", k.public, got, k.publicHex)
		}
		if got := strings.ToUpper(hex.EncodeToString(sec[:])); got != k.secretHex {
			t.Errorf("ParseKey(%q) = %s, want %s", k.secret, got, k.secretHex)
		}
		if got := publicKey(sec); got != pub {
			t.Errorf("public key of %s = %s, want %s", k.secret, got, k.public)
		}
		if pub.String() != k.public || sec.String() != k.secret {
			t.Errorf("String() = %s, %s; want %s, %s", pub, sec, k.public, k.secret)
		}
	}
}

func TestParseKeyErrors(t *testing.T) {
	for _, s := range []string{"", "HelloWorld", strings.Repeat("0", 39), strings.Repeat("0", 41), strings.Repeat("~", 40), strings.Repeat("#", 40)} {
		if _, err := ParseKey(s); !errors.Is(err, ErrKeyText) {
			t.Errorf("ParseKey(%q) error = %v, want ErrKeyText", s, err)
		}
	}
}

func TestGenerateKeyPair(t *testing.T) {
	a, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Public == (Key{}) {
		t.Fatalf("two generated pairs: %v and %v", a.Public, b.Public)
	}
	if publicKey(a.Secret) != a.Public {
		t.Fatal("public key does not belong to the secret key")
	}
}

func TestKeyPairHidesSecret(t *testing.T) {
	kp := mustKeyPair(t)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, kp) + fmt.Sprintf(verb, []KeyPair{kp}) + fmt.Sprintf(verb, struct{ K KeyPair }{kp})
		if strings.Contains(out, kp.Secret.String()) || !strings.Contains(out, kp.Public.String()) {
			t.Errorf("%s: %s", verb, out)
		}
	}
}

func TestDerive(t *testing.T) {
	secret := []byte("the master's shared key")
	a, b := Derive(secret, "master"), Derive(secret, "master")
	if a != b {
		t.Fatal("Derive is not deterministic")
	}
	if publicKey(a.Secret) != a.Public {
		t.Fatal("derived public key does not belong to the derived secret key")
	}
	others := []KeyPair{Derive(secret, "cli"), Derive([]byte("another key"), "master"), Derive(nil, "master")}
	for i, o := range others {
		if o.Secret == a.Secret || o.Public == a.Public {
			t.Errorf("pair %d equals the master pair", i)
		}
	}
	// A fixed vector, so that a change to the derivation cannot go unnoticed
	// (the master and older CLIs must keep agreeing).
	if got, want := Derive([]byte("brine"), "master").Public.String(), derivedVector; got != want {
		t.Errorf("Derive(brine, master) = %s, want %s", got, want)
	}
}

const derivedVector = "liqE^?WPc3QEG(a(5bRzz}iwK>YPWe)6P97Q%5Js"

func TestFingerprint(t *testing.T) {
	var k Key
	got := Fingerprint(k)
	// SHA-256 of 32 zero bytes.
	want := "66:68:7a:ad:f8:62:bd:77:6c:8f:c1:8b:8e:9f:8e:20:08:97:14:85:6e:e2:33:b3:90:2a:59:1d:0d:5f:29:25"
	if got != want {
		t.Errorf("Fingerprint(0) = %s, want %s", got, want)
	}
	if !regexp.MustCompile(`^([0-9a-f]{2}:){31}[0-9a-f]{2}$`).MatchString(Fingerprint(Derive(nil, "x").Public)) {
		t.Error("fingerprint is not 32 colon-separated hex pairs")
	}
}

func TestKeyFilesRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	kp, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveKeyPair(dir, "master", kp); err != nil {
		t.Fatal(err)
	}
	got, err := LoadKeyPair(dir, "master")
	if err != nil {
		t.Fatal(err)
	}
	if got != kp {
		t.Fatal("loaded pair differs from the saved one")
	}
	for path, want := range map[string]struct {
		text string
		mode fs.FileMode
	}{
		SecretKeyPath(dir, "master"): {kp.Secret.String() + "\n", 0o600},
		PublicKeyPath(dir, "master"): {kp.Public.String() + "\n", 0o644},
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want.text {
			t.Errorf("%s holds %q, want %q", path, b, want.text)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want.mode {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want.mode)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("key directory holds %v, want only master.key and master.pub", names)
	}
}

func TestSaveKeyPairNeverReplacesASecretKey(t *testing.T) {
	dir := t.TempDir()
	a, _ := GenerateKeyPair()
	b, _ := GenerateKeyPair()
	if err := SaveKeyPair(dir, "k", a); err != nil {
		t.Fatal(err)
	}
	if err := SaveKeyPair(dir, "k", b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second SaveKeyPair error = %v, want fs.ErrExist", err)
	}
	got, err := LoadKeyPair(dir, "k")
	if err != nil || got != a {
		t.Fatalf("LoadKeyPair = %v, %v; want the first pair", got.Public, err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".k*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}

func TestLoadKeyPairRefusesLooseModes(t *testing.T) {
	for _, mode := range []fs.FileMode{0o640, 0o604, 0o660, 0o602, 0o610, 0o644} {
		dir := t.TempDir()
		kp, _ := GenerateKeyPair()
		if err := SaveKeyPair(dir, "k", kp); err != nil {
			t.Fatal(err)
		}
		path := SecretKeyPath(dir, "k")
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKeyPair(dir, "k")
		if !errors.Is(err, ErrKeyFileMode) {
			t.Fatalf("mode %04o: error = %v, want ErrKeyFileMode", mode, err)
		}
		if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprintf("mode %04o", mode)) {
			t.Errorf("mode %04o: error %q does not name the file and its mode", mode, msg)
		}
		if _, err := LoadOrCreateKeyPair(dir, "k"); !errors.Is(err, ErrKeyFileMode) {
			t.Errorf("LoadOrCreateKeyPair with mode %04o: error = %v, want ErrKeyFileMode", mode, err)
		}
	}
	for _, mode := range []fs.FileMode{0o600, 0o400} {
		dir := t.TempDir()
		kp, _ := GenerateKeyPair()
		if err := SaveKeyPair(dir, "k", kp); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(SecretKeyPath(dir, "k"), mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKeyPair(dir, "k"); err != nil {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
}

func TestLoadKeyPairErrors(t *testing.T) {
	dir := t.TempDir()
	kp, _ := GenerateKeyPair()
	other, _ := GenerateKeyPair()
	write := func(name, text string, mode fs.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("garbage.key", "not a key\n", 0o600)
	write("long.key", strings.Repeat("0", 4096), 0o600)
	write("mismatch.key", kp.Secret.String()+"\n", 0o600)
	write("mismatch.pub", other.Public.String()+"\n", 0o644)
	write("nopub.key", kp.Secret.String()+"\r\n", 0o600)
	if err := os.Mkdir(filepath.Join(dir, "dir.key"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.key"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want string
	}{
		{"garbage", "invalid key text"},
		{"long", "over 64 bytes"},
		{"mismatch", "but the public key of"},
		{"missing", "no such file"},
		{"dir", "not a regular file"},
		{"fifo", "not a regular file"},
		{"../escape", "invalid key name"},
		{"", "invalid key name"},
	}
	for _, tt := range tests {
		_, err := LoadKeyPair(dir, tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadKeyPair(%q) error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := LoadKeyPair(dir, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing key: error %v does not match fs.ErrNotExist", err)
	}
	got, err := LoadKeyPair(dir, "nopub")
	if err != nil || got != kp {
		t.Errorf("key without .pub: %v, %v", got.Public, err)
	}
}

func TestLoadOrCreateKeyPair(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	var wg sync.WaitGroup
	pairs := make([]KeyPair, 8)
	errs := make([]error, len(pairs))
	for i := range pairs {
		wg.Go(func() { pairs[i], errs[i] = LoadOrCreateKeyPair(dir, "minion") })
	}
	wg.Wait()
	for i := range pairs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if pairs[i] != pairs[0] {
			t.Fatalf("concurrent LoadOrCreateKeyPair returned different pairs")
		}
	}
	again, err := LoadOrCreateKeyPair(dir, "minion")
	if err != nil || again != pairs[0] {
		t.Fatalf("reload = %v, %v", again.Public, err)
	}
	if err := os.Remove(PublicKeyPath(dir, "minion")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKeyPair(dir, "minion"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(PublicKeyPath(dir, "minion"))
	if err != nil || string(b) != pairs[0].Public.String()+"\n" {
		t.Fatalf("rewritten .pub = %q, %v", b, err)
	}
}
