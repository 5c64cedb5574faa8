package deploy

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseUname(t *testing.T) {
	for _, tc := range []struct {
		uname, want, err string
	}{
		{"Linux x86_64\n", "linux/amd64", ""},
		{"Linux aarch64", "linux/arm64", ""},
		{"Linux i686", "linux/386", ""},
		{"Linux armv7l", "linux/arm", ""},
		{"FreeBSD amd64", "freebsd/amd64", ""},
		{"Darwin arm64", "darwin/arm64", ""},
		{"Darwin x86_64", "darwin/amd64", ""},
		{"Linux armv6l", "", `"Linux armv6l": brine builds no agent for the machine armv6l`},
		{"Linux riscv64", "", "no agent for the machine riscv64"},
		{"MINGW64_NT-10.0-19045 x86_64", "", "a Windows machine, which the built-in bootstrap does not install"},
		{"SunOS i86pc", "", "brine builds no agent for SunOS (it does for Linux, FreeBSD and Darwin)"},
		{"", "", `uname -sm said "", not an OS and a machine name`},
	} {
		p, err := parseUname(tc.uname)
		switch {
		case tc.err == "" && (err != nil || p.String() != tc.want):
			t.Errorf("%q: %v, %v; want %s", tc.uname, p, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want an error with %q", tc.uname, err, tc.err)
		}
	}
}

func TestFindAgent(t *testing.T) {
	own, other := t.TempDir(), t.TempDir()
	touch := func(path string) {
		if err := os.WriteFile(path, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	touch(filepath.Join(own, "brine-agent"))
	touch(filepath.Join(other, "brine-agent-freebsd-amd64"))
	if err := os.Mkdir(filepath.Join(other, "brine-agent-linux-arm"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{other, own}
	host := platform{goos: runtime.GOOS, goarch: runtime.GOARCH, uname: "host"}
	for _, tc := range []struct {
		p          platform
		want, fail string
	}{
		// brine-agent serves the master's own platform only.
		{host, filepath.Join(own, "brine-agent"), ""},
		{platform{"freebsd", "amd64", "FreeBSD amd64"}, filepath.Join(other, "brine-agent-freebsd-amd64"), ""},
		// A directory of that name is no binary.
		{platform{"linux", "arm", "Linux armv7l"}, "", "no brine-agent-linux-arm in " + other + ", " + own},
	} {
		got, err := findAgent(tc.p, dirs)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("%s: %q, %v; want an error with %q", tc.p, got, err, tc.fail)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %s", tc.p, got, err, tc.want)
		}
	}
}

func TestProgressReaderReportsEachQuarter(t *testing.T) {
	data := bytes.Repeat([]byte("a"), 1000)
	var at []int64
	pr := &progressReader{r: bytes.NewReader(data), size: 1000, step: 250, report: func(n int64) { at = append(at, n) }}
	if _, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, pr, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if pr.n != 1000 || len(at) != 3 || at[0] != 300 || at[1] != 500 || at[2] != 800 {
		t.Errorf("read %d, reported at %v; want 1000 and 300 500 800", pr.n, at)
	}
}

// TestUnitIsThePackagesUnit keeps the unit the bootstrap installs the
// brine-agent package's (packaging/systemd/brine-agent.service, which
// is in a module of its own, out of go:embed's reach).
func TestUnitIsThePackagesUnit(t *testing.T) {
	pkg, err := os.ReadFile("../packaging/systemd/brine-agent.service")
	if err != nil {
		t.Fatalf("the package's unit: %v", err)
	}
	if !bytes.Equal(pkg, bootstrapUnit) {
		t.Error("deploy/brine-agent.service differs from packaging/systemd/brine-agent.service: copy the package's over it")
	}
	if !bytes.Contains(bootstrapUnit, []byte("\nExecStart=/usr/bin/brine-agent -c /etc/brine\n")) {
		t.Error("the unit's ExecStart is not the command line bootstrap-brine.sh starts the agent with")
	}
}
