package state

import (
	"reflect"
	"testing"
)

// TestSLSContext: what Salt 3006.6's generate_sls_context gives for an SLS
// file under /srv/salt (tplpath there is the file's path on the minion;
// brine's is the file relative to its root).
func TestSLSContext(t *testing.T) {
	for _, tc := range []struct {
		file, sls string
		want      map[string]any
	}{
		{"main.sls", "main", map[string]any{"sls_path": "", "slscolonpath": "", "slsdotpath": "", "slspath": "", "tpldir": ".", "tpldot": "", "tplfile": "main.sls"}},
		{"a/b.sls", "a.b", map[string]any{"sls_path": "a", "slscolonpath": "a", "slsdotpath": "a", "slspath": "a", "tpldir": "a", "tpldot": "a", "tplfile": "a/b.sls"}},
		{"a/b/init.sls", "a.b", map[string]any{"sls_path": "a_b", "slscolonpath": "a:b", "slsdotpath": "a.b", "slspath": "a/b", "tpldir": "a/b", "tpldot": "a.b", "tplfile": "a/b/init.sls"}},
		{"a/init.sls", "a", map[string]any{"sls_path": "a", "slscolonpath": "a", "slsdotpath": "a", "slspath": "a", "tpldir": "a", "tpldot": "a", "tplfile": "a/init.sls"}},
	} {
		tc.want["sls"], tc.want["tplpath"] = tc.sls, tc.file
		if got := slsContext(tc.file, tc.sls); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s (%s):\n got %v\nwant %v", tc.file, tc.sls, got, tc.want)
		}
	}
}
