package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/brinehq/brine/cloud"
)

var ansiCode = regexp.MustCompile("\x1b\\[[0-9;]*m")

// openTerminal opens a pseudo-terminal's master side, a terminal as far as
// agentcmd.IsTerminal can tell.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestPaletteFor(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	term := openTerminal(t)
	for _, tc := range []struct {
		name    string
		out     io.Writer
		noColor string
		asJSON  bool
		want    bool
	}{
		{name: "terminal", out: term, want: true},
		{name: "terminal, NO_COLOR=1", out: term, noColor: "1"},
		{name: "terminal, NO_COLOR set to anything", out: term, noColor: "false"},
		{name: "terminal, --json", out: term, asJSON: true},
		{name: "buffer", out: &bytes.Buffer{}},
		{name: "/dev/null (a character device, not a terminal)", out: devNull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			if tc.noColor == "" {
				os.Unsetenv("NO_COLOR")
			}
			if got := paletteFor(tc.out, tc.asJSON).on; got != tc.want {
				t.Errorf("colour on = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatusHue(t *testing.T) {
	for s, want := range map[string]hue{
		"created": green, "destroyed": green, "succeeded in 1.20s": green, "ok": green, "PASS": green,
		"running (1/3 returned)": yellow, "skipped": yellow,
		"failed": red, "failed in 0.10s": red, "FAIL": red, "error: refused": red,
		"exists": plain, "absent": plain, "web1": plain, "": plain,
	} {
		if got := statusHue(s); got != want {
			t.Errorf("statusHue(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestTableAlignsColouredCells checks that a table's layout is text/tabwriter's
// with or without colour: codes wrap the status words only, never the padding.
func TestTableAlignsColouredCells(t *testing.T) {
	rows := [][]string{
		{"NAME", "STATUS", "ELAPSED", "NOTE"},
		{"web1", "created", "1.2s", ""},
		{"a-much-longer-name", "failed", "12ms", "at deploying: ssh login refused"},
		{"w3", "exists", "0s", "x"},
	}
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		tw.Write([]byte(strings.Join(r, "\t") + "\n"))
	}
	tw.Flush()
	for _, tc := range []struct {
		name    string
		on      bool
		colored []string
	}{
		{"plain", false, nil},
		{"coloured", true, []string{"\x1b[32mcreated\x1b[0m  ", "\x1b[31mfailed\x1b[0m   "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(palette{on: tc.on}, rows[0]...)
			tb.color("STATUS", statusHue)
			for _, r := range rows[1:] {
				tb.row(r...)
			}
			var got bytes.Buffer
			if err := tb.write(&got); err != nil {
				t.Fatal(err)
			}
			if plain := ansiCode.ReplaceAllString(got.String(), ""); plain != want.String() {
				t.Errorf("layout without the colour codes:\n%s\nwant (text/tabwriter's):\n%s", plain, want.String())
			}
			if !tc.on && got.String() != want.String() {
				t.Errorf("plain output has colour codes: %q", got.String())
			}
			for _, c := range tc.colored {
				if !strings.Contains(got.String(), c) {
					t.Errorf("output lacks %q:\n%q", c, got.String())
				}
			}
			lines := strings.Split(got.String(), "\n")
			if ansiCode.MatchString(lines[0]) || ansiCode.MatchString(lines[3]) {
				t.Errorf("the header or a plain status is coloured: %q", got.String())
			}
		})
	}
}

// TestCloudResultsColour checks brine cloud's result table: coloured on a
// terminal, plain in a pipe, with NO_COLOR, and with --json.
func TestCloudResultsColour(t *testing.T) {
	results := []cloud.Result{
		{Name: "web1", Action: "create", Status: cloud.Created, Provider: "vcsim:vmware", Elapsed: time.Second},
		{Name: "web2", Action: "create", Status: cloud.Failed, Provider: "vcsim:vmware", Step: "deploying", Error: "ssh login refused"},
	}
	term := openTerminal(t)
	for _, tc := range []struct {
		name    string
		noColor bool
		asJSON  bool
		colored bool
	}{
		{name: "terminal", colored: true},
		{name: "NO_COLOR", noColor: true},
		{name: "json", asJSON: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.noColor {
				t.Setenv("NO_COLOR", "1")
			}
			// The palette is chosen for the terminal; the table is caught
			// in a buffer to be read back.
			var out bytes.Buffer
			err := printResults(&out, paletteFor(term, tc.asJSON), results, tc.asJSON, false)
			if err == nil || !strings.Contains(err.Error(), "1 of 2 VMs failed") {
				t.Errorf("err = %v", err)
			}
			hasCodes := ansiCode.MatchString(out.String())
			if hasCodes != tc.colored {
				t.Errorf("colour codes present = %v, want %v:\n%q", hasCodes, tc.colored, out.String())
			}
			if tc.colored && (!strings.Contains(out.String(), "\x1b[32mcreated\x1b[0m") || !strings.Contains(out.String(), "\x1b[31mfailed\x1b[0m")) {
				t.Errorf("statuses not coloured:\n%q", out.String())
			}
			if tc.asJSON {
				return
			}
			lines := strings.Split(strings.TrimSpace(ansiCode.ReplaceAllString(out.String(), "")), "\n")
			col := strings.Index(lines[0], "PROVIDER")
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l[col:], "vcsim:vmware") {
					t.Errorf("PROVIDER column not aligned at %d:\n%s", col, strings.Join(lines, "\n"))
				}
			}
		})
	}
}

func TestPlainWhenNotATerminal(t *testing.T) {
	var out bytes.Buffer
	results := []cloud.Result{{Name: "web1", Action: "create", Status: cloud.Created, Provider: "p"}}
	if err := printResults(&out, paletteFor(&out, false), results, false, false); err != nil {
		t.Fatal(err)
	}
	if ansiCode.MatchString(out.String()) || !strings.Contains(out.String(), "created") {
		t.Errorf("output to a buffer: %q", out.String())
	}
}
