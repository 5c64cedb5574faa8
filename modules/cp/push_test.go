package cp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

// chunk is one PushFile call.
type chunk struct {
	Path      []string
	Loc, Size int64
	Data      []byte
}

// recordingMaster keeps the chunks pushed to it, refusing with refuse.
type recordingMaster struct {
	chunks []chunk
	refuse error
}

func (r *recordingMaster) PushFile(_ context.Context, path []string, loc, size int64, data []byte) error {
	if r.refuse != nil {
		return r.refuse
	}
	r.chunks = append(r.chunks, chunk{Path: path, Loc: loc, Size: size, Data: bytes.Clone(data)})
	return nil
}

func (r *recordingMaster) MineGet(context.Context, string, string, string) (map[string]any, error) {
	return nil, errors.New("unexpected mine.get")
}

func (r *recordingMaster) Progress(context.Context, string, map[string]any, int) error {
	return errors.New("unexpected progress")
}

func TestSplitPushPath(t *testing.T) {
	for in, want := range map[string][]string{
		"/etc/fstab": {"etc", "fstab"}, "//var/./log//syslog": {"var", "log", "syslog"}, "reports/a.txt": {"reports", "a.txt"},
		"/": nil,
	} {
		if got := SplitPushPath(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitPushPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPushChunks(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, pushChunk, pushChunk + 1, 2*pushChunk + 7} {
		m := &recordingMaster{}
		reg, err := modules.Registry(&modules.Env{ID: "web01", Master: m}, Module)
		if err != nil {
			t.Fatal(err)
		}
		body := bytes.Repeat([]byte{'x'}, size)
		src := filepath.Join(dir, "f")
		if err := os.WriteFile(src, body, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := reg.Call(context.Background(), "cp.push", []any{src}, nil, nil)
		if err != nil || got != true {
			t.Fatalf("cp.push of %d bytes = %v, %v", size, got, err)
		}
		var joined []byte
		for i, c := range m.chunks {
			if c.Loc != int64(len(joined)) || c.Size != int64(size) || !reflect.DeepEqual(c.Path, SplitPushPath(src)) {
				t.Errorf("%d bytes: chunk %d at %d of %d, path %v", size, i, c.Loc, c.Size, c.Path)
			}
			joined = append(joined, c.Data...)
		}
		if want := max(1, (size+pushChunk-1)/pushChunk); len(m.chunks) != want || !bytes.Equal(joined, body) {
			t.Errorf("%d bytes: %d chunks carrying %d bytes, want %d chunks", size, len(m.chunks), len(joined), want)
		}
	}
}

// What Salt answers False to is an error saying why here.
func TestPushRefusals(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "f")
	if err := os.WriteFile(src, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	m := &recordingMaster{}
	reg, err := modules.Registry(&modules.Env{ID: "web01", Master: m}, Module)
	if err != nil {
		t.Fatal(err)
	}
	call := func(args []any, kw map[string]any) error {
		_, err := reg.Call(context.Background(), "cp.push", args, kw, nil)
		return err
	}
	for _, tc := range []struct {
		args []any
		kw   map[string]any
		want string
	}{
		{[]any{"relative/f"}, nil, "want an absolute path"},
		{[]any{dir + "/../f"}, nil, "without ../"},
		{[]any{dir}, nil, "not a regular file"},
		{[]any{filepath.Join(dir, "missing")}, nil, "no such file"},
		{[]any{src}, map[string]any{"upload_path": "/a/../../etc/passwd"}, "upload_path"},
	} {
		if err := call(tc.args, tc.kw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cp.push %v %v: %v, want %q", tc.args, tc.kw, err, tc.want)
		}
	}
	if len(m.chunks) != 0 {
		t.Errorf("refused pushes sent %d chunks", len(m.chunks))
	}
	// A symbolic link is followed unless keep_symlinks=True (the path sent
	// is then the link's).
	if err := call([]any{filepath.Join(dir, "link")}, nil); err != nil || !reflect.DeepEqual(m.chunks[0].Path, SplitPushPath(src)) {
		t.Errorf("push of a link: %v, path %v", err, m.chunks)
	}
	m.chunks = nil
	if err := call([]any{filepath.Join(dir, "link")}, map[string]any{"keep_symlinks": true}); err != nil || !reflect.DeepEqual(m.chunks[0].Path, SplitPushPath(filepath.Join(dir, "link"))) {
		t.Errorf("push of a link, keep_symlinks=True: %v, path %v", err, m.chunks)
	}
	// The master's refusal is the error, and remove_source keeps the file.
	m.refuse = errors.New("file push refused: the master's file_recv is not True")
	if err := call([]any{src}, map[string]any{"remove_source": true}); err == nil || !strings.Contains(err.Error(), "file_recv is not True") {
		t.Errorf("refused by the master: %v", err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("remove_source removed a file the master refused: %v", err)
	}
	// Without a master: an error, not False.
	local, _ := modules.Registry(&modules.Env{ID: "web01"}, Module)
	if _, err := local.Call(context.Background(), "cp.push", []any{src}, nil, nil); err == nil {
		t.Error("cp.push without a master: no error")
	}
}

// cp.push_dir pushes each file under a directory, as Salt's: names
// matching glob only, under upload_path when given.
func TestPushDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.conf", "b.txt", "sub/c.conf"} {
		full := filepath.Join(dir, "etc", f)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A link to a directory is not entered.
	if err := os.Symlink(filepath.Join(dir, "etc", "sub"), filepath.Join(dir, "etc", "loop")); err != nil {
		t.Fatal(err)
	}
	m := &recordingMaster{}
	reg, err := modules.Registry(&modules.Env{ID: "web01", Master: m}, Module)
	if err != nil {
		t.Fatal(err)
	}
	sent := func() map[string]string {
		out := map[string]string{}
		for _, c := range m.chunks {
			out[strings.Join(c.Path, "/")] = string(c.Data)
		}
		m.chunks = nil
		return out
	}
	base := strings.Join(SplitPushPath(filepath.Join(dir, "etc")), "/")
	got, err := reg.Call(context.Background(), "cp.push_dir", []any{filepath.Join(dir, "etc")}, map[string]any{"glob": "*.conf"}, nil)
	want := map[string]string{base + "/a.conf": "a.conf", base + "/sub/c.conf": "sub/c.conf"}
	if s := sent(); err != nil || got != true || !reflect.DeepEqual(s, want) {
		t.Errorf("push_dir glob=*.conf = %v, %v; sent %v, want %v", got, err, s, want)
	}
	got, err = reg.Call(context.Background(), "cp.push_dir", []any{filepath.Join(dir, "etc")}, map[string]any{"upload_path": "/backup/etc/"}, nil)
	want = map[string]string{"backup/etc/a.conf": "a.conf", "backup/etc/b.txt": "b.txt", "backup/etc/sub/c.conf": "sub/c.conf"}
	if s := sent(); err != nil || got != true || !reflect.DeepEqual(s, want) {
		t.Errorf("push_dir upload_path=/backup/etc/ = %v, %v; sent %v, want %v", got, err, s, want)
	}
	if _, err := reg.Call(context.Background(), "cp.push_dir", []any{filepath.Join(dir, "etc")}, map[string]any{"glob": "*.none"}, nil); err == nil || !strings.Contains(err.Error(), "no file to push") {
		t.Errorf("push_dir matching nothing: %v", err)
	}
	if _, err := reg.Call(context.Background(), "cp.push_dir", []any{"etc"}, nil, nil); err == nil {
		t.Error("push_dir of a relative path: no error")
	}
}
