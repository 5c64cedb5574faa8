package agentcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// Each Salt name brine-agent answers to is one of its commands ("" the
// agent itself, the root).
func TestAgentNamesAreCommands(t *testing.T) {
	root := NewAgentRoot()
	for name, sub := range AgentNames {
		if sub == "" {
			if !root.Runnable() {
				t.Errorf("%s runs brine-agent itself, which does not run the agent", name)
			}
			continue
		}
		cmd, _, err := root.Find([]string{sub})
		if err != nil || cmd == root || cmd.Name() != sub {
			t.Errorf("%s runs %q, which is not a command: %v", name, sub, err)
		}
	}
}

// version and --version print the same line, with the stamped release and
// commit; version --json has both as fields.
func TestVersionOutputs(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v0.4.0-3-gabc1234-dirty", "abc1234def5678"
	want := fmt.Sprintf("brine-agent version v0.4.0-3-gabc1234-dirty (commit abc1234def5678, %s, %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		root := NewAgentRoot()
		root.SetArgs(args)
		root.SetOut(&out)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if out.String() != want {
			t.Errorf("brine-agent %v printed %q, want %q", args, out.String(), want)
		}
	}
	var out bytes.Buffer
	root := NewAgentRoot()
	root.SetArgs([]string{"version", "--json"})
	root.SetOut(&out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("version --json: %v: %s", err, out.String())
	}
	if got["version"] != version || got["commit"] != commit || got["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version --json = %v", got)
	}
}

// Unstamped (go test), the version and the commit still say something.
func TestVersionFallback(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "", ""
	if Version() == "" || Commit() == "" {
		t.Errorf("Version() %q, Commit() %q: want a fallback", Version(), Commit())
	}
}

// A wrong command line exits 2; a failed job's retcode passes through; a
// wrapped failure of another program is brine's failure (1), not that
// program's status.
func TestExitCode(t *testing.T) {
	other := exec.Command("sh", "-c", "exit 7").Run()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), ExitFailure},
		{fmt.Errorf("call: %w", UsageError{errors.New("bad flag")}), ExitUsage},
		{RetcodeError{Code: 2, Err: errors.New("state failed")}, 2},
		{fmt.Errorf("running sh: %w", other), ExitFailure},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// brine-agent with an argument that is no command refuses it (exit 2)
// rather than starting the agent.
func TestAgentRootRefusesUnknownCommand(t *testing.T) {
	root := NewAgentRoot()
	root.SetArgs([]string{"cal", "test.ping"})
	err := root.Execute()
	if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), `unknown command "cal"`) {
		t.Errorf("brine-agent cal: %v (exit %d), want an unknown command usage error", err, ExitCode(err))
	}
}
