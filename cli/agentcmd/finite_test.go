package agentcmd

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
