//go:build !linux

package pkg

import (
	"strings"
	"testing"
)

// Every pkg function refuses with what the system lacks, never an empty
// list that would read as "nothing installed".
func TestNotSupported(t *testing.T) {
	fns := map[string]bool{}
	for _, f := range (&Manager{}).Funcs() {
		fns[f.Name] = true
	}
	for _, name := range []string{"pkg.list_pkgs", "pkg.install", "pkg.version", "pkg.refresh_db", "pkg.remove"} {
		if !fns[name] {
			t.Fatalf("%s is not declared", name)
		}
	}
	_, err := (&Manager{}).backend()
	if err == nil || !strings.Contains(err.Error(), "pkg is not supported on") {
		t.Fatalf("backend: %v, want pkg is not supported", err)
	}
}
