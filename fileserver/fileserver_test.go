package fileserver

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindNeverLeavesTheRoots(t *testing.T) {
	base := t.TempDir()
	root, other := filepath.Join(base, "srv"), filepath.Join(base, "secret")
	write(t, filepath.Join(root, "apache", "map.sls"), "x")
	write(t, filepath.Join(other, "passwd"), "root:x:0:0")
	if err := os.Symlink(filepath.Join(other, "passwd"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "apache", "map.sls"), filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	r := Roots{"base": {root}}
	tests := []struct {
		name string
		want error // nil: found
	}{
		{"apache/map.sls", nil},
		{"inside", nil},
		{"../secret/passwd", ErrOutside},
		{"apache/../../secret/passwd", ErrOutside},
		{"link", ErrOutside},
		{"dirlink/passwd", ErrOutside},
		{"apache/map.sls\x00.txt", ErrOutside},
		{"nope.sls", ErrNotFound},
	}
	for _, tc := range tests {
		got, err := r.Find("base", tc.name)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("Find(%q): %v", tc.name, err)
		case tc.want == nil && !strings.HasPrefix(got, root+string(filepath.Separator)):
			t.Errorf("Find(%q) = %s, outside %s", tc.name, got, root)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("Find(%q) = %q, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := r.Find("prod", "apache/map.sls"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an environment without roots: %v", err)
	}
}

func TestConfine(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.sls"), "x")
	if _, err := Confine("/etc/passwd", []string{root}); !errors.Is(err, ErrOutside) {
		t.Errorf("/etc/passwd: %v", err)
	}
	if _, err := Confine(filepath.Join(root, "missing"), []string{root}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if p, err := Confine(filepath.Join(root, "a.sls"), []string{root}); err != nil || filepath.Base(p) != "a.sls" {
		t.Errorf("a.sls: %q, %v", p, err)
	}
}
