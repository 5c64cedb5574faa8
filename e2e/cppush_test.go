package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCpPush runs cp.push from a real agent to a real master with
// file_recv: True, in chunks (640,000 bytes: three), kept under
// cachedir/minions/<id>/files/, upload_path and remove_source as Salt's.
func TestCpPush(t *testing.T) {
	m := newTestMaster(t)
	cachedir := t.TempDir()
	if err := os.WriteFile(filepath.Join(m.confDir, "master"), appendConf(t, m, fmt.Sprintf("auto_accept: true\nfile_recv: true\ncachedir: %s\n", cachedir)), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()
	newTestAgent(t, m, "web01", "127.0.0.1", "").start()
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(manageUp(t, m), "web01") {
		if time.Now().After(deadline) {
			t.Fatal("web01 never connected")
		}
		time.Sleep(200 * time.Millisecond)
	}
	src := filepath.Join(t.TempDir(), "report.bin")
	body := bytes.Repeat([]byte("0123456789abcdef"), 40000)
	if err := os.WriteFile(src, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if rets, errs, code := execJSON(t, m, "web01", "cp.push", src); code != 0 || rets["web01"] != true {
		t.Fatalf("cp.push: exit %d, %v\n%s", code, rets, errs)
	}
	got, err := os.ReadFile(filepath.Join(cachedir, "minions", "web01", "files", strings.TrimPrefix(src, "/")))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("pushed file: %d bytes, %v; want %d bytes", len(got), err, len(body))
	}
	if rets, errs, code := execJSON(t, m, "web01", "cp.push", src, "upload_path=/reports/today.bin", "remove_source=True"); code != 0 || rets["web01"] != true {
		t.Fatalf("cp.push upload_path= remove_source=True: exit %d, %v\n%s", code, rets, errs)
	}
	if got, err := os.ReadFile(filepath.Join(cachedir, "minions", "web01", "files", "reports", "today.bin")); err != nil || !bytes.Equal(got, body) {
		t.Errorf("upload_path: %d bytes, %v", len(got), err)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("remove_source=True kept %s: %v", src, err)
	}
}

// appendConf is m's master file with extra appended.
func appendConf(t *testing.T, m *testMaster, extra string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.confDir, "master"))
	if err != nil {
		t.Fatal(err)
	}
	return append(b, extra...)
}
