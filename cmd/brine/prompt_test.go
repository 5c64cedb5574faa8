package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestAskProceed(t *testing.T) {
	for _, tc := range []struct {
		answer string
		def    bool
		want   bool
		prompt string
	}{
		{"\n", true, true, "Proceed? [n/Y] "},
		{"", true, true, "Proceed? [n/Y] "},
		{"n\n", true, false, "Proceed? [n/Y] "},
		{"Yes\n", false, true, "Proceed? [N/y] "},
		{"\n", false, false, "Proceed? [N/y] "},
		{"maybe\n", false, false, "Proceed? [N/y] "},
	} {
		var out bytes.Buffer
		got, err := ask(strings.NewReader(tc.answer), &out, tc.def)
		if err != nil || got != tc.want || out.String() != tc.prompt {
			t.Errorf("ask(%q, default %v) = %v, %v after %q; want %v after %q", tc.answer, tc.def, got, err, out.String(), tc.want, tc.prompt)
		}
	}
}
