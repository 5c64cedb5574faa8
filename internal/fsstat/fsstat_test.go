package fsstat

import (
	"os"
	"testing"
)

// The file system holding the temporary directory has a size, free space
// within it, and what users may have within what is free; a missing path
// is an error, not zeros.
func TestStatfs(t *testing.T) {
	st, err := Statfs(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if st.Bsize == 0 || st.Blocks == 0 {
		t.Errorf("Statfs(%s) = %+v, want a block size and blocks", os.TempDir(), st)
	}
	if st.Bfree > st.Blocks || st.Bavail > st.Bfree {
		t.Errorf("Statfs(%s) = %+v, want bavail ≤ bfree ≤ blocks", os.TempDir(), st)
	}
	if _, err := Statfs(os.TempDir() + "/no/such/dir"); err == nil {
		t.Error("Statfs of a missing directory: no error")
	}
}
