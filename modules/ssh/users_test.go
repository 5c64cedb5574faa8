package ssh

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/brinehq/brine/internal/testenv"
)

// fakeUsers points the module at a passwd of its own: alice, uid 1234,
// whose home is under the test's directory, and bob, whose home does not
// exist.
func fakeUsers(t *testing.T) string {
	t.Helper()
	testenv.NeedRoot(t, "this test gives files to another uid, as Salt's module does, and needs to run as root")
	root := t.TempDir()
	home := filepath.Join(root, "home", "alice")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	passwd := "root:x:0:0:root:/root:/bin/sh\nalice:x:1234:1235::" + home + ":/bin/sh\n" +
		"bob:x:1236:1236::" + filepath.Join(root, "home", "bob") + ":/bin/sh\n"
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	passwdRoot = root
	t.Cleanup(func() { passwdRoot = "" })
	return home
}

func owner(t *testing.T, path string) (int, int, os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return int(s.Uid), int(s.Gid), st.Mode()
}

// TestUserFiles holds what Salt's module does with a user's files: the
// default config under the home, %h and %u expanded, the missing .ssh
// made 0700 and the new file 0600, both given to the user; "fail" when
// the home does not exist.
func TestUserFiles(t *testing.T) {
	home := fakeUsers(t)
	ctx := context.Background()
	r, err := SetAuthKey(ctx, "alice", keyA, "ed25519", "a@host", nil, ".ssh/authorized_keys", "")
	if err != nil || r != "new" {
		t.Fatalf("set_auth_key = %q, %v; want new", r, err)
	}
	for path, mode := range map[string]os.FileMode{filepath.Join(home, ".ssh"): 0o700 | os.ModeDir,
		filepath.Join(home, ".ssh", "authorized_keys"): 0o600} {
		if uid, gid, m := owner(t, path); uid != 1234 || gid != 1235 || m != mode {
			t.Errorf("%s: %d:%d %v, want 1234:1235 %v", path, uid, gid, m, mode)
		}
	}
	r, err = SetAuthKey(ctx, "alice", keyF, "ed25519", "", []string{"no-pty"}, "%h/keys/%u.pub", "")
	if err != nil || r != "new" {
		t.Fatalf("set_auth_key with %%h/%%u = %q, %v; want new", r, err)
	}
	b, err := os.ReadFile(filepath.Join(home, "keys", "alice.pub"))
	if want := "no-pty ssh-ed25519 " + keyF + " \n"; err != nil || string(b) != want {
		t.Errorf("keys/alice.pub %q, %v; want %q", b, err, want)
	}
	keys, err := AuthKeys("alice", "%h/keys/%u.pub", "")
	if err != nil || len(keys) != 1 || keys[0].Key != keyF {
		t.Errorf("auth_keys = %v, %v", keys, err)
	}
	if r, err := SetAuthKey(ctx, "bob", keyA, "ed25519", "", nil, ".ssh/authorized_keys", ""); err != nil || r != "fail" {
		t.Errorf("set_auth_key for a user without a home = %q, %v; want fail", r, err)
	}
	res, err := SetKnownHost(ctx, KnownHost{User: "alice", Hostname: "h.example", Key: keyA, Enc: "ssh-ed25519", Hash: true, Timeout: 5})
	if err != nil || res["status"] != "updated" {
		t.Fatalf("set_known_host = %v, %v", res, err)
	}
	kh := filepath.Join(home, ".ssh", "known_hosts")
	if uid, gid, m := owner(t, kh); uid != 1234 || gid != 1235 || m != 0o600 {
		t.Errorf("%s: %d:%d %v, want 1234:1235 0600", kh, uid, gid, m)
	}
	entries, fail, err := GetKnownHostEntries(ctx, "alice", "h.example", "", nil, "")
	if err != nil || fail != nil || len(entries) != 1 {
		t.Errorf("get_known_host_entries = %v %v %v", entries, fail, err)
	}
	if _, fail, _ := KnownHostsFile("", "carol"); fail == nil || fail["error"] != "User carol does not exist" {
		t.Errorf("known hosts of a missing user: %v", fail)
	}
}
