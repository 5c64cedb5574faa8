package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// brine --version and brine version print the same line: the release and
// the commit it was built from; --json has both.
func TestVersionFlagAndCommand(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out bytes.Buffer
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(&out)
		if err := root.Execute(); err != nil {
			t.Fatalf("brine %v: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "brine version ") || !strings.Contains(out.String(), "(commit ") {
			t.Errorf("brine %v printed %q, want brine version VERSION (commit …)", args, out.String())
		}
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] {
		t.Errorf("--version %q and version %q differ", outs[0], outs[1])
	}
	var out bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"version", "--json"})
	root.SetOut(&out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["version"] == "" || v["commit"] == "" {
		t.Errorf("brine version --json = %s (%v), want version and commit", out.String(), err)
	}
}
