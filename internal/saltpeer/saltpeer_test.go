package saltpeer

import (
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestFindWithoutSalt: with no Salt tree to be had, the error says how to
// give one (a test then fails with it, never skips).
func TestFindWithoutSalt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		saltSrc string
		outside bool // run outside the repository: no ../shared/peers
		want    []string
	}{
		{"SALT_SRC not a Salt tree", t.TempDir(), false, []string{"SALT_SRC=", "not an unpacked Salt tree", "salt/crypt.py"}},
		{"no SALT_SRC, no repository", "", true, []string{"no Salt tree", "set SALT_SRC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SALT_SRC", tc.saltSrc)
			if tc.outside {
				t.Chdir(t.TempDir())
			}
			_, err := find()
			if err == nil {
				t.Fatal("found a Salt tree")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestCommand runs salt-call from the tree Find gives, as the system
// tests run salt-minion.
func TestCommand(t *testing.T) {
	out, err := Command(Tree(t), "salt-call", "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "salt-call 3006.6") {
		t.Fatalf("salt-call --version: %v: %s", err, out)
	}
}
