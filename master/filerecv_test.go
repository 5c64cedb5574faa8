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
	"strings"
	"testing"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/wire"
)

// The master's side of cp.push, Salt's _file_recv: off unless file_recv,
// bounded by file_recv_max_size, confined to cachedir/minions/<id>/files.
func TestFileRecv(t *testing.T) {
	cachedir := t.TempDir()
	outside := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	recv := func(c *config.Master) *fileRecv { return &fileRecv{cfg: func() *config.Master { return c }, log: log} }
	on := recv(testConfig(t, fmt.Sprintf("file_recv: True\nfile_recv_max_size: 1\ncachedir: %s\n", cachedir)))
	off := recv(testConfig(t, ""))
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
	if _, err := os.Stat(filepath.Join(off.cfg().Settings.DataDir, "cache")); !errors.Is(err, os.ErrNotExist) {
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
	def := recv(testConfig(t, "file_recv: true\n"))
	if err := push(def, "web01", wire.FilePush{Path: []string{"f"}, Size: 1, Data: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(def.cfg().Settings.DataDir, "cache", "minions", "web01", "files", "f")); err != nil {
		t.Errorf("default cachedir: %v", err)
	}
}

// cp.push's chunks through an agent transport to a master with
// file_recv: True: kept whole once the last arrives, under the id the
// connection was accepted as (the agent's side, the chunking, is
// modules/cp's test; the whole way, e2e's).
func TestCpPushThroughTheSeam(t *testing.T) {
	cachedir := t.TempDir()
	_, mt := startWith(t, testConfig(t, fmt.Sprintf("auto_accept: true\nfile_recv: true\ncachedir: %s\n", cachedir)))
	web := mt.dial("key-web01")
	hello(t, web, "web01")
	body := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640000 bytes: three chunks
	path := []string{"reports", "today.bin"}
	kept := filepath.Join(cachedir, "minions", "web01", "files", "reports", "today.bin")
	for loc := 0; loc < len(body); loc += 256 << 10 {
		if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the file is in place before its last chunk: %v", err)
		}
		chunk := body[loc:min(loc+256<<10, len(body))]
		if err := web.call(wire.MethodFilePush, wire.FilePush{Path: path, Loc: int64(loc), Size: int64(len(body)), Data: chunk}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(kept); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("pushed file: %d bytes, %v; want %d bytes", len(got), err, len(body))
	}
	// A connection not accepted pushes nothing.
	stranger := mt.dial("key-x")
	if err := stranger.call(wire.MethodFilePush, wire.FilePush{Path: []string{"x"}, Size: 1, Data: []byte("x")}, nil); !errors.Is(err, wire.ErrNotAccepted) {
		t.Errorf("a push before hello: %v, want ErrNotAccepted", err)
	}
}
