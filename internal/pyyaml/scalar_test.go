package pyyaml

import "testing"

// TestAnalyzePython: the styles PyYAML's own emitter allows, where they
// differ from libyaml's (the emitter Dump runs) and where they agree.
func TestAnalyzePython(t *testing.T) {
	for _, tc := range []struct {
		s                                    string
		flowPlain, blockPlain, single, multi bool
	}{
		{"plain", true, true, true, false},
		{"", false, true, true, false},
		{"a: b", false, false, true, false},
		{"x, y", false, true, true, false},
		{" lead", false, false, true, false},
		{"two\nlines", false, false, true, true},
		{"tab\there", false, false, false, false},
		{"cr\rhere", false, false, false, false}, // no break, but not printable
		{"nel\u0085here", false, false, true, true},
		{"smile 😀", true, true, true, false}, // printable past U+FFFF
		{"bom\ufeff", false, false, false, false},
	} {
		a := AnalyzePython(tc.s)
		if a.AllowFlowPlain != tc.flowPlain || a.AllowBlockPlain != tc.blockPlain || a.AllowSingleQuoted != tc.single || a.Multiline != tc.multi {
			t.Errorf("AnalyzePython(%q) = %+v", tc.s, a)
		}
	}
}
