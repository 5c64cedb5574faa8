package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionScripts checks `brine completion bash|zsh|fish`: each
// script hooks the shell up to `brine __complete`, which offers the
// subcommands, so that the scripts never go stale as commands are added.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			out, err := exec.Command(brineBin, "completion", shell).Output()
			if err != nil {
				t.Fatalf("brine completion %s: %v", shell, err)
			}
			script := string(out)
			for _, want := range []string{"brine", "__complete"} {
				if !strings.Contains(script, want) {
					t.Errorf("the %s script does not mention %q", shell, want)
				}
			}
		})
	}
	out, err := exec.Command(brineBin, "__complete", "").Output()
	if err != nil {
		t.Fatalf("brine __complete: %v", err)
	}
	for _, sub := range []string{"cloud", "event", "master", "mine", "reactor", "run", "jobs", "ddns", "slack", "completion"} {
		if !strings.Contains(string(out), "\n"+sub+"\t") && !strings.HasPrefix(string(out), sub+"\t") {
			t.Errorf("brine __complete does not offer %s:\n%s", sub, out)
		}
	}
}

// TestBashCompletion runs the bash script for real: bash -n accepts it,
// and its completion function, called as bash calls it on TAB, offers
// subcommands and flags.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is missing (Debian always has it): %v", err)
	}
	out, err := exec.Command(brineBin, "completion", "bash").Output()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "brine.bash")
	if err := os.WriteFile(script, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	// _get_comp_words_by_ref comes from the bash-completion package, which
	// interactive shells load; this stand-in does what it does for words
	// split on blanks.
	const driver = `
_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
__start_brine
printf '%s\n' "${COMPREPLY[@]}"
`
	for _, tc := range []struct {
		words     []string
		want, not []string
	}{
		{[]string{""}, []string{"cloud", "event", "mine"}, nil},
		{[]string{"ev"}, []string{"event"}, []string{"cloud"}},
		{[]string{"cloud", "--pro"}, []string{"--profile"}, []string{"--map"}},
	} {
		args := append([]string{"-c", driver, "driver", script, brineBin}, tc.words...)
		// compopt complains on stderr outside a real completion; the
		// candidates are on stdout.
		out, err := exec.Command(bash, args...).Output()
		if err != nil {
			t.Fatalf("completing %q: %v", tc.words, err)
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q offers %q, want %s among them", tc.words, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("completing %q offers %q, not wanted", tc.words, w)
			}
		}
	}
}
