package ssh

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
)

const (
	keyA = "AAAAC3NzaC1lZDI1NTE5AAAAIFu0kvBUro8UX0COM4Wbs2PKiTb1fiRfckncL1MFKREH"
	keyF = "AAAAC3NzaC1lZDI1NTE5AAAAIG0Umo9FrGIrP25+qQqyVr+B36ydYl/OeTh1JvpM2rOm"
)

func registry(t *testing.T) *function.Registry {
	t.Helper()
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{})); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestAuthFunctions holds the authorized_keys functions to Salt 3006.6's
// returns (salt-call --local ssh.* on the same files).
func TestAuthFunctions(t *testing.T) {
	testenv.NeedRoot(t, "this test adds keys for the user root and needs to run as root")
	dir := t.TempDir()
	f := filepath.Join(dir, "keys")
	if err := os.WriteFile(f, []byte("no-pty ssh-ed25519 "+keyF+" f@host\nnot a key line\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	reg := registry(t)
	cases := []struct {
		fun  string
		kw   map[string]any
		want any
		err  string
	}{
		{"ssh.auth_keys", map[string]any{"user": "root", "config": f, "fingerprint_hash_type": "md5"},
			map[string]any{keyF: map[string]any{"enc": "ssh-ed25519", "comment": "f@host", "options": []any{"no-pty"},
				"fingerprint": "c8:ae:97:16:be:f8:ba:17:f3:f2:60:3c:67:5b:bd:92"}}, ""},
		{"ssh.auth_keys", map[string]any{"user": "nosuchuser", "config": f}, map[string]any{}, ""},
		{"ssh.auth_keys", map[string]any{"user": []any{"root"}, "config": f + ".none"}, map[string]any{}, ""},
		{"ssh.check_key", map[string]any{"user": "root", "key": "AAAA", "enc": "ssh-rsa", "comment": "", "options": []any{},
			"config": f}, "add", ""},
		{"ssh.check_key", map[string]any{"user": "root", "key": keyF, "enc": "ed25519", "comment": "f@host",
			"options": []any{"no-pty"}, "config": f}, "exists", ""},
		{"ssh.check_key", map[string]any{"user": "root", "key": keyF, "enc": "ed25519", "comment": "f@host",
			"options": nil, "config": f}, "update", ""},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AAAA", "enc": "foo", "config": f}, nil,
			"Incorrect encryption key type 'foo'."},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AA AA", "config": f}, "invalid", ""},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AAA!", "config": f}, "Invalid public key", ""},
		{"ssh.set_auth_key", map[string]any{"user": "nosuchuser", "key": "AAAA", "config": f}, "fail", ""},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AAAA", "enc": "rsa", "config": f}, "new", ""},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AAAA", "enc": "rsa", "config": f}, "no change", ""},
		{"ssh.set_auth_key", map[string]any{"user": "root", "key": "AAAA", "enc": "dsa", "config": f}, "replace", ""},
		{"ssh.rm_auth_key", map[string]any{"user": "root", "key": "AAAA", "config": f}, "Key removed", ""},
		{"ssh.rm_auth_key", map[string]any{"user": "root", "key": "AAAA", "config": f}, "Key not present", ""},
		{"ssh.auth_keys", map[string]any{"user": "root", "config": f, "fingerprint_hash_type": "whirlpool"}, nil,
			"The fingerprint_hash_type whirlpool is not supported."},
	}
	for _, c := range cases {
		out, err := reg.Call(context.Background(), c.fun, nil, c.kw, nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %v: error %v, want %q", c.fun, c.kw, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(out, c.want) {
			t.Errorf("%s %v = %#v, %v; want %#v", c.fun, c.kw, out, err, c.want)
		}
	}
	// rm_auth_key rewrote the file as Salt does: lines that are not keys
	// dropped, the mode kept.
	b, _ := os.ReadFile(f)
	if want := "no-pty ssh-ed25519 " + keyF + " f@host\n"; string(b) != want {
		t.Errorf("file %q, want %q", b, want)
	}
	if st, _ := os.Stat(f); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode())
	}
}

func TestFingerprint(t *testing.T) {
	cases := []struct {
		key, hash, want string
		ok              bool
	}{
		{keyA, "", "ff:19:95:64:2c:10:24:9e:6b:e9:f3:1a:4d:31:a2:75:76:14:2a:7b:e4:e3:85:56:44:0e:b7:bc:b7:8b:0e:e1", true},
		{keyF, "MD5", "c8:ae:97:16:be:f8:ba:17:f3:f2:60:3c:67:5b:bd:92", true},
		{"AAAA\n", "", "", false},
		{"AAA", "", "", false},
		{"AA=A", "", "", false},
	}
	for _, c := range cases {
		got, ok, err := Fingerprint(c.key, c.hash)
		if err != nil || got != c.want || ok != c.ok {
			t.Errorf("Fingerprint(%q, %q) = %q %v %v, want %q %v", c.key, c.hash, got, ok, err, c.want, c.ok)
		}
	}
}

func TestExpandPath(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"%h/.ssh/authorized_keys", "/home/u/.ssh/authorized_keys", ""},
		{"/etc/ssh/keys/%u", "/etc/ssh/keys/u", ""},
		{"100%%/%u", "100%/u", ""},
		{"%x", "", `unknown token character "%x"`},
		{"keys%", "", "Last character can't be escape character"},
	}
	for _, c := range cases {
		got, err := expandPath(c.in, "u", "/home/u")
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("expandPath(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
}
