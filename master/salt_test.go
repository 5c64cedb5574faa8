package master

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/saltproto"
)

// TestSaltTransportKeys: with salt_transport on (the default) the master
// has Salt's key pair beside its key_file and reuses it across restarts;
// off, it has neither the transport nor the files; bad values of Salt's
// options stop it with the file and line.
func TestSaltTransportKeys(t *testing.T) {
	cfg := testConfig(t, "")
	m := start(t, cfg)
	if m.salt == nil {
		t.Fatal("salt_transport is on by default, but the master has no Salt transport")
	}
	dir := filepath.Dir(cfg.Settings.KeyFile)
	keys, err := saltproto.LoadOrCreateMasterKeys(dir, saltproto.DefaultKeySize)
	if err != nil {
		t.Fatal(err)
	}
	if keys.Pub != m.saltPub {
		t.Fatal("master.pub on disk is not the key the master serves")
	}
	if st, err := os.Stat(filepath.Join(dir, "master.pem")); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("master.pem: %v %v, want readable by its owner only", st, err)
	}

	off := testConfig(t, "salt_transport: false\n")
	m2 := start(t, off)
	if m2.salt != nil {
		t.Fatal("salt_transport: false, but the master serves Salt's protocol")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(off.Settings.KeyFile), "master.pem")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("salt_transport: false made master.pem: %v", err)
	}

	for _, c := range []struct{ conf, want string }{
		{"keysize: 1024\n", "keysize: 1024 bits is too small"},
		{"file_buffer_size: 0\n", "file_buffer_size: want a positive number"},
		{"salt_transport: maybe\n", "salt_transport"},
	} {
		_, err := New(t.Context(), Options{Config: testConfig(t, c.conf), LogOutput: &strings.Builder{}})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "master:") {
			t.Errorf("%q: %v, want an error naming the file and %q", c.conf, err, c.want)
		}
	}
}
