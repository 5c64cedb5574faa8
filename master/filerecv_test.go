package master

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/wire"
)

// The master's side of cp.push, Salt's _file_recv: off unless file_recv,
// bounded by file_recv_max_size, confined to cachedir/minions/<id>/files.
func TestFileRecv(t *testing.T) {
	cachedir := t.TempDir()
	outside := t.TempDir()
	on := &fileRecv{m: &Master{cfg: testConfig(t, fmt.Sprintf("file_recv: True\nfile_recv_max_size: 1\ncachedir: %s\n", cachedir)),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	off := &fileRecv{m: &Master{cfg: testConfig(t, ""), log: on.m.log}}
	ctx := context.Background()
	push := func(r *fileRecv, id string, req wire.FilePush) error {
		_, err := r.push(ctx, id, mustJSON(t, req))
		return err
	}
	kept := func(id, rel string) string {
		b, err := os.ReadFile(filepath.Join(cachedir, "minions", id, "files", rel))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}

	// Off (Salt's default): refused, nothing written.
	err := push(off, "web01", wire.FilePush{Path: []string{"etc", "fstab"}, Size: 3, Data: []byte("abc")})
	if !errors.Is(err, ErrFileRecv) || !strings.Contains(err.Error(), "file_recv is not True") {
		t.Errorf("push with file_recv off: %v", err)
	}
	if _, err := os.Stat(filepath.Join(off.m.cfg.Settings.DataDir, "cache")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused push created the cache directory: %v", err)
	}

	// In chunks: the file appears whole at the last one.
	if err := push(on, "web01", wire.FilePush{Path: []string{"etc", "fstab"}, Loc: 0, Size: 6, Data: []byte("abc")}); err != nil {
		t.Fatal(err)
	}
	if got := kept("web01", "etc/fstab"); !strings.HasPrefix(got, "<") {
		t.Errorf("half a file is visible: %q", got)
	}
	if err := push(on, "web01", wire.FilePush{Path: []string{"etc", "fstab"}, Loc: 3, Size: 6, Data: []byte("def")}); err != nil {
		t.Fatal(err)
	}
	if got := kept("web01", "etc/fstab"); got != "abcdef" {
		t.Errorf("etc/fstab = %q, want abcdef", got)
	}
	if _, err := os.Stat(filepath.Join(cachedir, "minions", "web01", "files", "etc", "fstab"+partSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the part file stayed: %v", err)
	}
	// Pushed again, replaced; an empty file is one empty chunk.
	if err := push(on, "web01", wire.FilePush{Path: []string{"etc", "fstab"}, Size: 1, Data: []byte("z")}); err != nil || kept("web01", "etc/fstab") != "z" {
		t.Errorf("push again: %v, %q", err, kept("web01", "etc/fstab"))
	}
	if err := push(on, "web01", wire.FilePush{Path: []string{"", "var", ".", "empty"}, Size: 0}); err != nil || kept("web01", "var/empty") != "" {
		t.Errorf("empty push: %v, %q", err, kept("web01", "var/empty"))
	}

	// Symbolic links in the agent's directory lead nowhere outside it.
	if err := os.Symlink(outside, filepath.Join(cachedir, "minions", "web01", "files", "evil")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   string
		req  wire.FilePush
		want string
	}{
		{"dot-dot", "web01", wire.FilePush{Path: []string{"..", "..", "db01", "files", "x"}, Size: 1, Data: []byte("x")}, `path component ".."`},
		{"separator in a component", "web01", wire.FilePush{Path: []string{"a/../../../x"}, Size: 1, Data: []byte("x")}, "path component"},
		{"no path", "web01", wire.FilePush{Path: []string{"", "."}, Size: 1, Data: []byte("x")}, "no path"},
		{"symlink out", "web01", wire.FilePush{Path: []string{"evil", "x"}, Size: 1, Data: []byte("x")}, "file_recv"},
		{"over file_recv_max_size", "web01", wire.FilePush{Path: []string{"big"}, Size: 2 << 20, Data: []byte("x")}, "over file_recv_max_size (1 MiB)"},
		{"chunk past size", "web01", wire.FilePush{Path: []string{"x"}, Size: 1, Data: []byte("xy")}, "runs past"},
		{"out of order", "web01", wire.FilePush{Path: []string{"gap"}, Loc: 5, Size: 10, Data: []byte("x")}, "chunk at 5 of gap, which has 0 bytes so far"},
		{"negative offset", "web01", wire.FilePush{Path: []string{"x"}, Loc: -1, Size: 1, Data: []byte("x")}, "negative"},
		{"bad id", "../web01", wire.FilePush{Path: []string{"x"}, Size: 1, Data: []byte("x")}, "invalid host id"},
	} {
		err := push(on, tc.id, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a push wrote outside the agent's directory: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Join(cachedir, "minions")); len(entries) != 1 {
		t.Errorf("minions/ holds %v, want web01 only", entries)
	}

	// The default cachedir is <data_dir>/cache.
	def := &fileRecv{m: &Master{cfg: testConfig(t, "file_recv: true\n"), log: on.m.log}}
	if err := push(def, "web01", wire.FilePush{Path: []string{"f"}, Size: 1, Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(def.m.cfg.Settings.DataDir, "cache", "minions", "web01", "files", "f")); err != nil {
		t.Errorf("default cachedir: %v", err)
	}
}

// cp.push from a real agent to a master with file_recv: True, in chunks.
func TestCpPushEndToEnd(t *testing.T) {
	cachedir := t.TempDir()
	m := start(t, testConfig(t, fmt.Sprintf("auto_accept: true\nfile_recv: true\ncachedir: %s\n", cachedir)))
	runAgent(t, m, "web01")
	src := filepath.Join(t.TempDir(), "report.bin")
	body := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640000 bytes: three chunks
	if err := os.WriteFile(src, body, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitConnected(t, m, "web01")
	run := func(kwargs map[string]any) jobs.Return {
		t.Helper()
		out, err := m.publisher.Run(ctx, jobs.Targeted{JID: jobs.NewJID(), Fun: "cp.push", Arg: jobs.PackArgs([]any{src}, kwargs),
			Tgt: "web01", TgtType: "glob", User: "test"}, bus.Origin{Source: "brine://test"}, defaultWait)
		if err != nil {
			t.Fatal(err)
		}
		return out.Returns["web01"]
	}
	if r := run(nil); r.Return != true || r.Retcode != 0 {
		t.Fatalf("cp.push = %+v", r)
	}
	got, err := os.ReadFile(filepath.Join(cachedir, "minions", "web01", "files", strings.TrimPrefix(src, "/")))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("pushed file: %d bytes, %v; want %d bytes", len(got), err, len(body))
	}
	if r := run(map[string]any{"upload_path": "/reports/today.bin", "remove_source": true}); r.Return != true {
		t.Fatalf("cp.push upload_path= remove_source=True = %+v", r)
	}
	if got, err := os.ReadFile(filepath.Join(cachedir, "minions", "web01", "files", "reports", "today.bin")); err != nil || !bytes.Equal(got, body) {
		t.Errorf("upload_path: %d bytes, %v", len(got), err)
	}
	if _, err := os.Stat(src); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove_source=True kept %s: %v", src, err)
	}
}

// defaultWait is how long the end-to-end test waits for a return.
const defaultWait = 20 * time.Second

// waitConnected waits until agent id is connected to m.
func waitConnected(t *testing.T, m *Master, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !slices.Contains(m.agents.Connected(), id) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never connected", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
