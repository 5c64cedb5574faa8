package mount

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/state"
)

// TestStates mounts, remounts and unmounts a real tmpfs in a temporary
// directory, with a temporary fstab; comments, changes and fstab lines
// are what Salt 3006.6's mount states answered and wrote for the same
// steps (salt-call on Debian 12), but where its mount cache names the
// options of a remount (see docs/states.md).
func TestStates(t *testing.T) {
	testenv.NeedRoot(t, "TestStates mounts a tmpfs: run the tests as root (CI does)")
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	fstab := filepath.Join(dir, "fstab")
	const head = "# fstab\nproc /proc proc defaults 0 0\n"
	if err := os.WriteFile(fstab, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	s := &states{mountinfo: "/proc/self/mountinfo"}
	reg := function.New()
	if err := reg.RegisterAll(s.funcs()); err != nil {
		t.Fatal(err)
	}
	mounted := func(opts string, extra ...any) map[string]any {
		kw := map[string]any{"name": mnt, "device": "tmpfs", "fstype": "tmpfs", "opts": opts, "config": fstab}
		for i := 0; i < len(extra); i += 2 {
			kw[extra[i].(string)] = extra[i+1]
		}
		return kw
	}
	unmounted := map[string]any{"name": mnt, "config": fstab, "persist": true}
	superopts := func() string {
		b, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == mnt {
				_, post, _ := strings.Cut(line, " - ")
				return f[5] + " - " + post
			}
		}
		return ""
	}
	for _, step := range []struct {
		what, fun string
		test      bool
		kwargs    map[string]any
		result    string
		comment   string
		changes   map[string]any
		mounted   string // mountinfo's options and file system afterwards, "" unmounted
		fstab     string
	}{
		{"mount, test mode", "mount.mounted", true, mounted("size=1m", "mkmnt", true), "None", mnt + " would be created and mounted", nil, "", head},
		{"mount, no directory", "mount.mounted", false, mounted("size=1m"), "False", "Mount directory is not present", nil, "", head},
		{"mount", "mount.mounted", false, mounted("size=1m", "mkmnt", true), "True", "Target was successfully mounted. Added new entry to the fstab.",
			map[string]any{"mount": true, "persist": "new"}, "rw,relatime - tmpfs tmpfs rw,size=1024k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=1m\t0 0\n"},
		{"mounted, test mode", "mount.mounted", true, mounted("size=1m", "mkmnt", true), "True", "Target was already mounted. Entry already exists in the fstab.",
			nil, "rw,relatime - tmpfs tmpfs rw,size=1024k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=1m\t0 0\n"},
		{"mounted", "mount.mounted", false, mounted("size=1m", "mkmnt", true), "True", "Target was already mounted. Entry already exists in the fstab.",
			nil, "rw,relatime - tmpfs tmpfs rw,size=1024k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=1m\t0 0\n"},
		{"new options, test mode", "mount.mounted", true, mounted("size=2m,noexec"), "None", "Remount would be forced because options (noexec,size=2048k) changed",
			nil, "rw,relatime - tmpfs tmpfs rw,size=1024k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=1m\t0 0\n"},
		{"new options", "mount.mounted", false, mounted("size=2m,noexec"), "True", "Target was already mounted. Updated the entry in the fstab.",
			map[string]any{"umount": "Forced remount because options (noexec,size=2048k) changed", "persist": "update"},
			"rw,noexec,relatime - tmpfs tmpfs rw,size=2048k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=2m,noexec\t0 0\n"},
		{"new options again", "mount.mounted", false, mounted("noexec,size=2m"), "True", "Target was already mounted. Entry already exists in the fstab.",
			nil, "rw,noexec,relatime - tmpfs tmpfs rw,size=2048k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=2m,noexec\t0 0\n"},
		{"not persisted", "mount.mounted", true, mounted("noexec,size=2m", "dump", int64(1)), "None",
			"Target was already mounted. " + mnt + " is mounted, but its fstab entry must be updated.",
			nil, "rw,noexec,relatime - tmpfs tmpfs rw,size=2048k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=2m,noexec\t0 0\n"},
		{"unmount, test mode", "mount.unmounted", true, unmounted, "None", "Mount point " + mnt + " is mounted but should not be",
			nil, "rw,noexec,relatime - tmpfs tmpfs rw,size=2048k", head + "tmpfs\t\t" + mnt + "\ttmpfs\tsize=2m,noexec\t0 0\n"},
		{"unmount", "mount.unmounted", false, unmounted, "True", "Target was successfully unmounted. Removed target from fstab",
			map[string]any{"umount": true, "persist": "purged"}, "", head},
		{"unmounted", "mount.unmounted", false, unmounted, "True", "Target was already unmounted. fstab entry not found", nil, "", head},
		{"not mounted", "mount.mounted", true, mounted("size=1m", "mount", false, "persist", false), "True", mnt + " would not be mounted", nil, "", head},
		{"no fstab", "mount.mounted", false, mounted("size=1m", "config", filepath.Join(dir, "nope")), "False",
			"Target was successfully mounted. However, the fstab was not found.", map[string]any{"mount": true}, "rw,relatime - tmpfs tmpfs rw,size=1024k", head},
	} {
		out, err := reg.Call(state.With(context.Background(), &state.Running{Test: step.test}), step.fun, nil, step.kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %v, want %v", step.what, got.Changes, step.changes)
		}
		if m := superopts(); m != step.mounted {
			t.Errorf("%s: mounted %q, want %q", step.what, m, step.mounted)
		}
		if b, _ := os.ReadFile(fstab); string(b) != step.fstab {
			t.Errorf("%s: fstab %q, want %q", step.what, b, step.fstab)
		}
	}
}
