package ssh

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestKnownHostFunctions runs the sequence of ssh.* calls Salt 3006.6 was
// run with (salt-call --local, the same file) and holds its returns.
func TestKnownHostFunctions(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is needed (apt-get install openssh-client): Salt's ssh module runs it")
	}
	f := filepath.Join(t.TempDir(), "khm")
	reg := registry(t)
	fpA := "ff:19:95:64:2c:10:24:9e:6b:e9:f3:1a:4d:31:a2:75:76:14:2a:7b:e4:e3:85:56:44:0e:b7:bc:b7:8b:0e:e1"
	entry := map[string]any{"hostname": "h.example", "enc": "ssh-ed25519", "key": keyA}
	cases := []struct {
		fun  string
		kw   map[string]any
		want any
		err  string
	}{
		{"ssh.get_known_host_entries", map[string]any{"user": nil, "hostname": "h.example", "config": f}, nil, ""},
		{"ssh.rm_known_host", map[string]any{"hostname": "h.example", "config": f},
			map[string]any{"status": "error", "error": "Known hosts file " + f + " does not exist"}, ""},
		{"ssh.set_known_host", map[string]any{"hostname": "h.example", "key": keyA, "enc": "ssh-ed25519",
			"hash_known_hosts": false, "config": f}, map[string]any{"status": "updated", "old": nil, "new": []any{entry}}, ""},
		{"ssh.check_known_host", map[string]any{"hostname": "h.example", "key": keyA, "config": f}, "exists", ""},
		{"ssh.check_known_host", map[string]any{"hostname": "h.example", "fingerprint": "aa", "config": f}, "update", ""},
		{"ssh.check_known_host", map[string]any{"hostname": "x.example", "config": f}, "add", ""},
		{"ssh.get_known_host_entries", map[string]any{"hostname": "h.example", "config": f}, []any{map[string]any{
			"hostname": "h.example", "enc": "ssh-ed25519", "key": keyA, "fingerprint": fpA}}, ""},
		{"ssh.hash_known_hosts", map[string]any{"config": f}, map[string]any{"status": "updated",
			"comment": "WARNING: " + f + ".old contains unhashed entries\r\nDelete this file to ensure privacy of hostnames\r\n" +
				f + " updated.\nOriginal contents retained as " + f + ".old"}, ""},
		{"ssh.set_known_host", map[string]any{"hostname": "h.example", "key": keyA, "enc": "ssh-ed25519", "config": f},
			map[string]any{"status": "exists", "keys": []any{keyA}}, ""},
		{"ssh.rm_known_host", map[string]any{"hostname": "h.example", "config": f}, map[string]any{"status": "removed",
			"comment": "# Host h.example found: line 1\n" + f + " updated.\nOriginal contents retained as " + f + ".old"}, ""},
		{"ssh.check_known_host", map[string]any{"hostname": "h.example", "config": "relative"}, nil,
			"Cannot determine absolute path to file."},
		{"ssh.check_known_host", map[string]any{"config": f}, map[string]any{"status": "error", "error": "hostname argument required"}, ""},
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
	if b, _ := os.ReadFile(f); len(b) != 0 {
		t.Errorf("file %q, want it empty after rm_known_host", b)
	}
}
