package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	// A failing fill leaves the file as it was, and no temporary file.
	boom := errors.New("boom")
	if err := Write(path, 0o600, func(w io.Writer) error { w.Write([]byte("half")); return boom }); !errors.Is(err, boom) {
		t.Errorf("err %v, want boom", err)
	}
	b, err := os.ReadFile(path)
	st, _ := os.Stat(path)
	ents, _ := os.ReadDir(dir)
	if err != nil || string(b) != "one" || st.Mode().Perm() != 0o640 || len(ents) != 1 {
		t.Errorf("after a failed write: %q %v mode %v, %d entries", b, err, st.Mode().Perm(), len(ents))
	}
	if err := WriteBytes(filepath.Join(dir, "no", "such"), nil, 0o600); err == nil {
		t.Error("no error writing into a missing directory")
	}
}
