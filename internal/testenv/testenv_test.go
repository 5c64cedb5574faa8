package testenv

import (
	"os"
	"testing"
)

// fakeT records what NeedRoot does to a test.
type fakeT struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

func TestNeedRoot(t *testing.T) {
	f := &fakeT{}
	NeedRoot(f, "mounting a tmpfs")
	switch {
	case testing.Short() && !f.skipped:
		t.Error("under -short NeedRoot did not skip")
	case !testing.Short() && os.Geteuid() == 0 && (f.skipped || f.failed):
		t.Error("as root NeedRoot stopped the test")
	case !testing.Short() && os.Geteuid() != 0 && !f.failed:
		t.Error("without root NeedRoot did not fail")
	case !testing.Short() && f.skipped:
		t.Error("NeedRoot skipped outside -short")
	}
}
