package cp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
)

func TestCp(t *testing.T) {
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {"lab/a.sh": "A", "lab/sub/b.txt": "B", "top.sls": "T"}}}
	reg, err := modules.Registry(&modules.Env{Files: files}, Module)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, kw map[string]any) (any, error) {
		return reg.Call(context.Background(), name, nil, kw, nil)
	}
	dest := t.TempDir()
	if got, err := call("cp.get_file", map[string]any{"path": "salt://lab/a.sh", "dest": dest}); err != nil || got != filepath.Join(dest, "a.sh") {
		t.Errorf("get_file into a directory = %v, %v", got, err)
	}
	deep := filepath.Join(dest, "x", "y", "a")
	if _, err := call("cp.get_file", map[string]any{"path": "salt://lab/a.sh", "dest": deep}); err == nil {
		t.Error("get_file into a missing directory without makedirs: no error")
	}
	if got, err := call("cp.get_file", map[string]any{"path": "salt://lab/a.sh", "dest": deep, "makedirs": true}); err != nil || got != deep {
		t.Errorf("get_file makedirs=True = %v, %v", got, err)
	}
	if b, _ := os.ReadFile(deep); string(b) != "A" {
		t.Errorf("copied content %q", b)
	}
	if got, err := call("cp.get_file", map[string]any{"path": "salt://nope", "dest": dest}); err != nil || got != "" {
		t.Errorf("get_file of a missing file = %v, %v; want '' as Salt", got, err)
	}
	for _, kw := range []map[string]any{
		{"path": "/etc/passwd", "dest": dest},
		{"path": "salt://lab/a.sh", "dest": dest, "template": "jinja"},
	} {
		if _, err := call("cp.get_file", kw); err == nil {
			t.Errorf("get_file %v: no error", kw)
		}
	}
	got, err := call("cp.get_dir", map[string]any{"path": "salt://lab", "dest": dest})
	want := []any{filepath.Join(dest, "lab", "a.sh"), filepath.Join(dest, "lab", "sub", "b.txt")}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("get_dir = %v, %v; want %v", got, err, want)
	}
	if got, err := call("cp.list_master", map[string]any{"prefix": "lab/"}); err != nil || fmt.Sprint(got) != "[lab/a.sh lab/sub/b.txt]" {
		t.Errorf("list_master = %v, %v", got, err)
	}
	if got, err := call("cp.hash_file", map[string]any{"path": "salt://top.sls"}); err != nil || got.(map[string]any)["hash_type"] != "sha256" {
		t.Errorf("hash_file = %v, %v", got, err)
	}
	if got, err := call("cp.hash_file", map[string]any{"path": "salt://nope"}); err != nil || len(got.(map[string]any)) != 0 {
		t.Errorf("hash_file of a missing file = %v, %v; want {}", got, err)
	}
	if got, err := call("cp.cache_file", map[string]any{"path": "salt://top.sls"}); err != nil || !strings.HasSuffix(fmt.Sprint(got), "top.sls") {
		t.Errorf("cache_file = %v, %v", got, err)
	}

	// Without a master, salt:// is refused clearly.
	bare, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Call(context.Background(), "cp.list_master", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "needs a master") {
		t.Errorf("list_master without a master: %v", err)
	}
	var argErr *function.ArgError
	if _, err := bare.Call(context.Background(), "cp.get_file", nil, nil, nil); !errors.As(err, &argErr) {
		t.Errorf("get_file without arguments: %v", err)
	}
}

// TestListMaster checks cp.list_master and cp.list_master_dirs against
// what Salt 3006.6's file server (file_client local, the same tree as
// file_roots) answered: the prefix's slashes stripped, the paths starting
// with it (labx too for "lab/"), directories without the root itself.
// Salt also lists "empty", a directory holding no file, which the master's
// file list cannot tell of.
func TestListMaster(t *testing.T) {
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {
		"lab/a.sh": "A", "lab/sub/b.txt": "B", "top.sls": "T", "labx/c": "C", "lab/deep/er/d": "D"}}}
	reg, err := modules.Registry(&modules.Env{Files: files}, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ prefix, files, dirs string }{
		{"", "[lab/a.sh lab/deep/er/d lab/sub/b.txt labx/c top.sls]", "[lab lab/deep lab/deep/er lab/sub labx]"},
		{"lab", "[lab/a.sh lab/deep/er/d lab/sub/b.txt labx/c]", "[lab lab/deep lab/deep/er lab/sub labx]"},
		{"lab/", "[lab/a.sh lab/deep/er/d lab/sub/b.txt labx/c]", "[lab lab/deep lab/deep/er lab/sub labx]"},
		{"/lab/", "[lab/a.sh lab/deep/er/d lab/sub/b.txt labx/c]", "[lab lab/deep lab/deep/er lab/sub labx]"},
		{"la", "[lab/a.sh lab/deep/er/d lab/sub/b.txt labx/c]", "[lab lab/deep lab/deep/er lab/sub labx]"},
		{"lab/sub", "[lab/sub/b.txt]", "[lab/sub]"},
		{"nope", "[]", "[]"},
	} {
		kw := map[string]any{"prefix": tc.prefix}
		got, err := reg.Call(context.Background(), "cp.list_master", nil, kw, nil)
		if err != nil || fmt.Sprint(got) != tc.files {
			t.Errorf("list_master prefix=%q = %v, %v; want %s", tc.prefix, got, err, tc.files)
		}
		got, err = reg.Call(context.Background(), "cp.list_master_dirs", nil, kw, nil)
		if err != nil || fmt.Sprint(got) != tc.dirs {
			t.Errorf("list_master_dirs prefix=%q = %v, %v; want %s", tc.prefix, got, err, tc.dirs)
		}
	}
}

// TestListStates checks cp.list_states against what Salt 3006.6's
// fileclient (file_client local, the same tree as file_roots) answered.
func TestListStates(t *testing.T) {
	tree := map[string]string{}
	for _, f := range []string{"lab/a.sh", "top.sls", "init.sls", "a/init.sls", "a/b.sls", "a/b/init.sls", "x.y/z.sls", "README.SLS", "b/c/init.sls", "é.sls"} {
		tree[f] = "x"
	}
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": tree}}
	reg, err := modules.Registry(&modules.Env{Files: files}, Module)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reg.Call(context.Background(), "cp.list_states", nil, nil, nil)
	if want := "[a a.b b.c init top x.y.z é]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("list_states = %v, %v; Salt gives %s", got, err, want)
	}
}
