package disk

import (
	"context"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brinehq/brine/modules"
)

func TestMounts(t *testing.T) {
	got, err := Mounts("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{{"rootdev", "/", "ext4"}, {"proc", "/proc", "proc"}, {"rootdev", "/etc", "ext4"},
		{"/dev/sdb1", "/mnt/my disk", "ext4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Mounts = %v", got)
	}
	if _, err := Mounts(t.TempDir()); err == nil {
		t.Error("Mounts without /proc/mounts succeeded")
	}
	for in, want := range map[string]string{`a\040b`: "a b", `tab\011`: "tab\t", `back\134`: `back\`, `odd\04`: `odd\04`, `x\999`: `x\999`} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// df returns df -P's line for dir: filesystem, 1K-blocks, used, available,
// capacity.
func df(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command("df", "-P", dir).Output()
	if err != nil {
		t.Fatalf("df -P %s: %v", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 6 {
		t.Fatalf("df -P %s: %q", dir, out)
	}
	return f[1:5]
}

// near reports whether two df numbers differ by at most 1% of a (the
// root filesystem is in use while the test runs).
func near(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSuffix(a, "%"), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSuffix(b, "%"), 64)
	d := x - y
	return err1 == nil && err2 == nil && d*d <= (x/100+1)*(x/100+1)
}

func TestUsageIsDfs(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Reader{Root: "testdata"}.Module)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reg.Call(context.Background(), "disk.usage", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := got.(map[string]any)
	// /proc has no blocks, /etc is the root's device again, /mnt/my disk is
	// not there.
	root, ok := m["/"].(map[string]any)
	if len(m) != 1 || !ok {
		t.Fatalf("disk.usage = %v, want / only", m)
	}
	want := df(t, "/")
	if root["filesystem"] != "rootdev" || root["mounted"] != "/" || root["1K-blocks"] != want[0] ||
		!near(root["used"].(string), want[1]) || !near(root["available"].(string), want[2]) ||
		!near(root["capacity"].(string), want[3]) || !strings.HasSuffix(root["capacity"].(string), "%") {
		t.Errorf("disk.usage / = %v; df -P says %v", root, want)
	}

	got, err = reg.Call(context.Background(), "disk.usage", []any{"aP"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m = got.(map[string]any)
	proc, _ := m["/proc"].(map[string]any)
	if len(m) != 3 || m["/etc"] == nil || proc["capacity"] != "-" || proc["1K-blocks"] != "0" {
		t.Errorf("disk.usage a = %v", m)
	}

	for _, tc := range []struct {
		args any
		err  string
	}{
		{"h", "flag h is not supported"},
		{[]any{"a", "z"}, "Invalid flag passed to disk.usage: z"},
	} {
		if _, err := reg.Call(context.Background(), "disk.usage", []any{tc.args}, nil, nil); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("disk.usage %v: %v, want %q", tc.args, err, tc.err)
		}
	}
	empty, err := modules.Registry(&modules.Env{}, Reader{Root: t.TempDir()}.Module)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Call(context.Background(), "disk.usage", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "mounts") {
		t.Errorf("disk.usage without /proc/mounts: %v", err)
	}
}

func TestUsageOfThisMachine(t *testing.T) {
	reg, err := modules.Registry(&modules.Env{}, Module)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reg.Call(context.Background(), "disk.usage", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, ok := got.(map[string]any)["/"].(map[string]any)
	if !ok || root["1K-blocks"] != df(t, "/")[0] {
		t.Errorf("disk.usage / = %v", got)
	}
}
