package master

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/keys"
)

// testPub is a valid Z85 Curve25519 public key.
const testPub = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"

// TestKeyPolicyFromConfiguration: relative autosign_file paths are taken
// from the configuration directory, and a reload applies an edited policy.
func TestKeyPolicyFromConfiguration(t *testing.T) {
	cfg := testConfig(t, "autosign_file: autosign.conf\n")
	dir := filepath.Dir(cfg.Files[0])
	if err := os.WriteFile(filepath.Join(dir, "autosign.conf"), []byte("# lab\nweb-*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if r, err := m.keys.Authenticate(ctx, "web-1", testPub, nil); err != nil || !r.Allowed {
		t.Fatalf("web-1 with autosign_file: %+v, %v", r, err)
	}
	if r, _ := m.keys.Authenticate(ctx, "db-1", testPub, nil); r.State != keys.Pending {
		t.Fatalf("db-1: %+v", r)
	}
	// auto_accept on reload accepts the pending key at its next hello.
	conf, err := os.ReadFile(cfg.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Files[0], append(conf, "auto_accept: true\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Reload(ctx)
	if r, _ := m.keys.Authenticate(ctx, "db-1", testPub, nil); !r.Allowed {
		t.Errorf("db-1 after auto_accept was reloaded: %+v", r)
	}
	if _, ok := m.Functions().Lookup("key.accept"); !ok {
		t.Error("key.accept is not registered")
	}
}

// TestMissingPolicyFileStopsTheMaster: the error names the option's file
// and line and the missing path.
func TestMissingPolicyFileStopsTheMaster(t *testing.T) {
	cfg := testConfig(t, "autoreject_file: /nonexistent/brine-autoreject\n")
	dir := filepath.Dir(cfg.Files[0])
	_, err := New(context.Background(), Options{Config: cfg, ConfigPath: dir, LogOutput: io.Discard,
		Load: func() (*config.Master, error) { return config.Load(dir) }})
	want := cfg.Files[0] + ":5: autoreject_file: stat /nonexistent/brine-autoreject: no such file or directory"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("New = %v, want %q", err, want)
	}
}
