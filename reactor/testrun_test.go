package reactor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus"
)

// TestTestReport: what `brine reactor test` reports of one event, planned
// only and executed; every error and every call that did not succeed is a
// problem, and what the calls fire is recorded, not published.
func TestTestReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.sls")
	writeFile(t, path, `ok:
  runner.test.arg:
    - arg:
      - {{ data['n'] }}
boom:
  runner.test.exception: []
nowheel:
  wheel.nosuch.fn: []
`)
	missing := filepath.Join(dir, "missing.sls")
	r := New(Config{Mapping: []MapEntry{{Glob: "t/*", Files: []string{path, missing}}}, Retry: Retry{Attempts: 1}}, testFuncs(t))
	ev, err := bus.NewEvent("t/x", map[string]any{"n": 7}, bus.Origin{Source: "brine://test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		execute          bool
		errors, problems int
		statuses         map[string]string
	}{
		// The missing file, and the wheel call this master would refuse.
		{execute: false, errors: 2, problems: 2},
		// The missing file; the refused call fails when run, with another.
		{execute: true, errors: 1, problems: 3, statuses: map[string]string{"ok": "succeeded", "boom": "failed", "nowheel": "failed"}},
	} {
		rep, err := r.Test(context.Background(), ev, tc.execute)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Tag != "t/x" || len(rep.Files) != 2 || rep.Files[0].Path != path || !strings.Contains(rep.Files[0].Rendered, "  - 7") {
			t.Errorf("execute=%v: files %+v", tc.execute, rep.Files)
		}
		if len(rep.Calls) != 3 {
			t.Errorf("execute=%v: %d calls, want 3", tc.execute, len(rep.Calls))
		}
		if rep.Problems != tc.problems || len(rep.Errors) != tc.errors {
			t.Errorf("execute=%v: %d problems, errors %q; want %d problems, %d errors", tc.execute, rep.Problems, rep.Errors, tc.problems, tc.errors)
		}
		got := map[string]string{}
		for _, res := range rep.Results {
			got[res.ID] = res.Status
		}
		if len(got) != len(tc.statuses) {
			t.Errorf("execute=%v: results %+v, want %v", tc.execute, rep.Results, tc.statuses)
		}
		for id, st := range tc.statuses {
			if got[id] != st {
				t.Errorf("execute=%v: %s %s, want %s", tc.execute, id, got[id], st)
			}
		}
		if tc.execute != (len(rep.Events) > 0) {
			t.Errorf("execute=%v: %d events recorded", tc.execute, len(rep.Events))
		}
	}
}
