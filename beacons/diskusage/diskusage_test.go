package diskusage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules/disk"
)

// tmpfs mounts a 1 MiB tmpfs on a new directory (with a space in its
// name, which /proc/mounts escapes), unmounted when the test ends.
func tmpfs(t *testing.T, dir string) {
	t.Helper()
	testenv.NeedRoot(t, "the diskusage tests mount a tmpfs: run them as root")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount -t tmpfs %s: %v: %s", dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

func check(t *testing.T, cfg beacons.Config) []beacons.Event {
	t.Helper()
	b, err := Module.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// mine keeps the events of the mount points under parent (the machine's
// own filesystems may be over a threshold too).
func mine(evs []beacons.Event, parent string) []beacons.Event {
	var out []beacons.Event
	for _, ev := range evs {
		if strings.HasPrefix(ev.Data["mount"].(string), parent+"/") {
			out = append(out, ev)
		}
	}
	return out
}

// TestRealTmpfs fills a 1 MiB tmpfs to 150 of its 256 blocks (58.6%) and
// empties it again.
func TestRealTmpfs(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "disk one")
	tmpfs(t, dir)
	quoted := regexp.QuoteMeta(parent)
	full := []beacons.Event{{Key: dir, Data: map[string]any{"mount": dir, "diskusage": 58.6}}}
	cases := []struct {
		name        string
		cfg         beacons.Config
		full, empty []beacons.Event
	}{
		{"mount point", beacons.Config{dir: "50%"}, full, nil},
		{"threshold above", beacons.Config{dir: "60%"}, nil, nil},
		{"threshold reached exactly", beacons.Config{dir: 58.6}, full, nil},
		{"regular expression", beacons.Config{"^" + quoted + `/disk\s.*`: int64(50)}, full, nil},
		{"expression with its own $", beacons.Config{quoted + "/disk one$": "50%"}, full, nil},
		{"a prefix is not the mount point", beacons.Config{quoted + "/disk": "1%", dir: "99%"}, nil, nil},
		{"two keys, one event, the lower threshold", beacons.Config{dir: "90%", quoted + "/.*": "50%"}, full, nil},
		{"0% fires empty", beacons.Config{dir: "0%"}, full, []beacons.Event{{Key: dir, Data: map[string]any{"mount": dir, "diskusage": 0.0}}}},
	}
	file := filepath.Join(dir, "fill")
	if err := os.WriteFile(file, make([]byte, 150*4096), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if got := mine(check(t, tc.cfg), parent); !reflect.DeepEqual(got, tc.full) {
			t.Errorf("%s, filled: %#v\nwant %#v", tc.name, got, tc.full)
		}
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if got := mine(check(t, tc.cfg), parent); !reflect.DeepEqual(got, tc.empty) {
			t.Errorf("%s, emptied: %#v\nwant %#v", tc.name, got, tc.empty)
		}
	}
}

// TestRealOvermount mounts a second tmpfs over the first: the mount point
// is reported once, with the top filesystem's usage.
func TestRealOvermount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "over")
	tmpfs(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "under"), make([]byte, 200*4096), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpfs(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "top"), make([]byte, 64*4096), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []beacons.Event{{Key: dir, Data: map[string]any{"mount": dir, "diskusage": 25.0}}}
	if got := check(t, beacons.Config{dir: "10%"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("overmounted: %#v\nwant %#v", got, want)
	}
}

// TestRealRoot measures / as Salt's example configures it.
func TestRealRoot(t *testing.T) {
	u, err := Usage("/")
	if err != nil {
		t.Fatal(err)
	}
	want := []beacons.Event{{Key: "/", Data: map[string]any{"mount": "/", "diskusage": u}}}
	for _, key := range []string{"/", `^\/$`} {
		if got := check(t, beacons.Config{key: "0%"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s at 0%%: %#v\nwant %#v", key, got, want)
		}
	}
	if got := check(t, beacons.Config{"/": "100%"}); u < 100 && len(got) != 0 {
		t.Fatalf("/ at 100%% (%v%% used): %#v, want nothing", u, got)
	}
}

func TestNoMatch(t *testing.T) {
	b, err := Module.New(beacons.Config{"/no/such/mount": "50%", "/also/not/.*": "50%"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Check(context.Background())
	if want := "diskusage: no mount point matches /also/not/.*, /no/such/mount"; err == nil || err.Error() != want {
		t.Fatalf("Check = %v, want %q", err, want)
	}
	b.(*Beacon).mounts = func() ([]disk.Mount, error) { return nil, os.ErrNotExist }
	if _, err := b.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "diskusage: file does not exist") {
		t.Fatalf("Check without /proc/mounts = %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  beacons.Config
		want string
	}{
		{beacons.Config{}, "no mount point"},
		{beacons.Config{`^\/(?!home).*$`: "90%"}, `^\/(?!home).*$: not a regular expression of mount points (Go's RE2 syntax, without lookaheads): error parsing regexp: invalid or unsupported Perl syntax: ` + "`(?!`"},
		{beacons.Config{"/[a-": "90%"}, "/[a-: not a regular expression"},
		{beacons.Config{"/": "190%"}, "/: want a percentage from 0 to 100, got 190%"},
		{beacons.Config{"/": "full"}, `/: want a percentage such as 63%, got "full"`},
		{beacons.Config{"/": map[string]any{"percent": "50%"}}, "/: want a percentage such as 63%"},
	} {
		if _, err := Module.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
