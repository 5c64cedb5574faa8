package slack

import (
	"strings"
	"testing"
)

// A state run's thread shows Salt's summary and the states that changed
// or failed, not a dump of every state.
func TestStateSummary(t *testing.T) {
	ret := map[string]any{
		"pkg_|-apache_|-apache2_|-installed": map[string]any{"__run_num__": int64(0), "__id__": "apache", "name": "apache2",
			"result": true, "changes": map[string]any{"apache2": map[string]any{"old": "", "new": "2.4"}}, "comment": "installed",
			"start_time": "10:00:00.000001", "duration": 1.5},
		"file_|-conf_|-/etc/x_|-managed": map[string]any{"__run_num__": int64(1), "__id__": "conf", "name": "/etc/x",
			"result": true, "changes": map[string]any{}, "comment": "in the correct state", "start_time": "10:00:00.000002", "duration": 0.5},
		"service_|-svc_|-apache2_|-running": map[string]any{"__run_num__": int64(2), "__id__": "svc", "name": "apache2",
			"result": false, "changes": map[string]any{}, "comment": "failed to start", "start_time": "10:00:00.000003", "duration": 2.0},
	}
	got, ok := stateSummary(ret)
	if !ok {
		t.Fatal("not seen as a state return")
	}
	want := []string{"Succeeded: 2 (changed=1)", "Failed:    1", "Total states run:     3",
		"Name: apache2 - Function: pkg.installed - Result: Changed", "Name: apache2 - Function: service.running - Result: Failed"}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "/etc/x") {
		t.Errorf("a state without changes is shown:\n%s", got)
	}
	if _, ok := stateSummary("a text"); ok {
		t.Error("a text is a state return")
	}
}
