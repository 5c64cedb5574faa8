package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/brinehq/brine/output"
	"github.com/brinehq/brine/wire"
)

// TestPrintCallNonFinite: a return holding floats JSON cannot (an SLS's
// .inf passed back by module.run) prints as Salt prints it, inf, -inf and
// nan, where json.Marshal refused it and brine call printed nothing.
func TestPrintCallNonFinite(t *testing.T) {
	ret := wire.Return{Return: map[string]any{"changes": map[string]any{
		"args": []any{math.Inf(1), math.Inf(-1), math.NaN(), 1.5}}}}
	for _, tc := range []struct {
		format string
		asJSON bool
		want   []string
	}{
		{"nested", false, []string{"- inf", "- -inf", "- nan", "- 1.5"}},
		{"", true, []string{`"inf"`, `"-inf"`, `"nan"`, `1.5`}},
	} {
		var b bytes.Buffer
		if err := printCall(&b, ret, tc.format, tc.asJSON, output.Options{}); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s json=%v: %q not in\n%s", tc.format, tc.asJSON, w, b.String())
			}
		}
	}
}

// TestCallQueuesNonFinite: a return holding .inf is queued for the master
// (as the text Salt prints for it), not refused and lost; the master is
// away here, so it stays in the outbox.
func TestCallQueuesNonFinite(t *testing.T) {
	a := &testAgent{t: t, id: "inf1", dir: t.TempDir()}
	writeFile(t, a.dir+"/minion", "id: inf1\nmaster: 127.0.0.1\nmaster_port: 1\npki_dir: pki\ncachedir: cache\ngrains:\n  big: .inf\n")
	out, errs, code := a.call("grains.get", "big", "--json", "--timeout", "1s")
	if code != 0 || strings.TrimSpace(out) != `{"local":"inf"}` {
		t.Fatalf("brine call grains.get big (.inf): exit %d\n%s%s", code, out, errs)
	}
	if n := a.queued(); n != 1 {
		t.Errorf("%d messages queued, want the return\n%s", n, errs)
	}
}
