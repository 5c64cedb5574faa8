package archive

import (
	"archive/tar"
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// fixture builds app-1.0/{README,bin/run,LINK->README} and the archives
// of it Salt 3006.6 was run on (tar's own command for tar.gz, tar.bz2 and
// tar.xz, Go's zip writer for zip), and flat.tar.gz holding a and b.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "app-1.0")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "bin"), 0o755))
	must(os.WriteFile(filepath.Join(src, "README"), []byte("hi\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "bin", "run"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("README", filepath.Join(src, "LINK")))
	must(os.MkdirAll(filepath.Join(dir, "src2"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "src2", "a"), []byte("a\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "src2", "b"), []byte("b\n"), 0o644))
	for _, c := range [][]string{
		{"src", "czf", "app.tar.gz", "app-1.0"}, {"src", "cjf", "app.tar.bz2", "app-1.0"},
		{"src", "cJf", "app.tar.xz", "app-1.0"}, {"src", "cf", "app.tar", "app-1.0"}, {"src2", "czf", "flat.tar.gz", "a", "b"},
	} {
		cmd := exec.Command("tar", append([]string{"-" + c[1], filepath.Join(dir, c[2]), "--sort=name"}, c[3:]...)...)
		cmd.Dir = filepath.Join(dir, c[0])
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tar (needs GNU tar, bzip2 and xz-utils installed): %v: %s", err, out)
		}
	}
	f, err := os.Create(filepath.Join(dir, "app.zip"))
	must(err)
	zw := zip.NewWriter(f)
	add := func(name string, mode os.FileMode, body string) {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		must(err)
		_, err = w.Write([]byte(body))
		must(err)
	}
	add("app-1.0/", os.ModeDir|0o755, "")
	add("app-1.0/LINK", os.ModeSymlink|0o777, "README")
	add("app-1.0/README", 0o644, "hi\n")
	add("app-1.0/bin/", os.ModeDir|0o755, "")
	add("app-1.0/bin/run", 0o755, "#!/bin/sh\n")
	must(zw.Close())
	must(f.Close())
	return dir
}

func registry(t *testing.T) *function.Registry {
	t.Helper()
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{CacheDir: t.TempDir()})); err != nil {
		t.Fatal(err)
	}
	return reg
}

func run(t *testing.T, reg *function.Registry, test bool, kwargs map[string]any) state.Result {
	t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test, Saltenv: "base"})
	out, err := reg.Call(ctx, "archive.extracted", nil, kwargs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out.(state.Result)
}

// TestExtracted holds what Salt 3006.6's archive.extracted returned on
// the same archives (salt-call --local), and checks the files extracted.
func TestExtracted(t *testing.T) {
	testenv.NeedRoot(t, "the archive tests extract as root (owners kept, user/group set): run them as root")
	dir := fixture(t)
	reg := registry(t)
	a := func(p string) string { return filepath.Join(dir, p) }
	raw, _ := os.ReadFile(a("app.tar.gz"))
	sum := sha256.Sum256(raw)
	appFiles := []any{"app-1.0", "app-1.0/LINK", "app-1.0/README", "app-1.0/bin", "app-1.0/bin/run"}
	missingNote := ", due to absence of one or more files/dirs"
	zeros := strings.Repeat("0", 64)
	cases := []struct {
		name    string
		test    bool
		kwargs  map[string]any
		result  any
		comment string
		changes map[string]any
	}{
		{"tar.gz, test mode", true, map[string]any{"name": a("out1/deep"), "source": a("app.tar.gz"),
			"source_hash": "sha256=" + hex.EncodeToString(sum[:])}, nil,
			"Archive " + a("app.tar.gz") + " would be extracted to " + a("out1/deep") + "/" + missingNote, nil},
		{"tar.gz, missing parents", false, map[string]any{"name": a("out1/deep"), "source": a("app.tar.gz"),
			"source_hash": "sha256=" + hex.EncodeToString(sum[:])}, true,
			a("app.tar.gz") + " extracted to " + a("out1/deep") + "/" + missingNote + ". Output was trimmed to False number of lines",
			map[string]any{"directories_created": []any{a("out1/deep") + "/"}, "extracted_files": appFiles}},
		{"tar.gz, second run", false, map[string]any{"name": a("out1/deep"), "source": a("app.tar.gz")}, true,
			"All files in archive are already present", nil},
		{"tar.gz, second run, test mode", true, map[string]any{"name": a("out1/deep"), "source": a("app.tar.gz")}, true,
			"All files in archive are already present", nil},
		{"zip, trim_output", false, map[string]any{"name": a("out2"), "source": a("app.zip"), "trim_output": int64(2)}, true,
			a("app.zip") + " extracted to " + a("out2") + "/" + missingNote + ". Output was trimmed to 2 number of lines",
			map[string]any{"directories_created": []any{a("out2") + "/"},
				"extracted_files": []any{"app-1.0/", "app-1.0/LINK", "List trimmed after 2 files."}}},
		{"zip, second run", false, map[string]any{"name": a("out2"), "source": a("app.zip")}, true,
			"All files in archive are already present", nil},
		{"tar.xz", false, map[string]any{"name": a("out3"), "source": a("app.tar.xz")}, true,
			a("app.tar.xz") + " extracted to " + a("out3") + "/" + missingNote + ". Output was trimmed to False number of lines",
			map[string]any{"directories_created": []any{a("out3") + "/"}, "extracted_files": appFiles}},
		{"no single top-level directory", false, map[string]any{"name": a("out4"), "source": a("flat.tar.gz")}, false,
			"Archive does not have a single top-level directory. To allow this archive to be extracted, set " +
				"'enforce_toplevel' to False. To avoid a 'tar-bomb' it may also be advisable to set a top-level directory " +
				"by adding it to the 'name' value (for example, setting 'name' to " + a("out4") + "/some_dir instead of " +
				a("out4") + "/).", nil},
		{"enforce_toplevel False", false, map[string]any{"name": a("out5"), "source": a("flat.tar.gz"), "enforce_toplevel": false},
			true, a("flat.tar.gz") + " extracted to " + a("out5") + "/" + missingNote + ". Output was trimmed to False number of lines",
			map[string]any{"directories_created": []any{a("out5") + "/"}, "extracted_files": []any{"a", "b"}}},
		{"if_missing exists", false, map[string]any{"name": a("out6"), "source": a("app.tar"), "if_missing": dir}, true,
			"Path " + dir + " exists", nil},
		{"bad hash", false, map[string]any{"name": a("out7"), "source": a("app.tar.gz"), "source_hash": "sha256=" + zeros}, false,
			a("app.tar.gz") + " does not match the desired source_hash " + zeros, nil},
		{"no source file", false, map[string]any{"name": a("out8"), "source": a("nope.tar.gz")}, false,
			"Source file '" + a("nope.tar.gz") + "' does not exist", nil},
		{"format unknown", false, map[string]any{"name": a("out9"), "source": a("src2/a")}, false,
			"Could not guess archive_format from the value of the 'source' argument. Please set this archive_format " +
				"to one of the following: tar, rar, zip", nil},
		{"relative name", false, map[string]any{"name": "out10", "source": a("app.tar")}, false, "out10 is not an absolute path", nil},
		{"tar.bz2, user and group", false, map[string]any{"name": a("out11"), "source": a("app.tar.bz2"), "user": "nobody",
			"group": "nogroup"}, true,
			a("app.tar.bz2") + " extracted to " + a("out11") + "/" + missingNote + ". Output was trimmed to False number of lines",
			map[string]any{"updated ownership": true, "directories_created": []any{a("out11") + "/"}, "extracted_files": appFiles}},
		{"tar.bz2, user and group, second run", false, map[string]any{"name": a("out11"), "source": a("app.tar.bz2"),
			"user": "nobody", "group": "nogroup"}, true, "All files in archive are already present", nil},
	}
	for _, c := range cases {
		r := run(t, reg, c.test, c.kwargs)
		if state.Value(r.Result) != c.result || r.Comment != c.comment || !reflect.DeepEqual(r.Changes, c.changes) &&
			!(len(r.Changes) == 0 && len(c.changes) == 0) {
			t.Errorf("%s: got %v %q %#v\nwant %v %q %#v", c.name, state.Value(r.Result), r.Comment, r.Changes, c.result, c.comment, c.changes)
		}
	}
	for _, out := range []string{"out1/deep", "out2", "out3", "out11"} {
		root := filepath.Join(a(out), "app-1.0")
		if b, err := os.ReadFile(filepath.Join(root, "README")); err != nil || string(b) != "hi\n" {
			t.Errorf("%s/README: %q %v", out, b, err)
		}
		if l, err := os.Readlink(filepath.Join(root, "LINK")); err != nil || l != "README" {
			t.Errorf("%s/LINK: %q %v", out, l, err)
		}
		if fi, err := os.Stat(filepath.Join(root, "bin", "run")); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s/bin/run: %v %v", out, fi, err)
		}
	}
	if _, err := os.Stat(a("out1")); err != nil {
		t.Errorf("missing parent of name not created: %v", err)
	}
	var st = func(p string) (string, string) {
		out, _ := exec.Command("stat", "-c", "%U %G", p).Output()
		u, g, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		return u, g
	}
	for _, p := range []string{"app-1.0", "app-1.0/README", "app-1.0/bin/run"} {
		if u, g := st(filepath.Join(a("out11"), p)); u != "nobody" || g != "nogroup" {
			t.Errorf("out11/%s owned by %s:%s, want nobody:nogroup", p, u, g)
		}
	}
}

// TestExtractedRefusesTraversal checks that an archive entry or link
// leaving the target fails the state before anything is written.
func TestExtractedRefusesTraversal(t *testing.T) {
	dir := t.TempDir()
	reg := registry(t)
	for _, c := range []struct {
		name    string
		entries []tar.Header
		want    string
	}{
		{"dotdot", []tar.Header{{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "top/../../evil", Typeflag: tar.TypeReg, Mode: 0o644}},
			"Refusing to extract the archive: its entry top/../../evil would be written outside "},
		{"absolute", []tar.Header{{Name: "/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644}},
			"Refusing to extract the archive: its entry /tmp/evil would be written outside "},
		{"symlink out", []tar.Header{{Name: "top/", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "top/etc", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, {Name: "top/ok", Typeflag: tar.TypeReg, Mode: 0o644}},
			"Refusing to extract the archive: its link top/etc -> /etc would point outside "},
	} {
		p := filepath.Join(dir, c.name+".tar")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		tw := tar.NewWriter(f)
		for _, h := range c.entries {
			h := h
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		dest := filepath.Join(dir, "out-"+c.name)
		r := run(t, reg, false, map[string]any{"name": dest, "source": p, "enforce_toplevel": false})
		if state.Value(r.Result) != false || !strings.HasPrefix(r.Comment, c.want) {
			t.Errorf("%s: got %v %q, want failure %q…", c.name, state.Value(r.Result), r.Comment, c.want)
		}
		if _, err := os.Stat(filepath.Join(dest, "top", "ok")); err == nil {
			t.Errorf("%s: entries were extracted before the refusal", c.name)
		}
		if _, err := os.Stat(filepath.Join(dir, "evil")); err == nil {
			t.Errorf("%s: evil written outside the target", c.name)
		}
	}
}

// TestExtractedRemote holds what Salt 3006.6 returned for http sources
// (salt-call --local against a local HTTP server) and extracts a
// salt:// source from the file server.
func TestExtractedRemote(t *testing.T) {
	dir := fixture(t)
	raw, err := os.ReadFile(filepath.Join(dir, "app.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	hash := hex.EncodeToString(sum[:])
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	cache := t.TempDir()
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {"pkgs/app.tar.gz": string(raw)}}}
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{CacheDir: cache, Files: files})); err != nil {
		t.Fatal(err)
	}
	appFiles := []any{"app-1.0", "app-1.0/LINK", "app-1.0/README", "app-1.0/bin", "app-1.0/bin/run"}
	src := srv.URL + "/app.tar.gz"
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "http://"), ":", "")
	zeros := strings.Repeat("0", 64)
	out := func(n string) string { return filepath.Join(dir, n) }
	extractedTo := func(source, n string) string {
		return source + " extracted to " + out(n) + "/, due to absence of one or more files/dirs. Output was trimmed to False number of lines"
	}
	for _, c := range []struct {
		name    string
		test    bool
		kwargs  map[string]any
		result  any
		comment string
		changes map[string]any
	}{
		{"http, test mode", true, map[string]any{"name": out("outh1"), "source": src}, nil,
			"Archive " + src + " would be cached (if necessary) and checked to discover if extraction is needed", nil},
		{"http without source_hash", false, map[string]any{"name": out("outh1"), "source": src}, false,
			"Unable to verify upstream hash of source file " + src + ", please set source_hash or set skip_verify or use_etag to True", nil},
		{"http with source_hash", false, map[string]any{"name": out("outh2"), "source": src, "source_hash": "sha256=" + hash}, true,
			extractedTo(src, "outh2"), map[string]any{"directories_created": []any{out("outh2") + "/"}, "extracted_files": appFiles}},
		{"http, skip_verify", false, map[string]any{"name": out("outh3"), "source": src, "skip_verify": true}, true,
			extractedTo(src, "outh3"), map[string]any{"directories_created": []any{out("outh3") + "/"}, "extracted_files": appFiles}},
		{"http, wrong hash", false, map[string]any{"name": out("outh4"), "source": src, "source_hash": "sha256=" + zeros}, false,
			"File is cached to " + filepath.Join(cache, "extrn_files", "base", host, "app.tar.gz") + ", but the hash (" + hash +
				") does not match the specified hash (" + zeros + ")", nil},
		{"http, missing", false, map[string]any{"name": out("outh5"), "source": srv.URL + "/nope.tar.gz", "skip_verify": true},
			false, "Error: HTTP 404: Not Found reading /nope.tar.gz", nil},
		{"salt://, test mode", true, map[string]any{"name": out("outs"), "source": "salt://pkgs/app.tar.gz"}, nil,
			"Archive salt://pkgs/app.tar.gz would be cached (if necessary) and checked to discover if extraction is needed", nil},
		{"salt://", false, map[string]any{"name": out("outs"), "source": "salt://pkgs/app.tar.gz"}, true,
			extractedTo("salt://pkgs/app.tar.gz", "outs"),
			map[string]any{"directories_created": []any{out("outs") + "/"}, "extracted_files": appFiles}},
		{"salt://, second run", false, map[string]any{"name": out("outs"), "source": "salt://pkgs/app.tar.gz"}, true,
			"All files in archive are already present", nil},
	} {
		r := run(t, reg, c.test, c.kwargs)
		comment := c.comment
		if state.Value(r.Result) != c.result || r.Comment != comment || !reflect.DeepEqual(r.Changes, c.changes) &&
			!(len(r.Changes) == 0 && len(c.changes) == 0) {
			t.Errorf("%s: got %v %q %#v\nwant %v %q %#v", c.name, state.Value(r.Result), r.Comment, r.Changes, c.result, comment, c.changes)
		}
	}
	for _, n := range []string{"outh2", "outh3", "outs"} {
		if b, err := os.ReadFile(filepath.Join(out(n), "app-1.0", "README")); err != nil || string(b) != "hi\n" {
			t.Errorf("%s/app-1.0/README: %q %v", n, b, err)
		}
	}
	for _, n := range []string{"outh1", "outh4", "outh5"} {
		if _, err := os.Stat(out(n)); err == nil {
			t.Errorf("%s was made", n)
		}
	}
}

// TestExtractedOverExisting holds what Salt 3006.6 returned extracting
// over directories that hold some of the archive already, or paths of
// the wrong type (salt-call --local, test mode then for real), and tar
// options (--strip-components, run by tar's own command).
func TestExtractedOverExisting(t *testing.T) {
	testenv.NeedRoot(t, "the archive tests extract as root (owners kept): run them as root")
	dir := fixture(t)
	reg := registry(t)
	a := func(p string) string { return filepath.Join(dir, p) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []string{"o3", "o4", "o5"} {
		must(os.MkdirAll(a(o+"/app-1.0/bin"), 0o755))
		must(os.WriteFile(a(o+"/app-1.0/bin/run"), []byte("x\n"), 0o644))
		must(os.Symlink("README", a(o+"/app-1.0/LINK")))
	}
	must(os.MkdirAll(a("o2/app-1.0"), 0o755))
	must(os.WriteFile(a("o2/app-1.0/stale"), []byte("stale\n"), 0o644))
	must(os.WriteFile(a("o3/app-1.0/README"), []byte("old\n"), 0o644))
	must(os.Mkdir(a("o4/app-1.0/README"), 0o755))
	must(os.Mkdir(a("o5/app-1.0/README"), 0o755))
	tarGz, tarball := a("app.tar.gz"), a("app.tar")
	appFiles := []any{"app-1.0", "app-1.0/LINK", "app-1.0/README", "app-1.0/bin", "app-1.0/bin/run"}
	missing := ", due to absence of one or more files/dirs"
	trimmed := ". Output was trimmed to False number of lines"
	wrongType := "The below paths (relative to " + a("o4") + "/) exist, but are the incorrect type (file instead of directory, " +
		"symlink instead of file, etc.). To proceed with extraction, set 'force' to True. Note that this will remove these " +
		"paths before extracting.\n\n- app-1.0/README"
	sls := []map[string]any{
		{"name": a("o1"), "source": tarGz, "options": "--strip-components=1", "enforce_toplevel": false},
		{"name": a("o2"), "source": tarGz, "clean": true},
		{"name": a("o3"), "source": tarball, "overwrite": true},
		{"name": a("o4"), "source": tarball},
		{"name": a("o5"), "source": tarball, "force": true},
		{"name": a("o6"), "source": tarball, "trim_output": int64(2)},
	}
	type want struct {
		result  any
		comment string
		changes map[string]any
	}
	for _, pass := range []struct {
		test  bool
		wants []want
	}{
		{true, []want{
			{nil, "Archive " + tarGz + " would be extracted to " + a("o1") + "/" + missing, nil},
			{nil, "Archive " + tarGz + " would be extracted to " + a("o2") + "/, after cleaning destination path(s)" + missing, nil},
			{nil, "Archive " + tarball + " would be extracted to " + a("o3") + "/", nil},
			{false, wrongType, nil},
			{nil, "Archive " + tarball + " would be extracted to " + a("o5") + "/", map[string]any{"removed": []any{a("o5/app-1.0/README")}}},
			{nil, "Archive " + tarball + " would be extracted to " + a("o6") + "/" + missing, nil},
		}},
		{false, []want{
			{true, tarGz + " extracted to " + a("o1") + "/" + missing + trimmed, map[string]any{
				"directories_created": []any{a("o1") + "/"},
				"extracted_files":     []any{"app-1.0/LINK", "app-1.0/README", "app-1.0/bin/", "app-1.0/bin/run"}}},
			{true, tarGz + " extracted to " + a("o2") + "/" + missing + trimmed, map[string]any{
				"removed": []any{a("o2/app-1.0") + "/"}, "extracted_files": appFiles}},
			{true, tarball + " extracted to " + a("o3") + "/" + trimmed, map[string]any{"extracted_files": appFiles}},
			{false, wrongType, nil},
			{true, tarball + " extracted to " + a("o5") + "/" + trimmed, map[string]any{
				"removed": []any{a("o5/app-1.0/README")}, "extracted_files": appFiles}},
			{true, tarball + " extracted to " + a("o6") + "/" + missing + ". Output was trimmed to 2 number of lines", map[string]any{
				"directories_created": []any{a("o6") + "/"}, "extracted_files": []any{"app-1.0", "app-1.0/LINK"}}},
		}},
	} {
		for i, kw := range sls {
			r, w := run(t, reg, pass.test, kw), pass.wants[i]
			if state.Value(r.Result) != w.result || r.Comment != w.comment || !reflect.DeepEqual(r.Changes, w.changes) &&
				!(len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("test=%v, %s: got %v %q %#v\nwant %v %q %#v", pass.test, kw["name"], state.Value(r.Result), r.Comment, r.Changes,
					w.result, w.comment, w.changes)
			}
		}
		if pass.test {
			if fi, err := os.Stat(a("o5/app-1.0/README")); err != nil || !fi.IsDir() {
				t.Error("test mode removed o5/app-1.0/README (Salt does; brine must not)")
			}
		}
	}
	for p, want := range map[string]string{"o1/README": "hi\n", "o2/app-1.0/README": "hi\n", "o3/app-1.0/README": "hi\n",
		"o5/app-1.0/README": "hi\n", "o3/app-1.0/bin/run": "#!/bin/sh\n"} {
		if b, err := os.ReadFile(a(p)); err != nil || string(b) != want {
			t.Errorf("%s holds %q (%v), want %q", p, b, err, want)
		}
	}
	if _, err := os.Stat(a("o2/app-1.0/stale")); err == nil {
		t.Error("clean left o2/app-1.0/stale")
	}
}

// TestExtractedRefusesSymlinkOnDisk: a directory of the target that is a
// symlink leading out (put there before the run) does not take the
// archive's files out of the target.
func TestExtractedRefusesSymlinkOnDisk(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	dest := filepath.Join(dir, "dest")
	for _, d := range []string{outside, dest} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dest, "top")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	// No entry for top/ itself: nothing says top must be a directory, so
	// the type check does not remove the link.
	for _, h := range []tar.Header{{Name: "top/evil", Typeflag: tar.TypeReg, Mode: 0o644}} {
		h := h
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := run(t, registry(t), false, map[string]any{"name": dest, "source": p})
	if state.Value(r.Result) != false || !strings.HasPrefix(r.Comment, "Refusing to extract the archive: its entry top") {
		t.Errorf("got %v %q, want a refusal", state.Value(r.Result), r.Comment)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Error("evil was written through the symlink")
	}
}

// TestExtractedHashFiles holds what Salt 3006.6 returned for source_hash
// given as a file of hashes (sha256sum's output, read by the line naming
// the source or source_hash_name; a file with one hash).
func TestExtractedHashFiles(t *testing.T) {
	dir := fixture(t)
	reg := registry(t)
	a := func(p string) string { return filepath.Join(dir, p) }
	hashOf := func(p string) string {
		raw, err := os.ReadFile(a(p))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		return hex.EncodeToString(sum[:])
	}
	zeros := strings.Repeat("0", 64)
	sums := hashOf("app.tar.gz") + "  app.tar.gz\n" + hashOf("app.zip") + "  app.zip\n" + zeros + "  other.tar.gz\n"
	for p, body := range map[string]string{"SHA256SUMS": sums, "ONE": hashOf("app.tar") + "\n", "BAD": "just garbage\n"} {
		if err := os.WriteFile(a(p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	extracted := ", due to absence of one or more files/dirs. Output was trimmed to False number of lines"
	for _, c := range []struct {
		name    string
		kwargs  map[string]any
		result  any
		comment string
	}{
		{"the source's line", map[string]any{"name": a("p1"), "source": a("app.tar.gz"), "source_hash": a("SHA256SUMS")}, true,
			a("app.tar.gz") + " extracted to " + a("p1") + "/" + extracted},
		{"source_hash_name's line", map[string]any{"name": a("p3"), "source": a("app.tar.gz"), "source_hash": a("SHA256SUMS"),
			"source_hash_name": "other.tar.gz"}, false, a("app.tar.gz") + " does not match the desired source_hash " + zeros},
		{"one hash, file://", map[string]any{"name": a("p4"), "source": a("app.tar"), "source_hash": "file://" + a("ONE")}, true,
			a("app.tar") + " extracted to " + a("p4") + "/" + extracted},
		{"no hash in the file", map[string]any{"name": a("p5"), "source": a("app.tar"), "source_hash": a("BAD")}, false,
			"Source hash " + a("BAD") + " format is invalid. The supported formats are: 1) a hash, 2) an expression in the format " +
				"<hash_type>=<hash>, or 3) either a path to a local file containing hashes, or a URI of a remote hash file. " +
				"Supported protocols for remote hash files are: salt, file, http, https, ftp, swift, s3. The hash may also not " +
				"be of a valid length, the following are supported hash types and lengths: md5 (32), sha1 (40), sha224 (56), " +
				"sha256 (64), sha384 (96), sha512 (128)."},
		{"no such file", map[string]any{"name": a("p6"), "source": a("app.tar"), "source_hash": a("NOPE")}, false,
			"Source hash file " + a("NOPE") + " not found"},
	} {
		r := run(t, reg, false, c.kwargs)
		if state.Value(r.Result) != c.result || r.Comment != c.comment {
			t.Errorf("%s: got %v %q\nwant %v %q", c.name, state.Value(r.Result), r.Comment, c.result, c.comment)
		}
	}
}
