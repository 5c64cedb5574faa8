package file

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
)

func registry(t *testing.T) *function.Registry {
	t.Helper()
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func write(t *testing.T, p, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFunctions(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	f := write(t, filepath.Join(dir, "f.txt"), "hello\n", 0o644)
	noNL := write(t, filepath.Join(dir, "nonl"), "a", 0o600)
	empty := write(t, filepath.Join(dir, "empty"), "", 0o600)
	bin := write(t, filepath.Join(dir, "bin"), "\xff\xfe", 0o600)
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree, "a", "b", "c"), "x", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(f, link); err != nil {
		t.Fatal(err)
	}
	absent := filepath.Join(dir, "absent")
	cases := []struct {
		fun    string
		args   []any
		kwargs map[string]any
		want   any
		err    string
	}{
		{fun: "file.file_exists", args: []any{f}, want: true},
		{fun: "file.file_exists", args: []any{link}, want: true},
		{fun: "file.file_exists", args: []any{dir}, want: false},
		{fun: "file.file_exists", args: []any{absent}, want: false},
		{fun: "file.file_exists", args: []any{"f.txt"}, err: "file.file_exists: File path must be absolute: f.txt"},
		{fun: "file.file_exists", args: []any{"~/f.txt"}, want: true},
		{fun: "file.file_exists", err: "missing argument"},
		{fun: "file.directory_exists", args: []any{dir}, want: true},
		{fun: "file.directory_exists", args: []any{f}, want: false},
		{fun: "file.read", args: []any{f}, want: "hello\n"},
		{fun: "file.read", args: []any{f, true}, want: "hello\n"},
		{fun: "file.read", args: []any{absent}, err: "no such file or directory"},
		{fun: "file.read", args: []any{bin}, err: "is not UTF-8 text"},
		{fun: "file.write", args: []any{filepath.Join(dir, "w"), "one", 2, true}, want: `Wrote 3 lines to "` + dir + `/w"`},
		{fun: "file.read", args: []any{filepath.Join(dir, "w")}, want: "one\n2\nTrue\n"},
		{fun: "file.write", args: []any{filepath.Join(dir, "w")}, kwargs: map[string]any{"args": []any{"x"}}, want: `Wrote 1 lines to "` + dir + `/w"`},
		{fun: "file.read", args: []any{filepath.Join(dir, "w")}, want: "x\n"},
		{fun: "file.write", args: []any{filepath.Join(absent, "w"), "x"}, err: "no such file or directory"},
		{fun: "file.append", args: []any{noNL, "b", "c"}, want: `Wrote 2 lines to "` + noNL + `"`},
		{fun: "file.read", args: []any{noNL}, want: "a\nb\nc\n"},
		{fun: "file.append", args: []any{noNL}, kwargs: map[string]any{"args": "d"}, want: `Wrote 1 lines to "` + noNL + `"`},
		{fun: "file.read", args: []any{noNL}, want: "a\nb\nc\nd\n"},
		{fun: "file.append", args: []any{empty, "x"}, want: `Wrote 1 lines to "` + empty + `"`},
		{fun: "file.read", args: []any{empty}, want: "x\n"},
		{fun: "file.append", args: []any{absent, "x"}, err: "no such file or directory"},
		{fun: "file.get_mode", args: []any{f}, want: "0644"},
		{fun: "file.get_mode", args: []any{absent}, err: "file.get_mode: path not found: " + absent},
		{fun: "file.set_mode", args: []any{f, "600"}, want: "0600"},
		{fun: "file.set_mode", args: []any{f, "0o4755"}, want: "4755"},
		{fun: "file.set_mode", args: []any{f, 644}, want: "0644"},
		{fun: "file.set_mode", args: []any{f, "0"}, want: "0000"},
		{fun: "file.set_mode", args: []any{f, "0644"}, want: "0644"},
		{fun: "file.set_mode", args: []any{f, "9"}, err: "file.set_mode: Invalid Mode 9"},
		{fun: "file.set_mode", args: []any{absent, "644"}, err: absent + ": File not found"},
		{fun: "file.get_hash", args: []any{f}, want: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"},
		{fun: "file.get_hash", args: []any{f, "md5"}, want: "b1946ac92492d2347c6235b4d2611184"},
		{fun: "file.get_hash", args: []any{f, "sha1"}, want: "f572d396fae9206628714fb2ce00f72e94f2258f"},
		{fun: "file.get_hash", args: []any{f, "crc32"}, err: "invalid hash type: crc32"},
		{fun: "file.get_hash", args: []any{absent}, err: "no such file or directory"},
		{fun: "file.get_hash", args: []any{f}, kwargs: map[string]any{"chunk_size": 0}, err: "chunk_size must be positive"},
		{fun: "file.remove", args: []any{absent}, want: false},
		{fun: "file.remove", args: []any{link}, want: true},
		{fun: "file.file_exists", args: []any{f}, want: true},
		{fun: "file.remove", args: []any{tree}, want: true},
		{fun: "file.directory_exists", args: []any{tree}, want: false},
		{fun: "file.remove", args: []any{"tmp/x"}, err: "File path must be absolute: tmp/x"},
		{fun: "file.user_to_uid", args: []any{"root"}, want: 0},
		{fun: "file.user_to_uid", args: []any{"no-such-user-x"}, want: ""},
		{fun: "file.user_to_uid", args: []any{1234}, want: 1234},
		{fun: "file.user_to_uid", want: os.Geteuid()},
		{fun: "file.uid_to_user", args: []any{0}, want: "root"},
		{fun: "file.uid_to_user", args: []any{54321}, want: 54321},
		{fun: "file.group_to_gid", args: []any{"root"}, want: 0},
		{fun: "file.group_to_gid", args: []any{"no-such-group-x"}, want: ""},
		{fun: "file.group_to_gid", want: ""},
		{fun: "file.gid_to_group", args: []any{0}, want: "root"},
		{fun: "file.gid_to_group", args: []any{"root"}, want: "root"},
		{fun: "file.gid_to_group", args: []any{54321}, want: 54321},
		{fun: "file.gid_to_group", args: []any{"no-such-group-x"}, want: ""},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, tc.kwargs, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.fun, tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v %v = %#v, %v; want %#v", tc.fun, tc.args, tc.kwargs, got, err, tc.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "w")); err != nil || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("file.write's new file: %v, %v", fi, err)
	}
}

func TestStats(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	f := write(t, filepath.Join(dir, "f"), "hello\n", 0o640)
	mtime := time.Unix(1700000000, 250000000)
	if err := os.Chtimes(f, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	broken := filepath.Join(dir, "broken")
	for target, l := range map[string]string{"f": link, "gone/x": broken} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(f, &st); err != nil {
		t.Fatal(err)
	}
	me, _ := user.LookupId(strconv.Itoa(int(st.Uid)))
	grp, _ := user.LookupGroupId(strconv.Itoa(int(st.Gid)))
	got, err := reg.Call(context.Background(), "file.stats", []any{link}, map[string]any{"hash_type": "md5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	want := map[string]any{"inode": st.Ino, "uid": int(st.Uid), "gid": int(st.Gid), "user": me.Username, "group": grp.Name,
		"atime": 1700000000.25, "mtime": 1700000000.25, "size": int64(6), "mode": "0640", "type": "file",
		"target": f, "sum": "b1946ac92492d2347c6235b4d2611184"}
	ctime, ok := m["ctime"].(float64)
	if !ok || ctime < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("ctime %v", m["ctime"])
	}
	delete(m, "ctime")
	if !reflect.DeepEqual(m, want) {
		t.Errorf("file.stats = %#v\nwant %#v", m, want)
	}
	for _, tc := range []struct {
		path   string
		follow bool
		typ    string
		target string
	}{
		{link, false, "link", f},
		{broken, true, "link", filepath.Join(dir, "gone/x")},
		{dir, true, "dir", dir},
		{"/dev/null", true, "char", "/dev/null"},
	} {
		got, err := reg.Call(context.Background(), "file.stats", []any{tc.path}, map[string]any{"follow_symlinks": tc.follow}, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if m := got.(map[string]any); m["type"] != tc.typ || m["target"] != tc.target || m["sum"] != nil {
			t.Errorf("file.stats %s: type %v, target %v, sum %v", tc.path, m["type"], m["target"], m["sum"])
		}
	}
	for fun, want := range map[string]any{"file.get_uid": int(st.Uid), "file.get_gid": int(st.Gid),
		"file.get_user": me.Username, "file.get_group": grp.Name} {
		if got, err := reg.Call(context.Background(), fun, []any{f}, nil, nil); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", fun, got, err, want)
		}
	}
	if _, err := reg.Call(context.Background(), "file.stats", []any{filepath.Join(dir, "absent")}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "path not found") {
		t.Errorf("file.stats of an absent path: %v", err)
	}
	if _, err := reg.Call(context.Background(), "file.stats", []any{dir}, map[string]any{"hash_type": "sha256"}, nil); err == nil {
		t.Error("file.stats hashed a directory")
	}
}

func TestTouch(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "new")
	before := time.Now().Add(-time.Second)
	if got, err := reg.Call(context.Background(), "file.touch", []any{p}, nil, nil); got != true || err != nil {
		t.Fatalf("file.touch = %v, %v", got, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != 0 || fi.ModTime().Before(before) {
		t.Fatalf("touched file: %v, %v", fi, err)
	}
	if _, err := reg.Call(context.Background(), "file.touch", []any{p, "1600000000", 1500000000}, nil, nil); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil || st.Atim.Sec != 1600000000 || st.Mtim.Sec != 1500000000 {
		t.Errorf("times: atime %d mtime %d, %v", st.Atim.Sec, st.Mtim.Sec, err)
	}
	if _, err := reg.Call(context.Background(), "file.touch", []any{p}, map[string]any{"mtime": 1400000000}, nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(p, &st); err != nil || st.Mtim.Sec != 1400000000 || st.Atim.Sec < before.Unix() {
		t.Errorf("mtime only: atime %d mtime %d, %v", st.Atim.Sec, st.Mtim.Sec, err)
	}
	for _, tc := range []struct {
		args []any
		err  string
	}{
		{[]any{p, "yesterday"}, "wrong argument type"},
		{[]any{filepath.Join(dir, "absent", "x")}, "no such file or directory"},
		{[]any{"rel"}, "File path must be absolute"},
	} {
		if _, err := reg.Call(context.Background(), "file.touch", tc.args, nil, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("file.touch %v: %v, want %q", tc.args, err, tc.err)
		}
	}
}

func TestMkdir(t *testing.T) {
	reg := registry(t)
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "c")
	if got, err := reg.Call(context.Background(), "file.mkdir", []any{deep}, map[string]any{"mode": "750"}, nil); got != true || err != nil {
		t.Fatalf("file.mkdir = %v, %v", got, err)
	}
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
			t.Errorf("%s: %v, %v", d, fi, err)
		}
	}
	// Existing directories are left as they are.
	if got, err := reg.Call(context.Background(), "file.mkdir", []any{deep}, map[string]any{"mode": "700"}, nil); got != true || err != nil {
		t.Fatalf("file.mkdir again = %v, %v", got, err)
	}
	if fi, _ := os.Stat(deep); fi.Mode().Perm() != 0o750 {
		t.Errorf("an existing directory's mode changed: %v", fi.Mode())
	}
	f := write(t, filepath.Join(dir, "file"), "", 0o600)
	for _, tc := range []struct {
		args   []any
		kwargs map[string]any
		err    string
	}{
		{[]any{filepath.Join(f, "x")}, nil, "exists and is not a directory"},
		{[]any{filepath.Join(dir, "m")}, map[string]any{"mode": "999"}, `invalid mode "999"`},
		{[]any{filepath.Join(dir, "u")}, map[string]any{"user": "no-such-user-x"}, "User does not exist"},
		{[]any{"rel/dir"}, nil, "File path must be absolute"},
	} {
		if _, err := reg.Call(context.Background(), "file.mkdir", tc.args, tc.kwargs, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("file.mkdir %v %v: %v, want %q", tc.args, tc.kwargs, err, tc.err)
		}
	}
	testenv.NeedRoot(t, "owners can only be changed as root: run these tests as root")
	owned := filepath.Join(dir, "owned", "sub")
	if _, err := reg.Call(context.Background(), "file.mkdir", []any{owned, "nobody", "nogroup"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	nobody, _ := user.Lookup("nobody")
	nogroup, _ := user.LookupGroup("nogroup")
	for _, d := range []string{filepath.Dir(owned), owned} {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil || strconv.Itoa(int(st.Uid)) != nobody.Uid || strconv.Itoa(int(st.Gid)) != nogroup.Gid {
			t.Errorf("%s owned by %d:%d, %v", d, st.Uid, st.Gid, err)
		}
	}
}

func TestChown(t *testing.T) {
	testenv.NeedRoot(t, "owners can only be changed as root: run these tests as root")
	reg := registry(t)
	dir := t.TempDir()
	f := write(t, filepath.Join(dir, "f"), "", 0o600)
	broken := filepath.Join(dir, "broken")
	if err := os.Symlink("gone", broken); err != nil {
		t.Fatal(err)
	}
	nobody, _ := user.Lookup("nobody")
	nogroup, _ := user.LookupGroup("nogroup")
	owner := func(p string) string {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return strconv.Itoa(int(st.Uid)) + ":" + strconv.Itoa(int(st.Gid))
	}
	cases := []struct {
		fun  string
		args []any
		want string
		err  string
	}{
		{"file.chown", []any{f, "nobody", "nogroup"}, nobody.Uid + ":" + nogroup.Gid, ""},
		{"file.chown", []any{f, "root", ""}, "0:" + nogroup.Gid, ""},
		{"file.chown", []any{f, "", 0}, "0:0", ""},
		{"file.chown", []any{f, 4321, "4321"}, "4321:4321", ""},
		{"file.chown", []any{f, nil, "root"}, strconv.Itoa(os.Geteuid()) + ":0", ""},
		{"file.chgrp", []any{f, "nogroup"}, "0:" + nogroup.Gid, ""},
		{"file.chown", []any{broken, "nobody", "nogroup"}, nobody.Uid + ":" + nogroup.Gid, ""},
		{"file.chown", []any{f, "no-such-user-x", "no-such-group-x"}, "", "file.chown: User does not exist; Group does not exist"},
		{"file.chown", []any{filepath.Join(dir, "absent"), "root", "root"}, "", "File not found"},
		{"file.chown", []any{f, "root"}, "", "missing argument"},
	}
	for _, tc := range cases {
		got, err := reg.Call(context.Background(), tc.fun, tc.args, nil, nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.fun, tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != nil || owner(tc.args[0].(string)) != tc.want {
			t.Errorf("%s %v = %v, %v; owner %s, want %s", tc.fun, tc.args, got, err, owner(tc.args[0].(string)), tc.want)
		}
	}
}

// TestCheckHash: file.check_hash takes Salt's three spellings of a hash
// (packages-formula's module.run checks a download with it).
func TestCheckHash(t *testing.T) {
	reg := registry(t)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hash    any
		want    any
		wantErr string
	}{
		{"b1946ac92492d2347c6235b4d2611184", true, ""},
		{"md5=b1946ac92492d2347c6235b4d2611184", true, ""},
		{"sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03", true, ""},
		{"sha256:0000000000000000000000000000000000000000000000000000000000000000", false, ""},
		{"abc", nil, "Hash abc (length: 3) could not be matched to a supported hash type"},
		{int64(5), nil, "hash must be a string"},
	} {
		got, err := reg.Call(context.Background(), "file.check_hash", []any{p, tc.hash}, nil, nil)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("check_hash %v: %v, %v; want an error saying %q", tc.hash, got, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("check_hash %v = %v, %v; want %v", tc.hash, got, err, tc.want)
		}
	}
}
