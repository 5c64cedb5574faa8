package agentcmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gen-docs writes, from brine-agent's own command tree, a man page per
// visible command that lists its flags (hidden commands get none), dated
// $SOURCE_DATE_EPOCH, and completion scripts bash accepts and that ask
// the binary (__complete), so they follow the commands as they change.
func TestGenDocs(t *testing.T) {
	dir := t.TempDir()
	man, compl := filepath.Join(dir, "man"), filepath.Join(dir, "completion")
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000") // 2023-11-14
	root := NewAgentRoot()
	root.SetArgs([]string{"gen-docs", "--man", man, "--completion", compl})
	if err := root.Execute(); err != nil {
		t.Fatalf("gen-docs: %v", err)
	}

	for _, tc := range []struct {
		page string
		want []string
	}{
		{"brine-agent.1", []string{"brine-agent - brine's agent", "--config-dir", "--strict", "Nov 2023"}},
		{"brine-agent-call.1", []string{"brine-agent-call", "--local", "--retcode-passthrough"}},
		{"brine-agent-version.1", []string{"--json"}},
	} {
		b, err := os.ReadFile(filepath.Join(man, tc.page))
		if err != nil {
			t.Errorf("man page %s: %v", tc.page, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s does not contain %q", tc.page, w)
			}
		}
		if strings.Contains(string(b), "Auto generated") {
			t.Errorf("%s has cobra's dated footer, which makes two builds differ", tc.page)
		}
	}
	if _, err := os.Stat(filepath.Join(man, "brine-agent-gen-docs.1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the hidden gen-docs has a man page (%v)", err)
	}

	for _, f := range []string{"brine-agent.bash", "_brine-agent", "brine-agent.fish"} {
		b, err := os.ReadFile(filepath.Join(compl, f))
		if err != nil {
			t.Errorf("completion script %s: %v", f, err)
			continue
		}
		if !strings.Contains(string(b), "__complete") {
			t.Errorf("%s does not ask the binary (__complete)", f)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is missing (Debian always has it): %v", err)
	}
	if out, err := exec.Command(bash, "-n", filepath.Join(compl, "brine-agent.bash")).CombinedOutput(); err != nil {
		t.Errorf("bash -n brine-agent.bash: %v\n%s", err, out)
	}
}

// gen-docs with neither directory, or a SOURCE_DATE_EPOCH that is not a
// number, is a usage error (exit 2) naming what to give.
func TestGenDocsUsage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		epoch string
		want  string
	}{
		{"no directory", []string{"gen-docs"}, "", "give --man DIR"},
		{"bad epoch", []string{"gen-docs", "--man", "MAN"}, "yesterday", `SOURCE_DATE_EPOCH="yesterday"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", tc.epoch)
			args := append([]string(nil), tc.args...)
			for i, a := range args {
				if a == "MAN" {
					args[i] = t.TempDir()
				}
			}
			root := NewAgentRoot()
			root.SetArgs(args)
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if code := ExitCode(err); code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
		})
	}
}
