package sshknownhosts

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// sshd starts an OpenSSH server on a free local port with a new ed25519
// host key, for as long as the test runs, and returns its port and key.
func sshd(t *testing.T) (int64, string) {
	t.Helper()
	bin := "/usr/sbin/sshd"
	testenv.NeedRoot(t, "this test runs an OpenSSH server for ssh-keyscan to read")
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("this test runs an OpenSSH server for ssh-keyscan to read: it needs /usr/sbin/sshd (apt-get install openssh-server)")
	}
	dir := t.TempDir()
	hostkey := filepath.Join(dir, "hostkey")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostkey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(hostkey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-D", "-e", "-p", strconv.Itoa(port), "-h", hostkey, "-f", "/dev/null",
		"-o", "PidFile=none", "-o", "ListenAddress=127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			c.Close()
			break
		}
		if i == 50 {
			t.Fatalf("sshd did not listen on %d: %v", port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return int64(port), strings.Fields(string(pub))[1]
}

// keygenFingerprint is ssh-keygen -l's fingerprint of key in Salt's form
// (colon-separated hex), made independently of the module's.
func keygenFingerprint(t *testing.T, key, hash string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "k.pub")
	if err := os.WriteFile(f, []byte("ssh-ed25519 "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-E", hash, "-f", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Fields(string(out))[1]
	if h, ok := strings.CutPrefix(fp, "MD5:"); ok {
		return h
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(fp, "SHA256:"))
	if err != nil {
		t.Fatal(err)
	}
	s := hex.EncodeToString(raw)
	var parts []string
	for i := 0; i < len(s); i += 2 {
		parts = append(parts, s[i:i+2])
	}
	return strings.Join(parts, ":")
}

// TestKeyscan runs the SLS Salt 3006.6 was run on against a local sshd
// (present without a key: ssh-keyscan, checked against a fingerprint)
// twice after test mode, and holds Salt's returns.
func TestKeyscan(t *testing.T) {
	port, key := sshd(t)
	fp, md5 := keygenFingerprint(t, key, "sha256"), keygenFingerprint(t, key, "md5")
	dir := t.TempDir()
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{})); err != nil {
		t.Fatal(err)
	}
	base := func(cfg string, kv ...any) map[string]any {
		m := map[string]any{"name": "127.0.0.1", "port": port, "hash_known_hosts": false, "config": filepath.Join(dir, cfg)}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	sls := []struct {
		id     string
		kwargs map[string]any
	}{
		{"scanfp", base("khs", "fingerprint", fp)},
		{"wrongfp", base("khs2", "fingerprint", "aa:bb")},
		{"nokey", base("khs3")},
		{"md5", base("khs4", "fingerprint", md5, "fingerprint_hash_type", "md5")},
		{"down", base("khs5", "port", port+1, "timeout", int64(1))},
	}
	host := "[127.0.0.1]:" + strconv.FormatInt(port, 10)
	scanned := func(fp string) map[string]any {
		return map[string]any{"old": nil, "new": []any{map[string]any{"hostname": host, "key": key, "enc": "ssh-ed25519",
			"fingerprint": fp}}}
	}
	saved := func(cfg, fp string) string {
		return "127.0.0.1's key saved to " + filepath.Join(dir, cfg) + " (fingerprint: " + fp + ")"
	}
	exists := func(cfg string) string { return "127.0.0.1 already exists in " + filepath.Join(dir, cfg) }
	mismatch := "Remote host public keys found but none of their fingerprints match the one you have provided"
	toAdd := func(cfg string) string { return "Key for 127.0.0.1 is set to be added to " + filepath.Join(dir, cfg) }
	runs := []struct {
		test  bool
		wants []want
	}{
		{true, []want{{nil, toAdd("khs"), nil}, {nil, toAdd("khs2"), nil}, {nil, toAdd("khs3"), nil},
			{nil, toAdd("khs4"), nil}, {nil, toAdd("khs5"), nil}}},
		{false, []want{{true, saved("khs", fp), scanned(fp)}, {false, mismatch, nil}, {true, saved("khs3", fp), scanned(fp)},
			{true, saved("khs4", md5), scanned(md5)}, {false, "Unable to receive remote host keys", nil}}},
		{false, []want{{true, exists("khs"), nil}, {false, mismatch, nil}, {true, exists("khs3"), nil},
			{true, exists("khs4"), nil}, {false, "Unable to receive remote host keys", nil}}},
	}
	for n, run := range runs {
		for i, c := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test, ID: c.id})
			out, err := reg.Call(ctx, "ssh_known_hosts.present", nil, c.kwargs, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, w := out.(state.Result), run.wants[i]
			if state.Value(r.Result) != w.result || r.Comment != w.comment ||
				!(reflect.DeepEqual(map[string]any(r.Changes), w.changes) || len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("run %d, %s: got %v %q %#v\nwant %v %q %#v", n+1, c.id, state.Value(r.Result), r.Comment, r.Changes,
					w.result, w.comment, w.changes)
			}
		}
	}
	for _, cfg := range []string{"khs", "khs3", "khs4"} {
		b, _ := os.ReadFile(filepath.Join(dir, cfg))
		if want := host + " ssh-ed25519 " + key + "\n"; string(b) != want {
			t.Errorf("%s %q, want %q", cfg, b, want)
		}
	}
	for _, cfg := range []string{"khs2", "khs5"} {
		if _, err := os.Stat(filepath.Join(dir, cfg)); err == nil {
			t.Errorf("%s written, want no file (Salt's)", cfg)
		}
	}
}
