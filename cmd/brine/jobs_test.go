package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPrintJobOutputters: as salt-run jobs.lookup_jid, returns go through
// the outputter their function named (highstate for the state functions),
// a runner return that names one through it, others as YAML, numbers as
// they were sent.
func TestPrintJobOutputters(t *testing.T) {
	state := `{"jid": "20261127170000000001", "kind": "job", "fun": "state.highstate", "tgt": "web1", "user": "root",
		"start_time": "2026-11-27T17:00:00Z", "minions": ["web1"], "returns": {"web1": {"success": true, "retcode": 0, "out": "highstate", "time": "2026-11-27T17:00:01Z",
		"return": {"file_|-motd_|-/etc/motd_|-managed": {"result": true, "comment": "File /etc/motd updated", "name": "/etc/motd",
		"changes": {"diff": "New file"}, "__run_num__": 0, "duration": 1.5, "start_time": "17:00:00.5"}}}}}`
	ping := `{"jid": "20261127170000000002", "kind": "job", "fun": "test.ping", "tgt": "web1", "user": "root",
		"start_time": "2026-11-27T17:00:00Z", "minions": ["web1"], "returns": {"web1": {"success": true, "retcode": 0, "return": 9007199254740993}}}`
	orch := `{"jid": "20261127170000000003", "kind": "run", "fun": "runner.state.orchestrate", "user": "root", "success": true,
		"start_time": "2026-11-27T17:00:00Z", "return": {"outputter": "highstate", "retcode": 0, "data": {"demo_master": {
		"salt_|-deploy_|-deploy_|-state": {"result": true, "comment": "States ran successfully.", "name": "deploy", "changes": {}, "__run_num__": 0, "duration": 2}}}}}`
	for _, tc := range []struct {
		name, reply string
		want, not   []string
	}{
		{"state function: highstate", state, []string{"return:\n  web1:\n  ----------\n", "ID: motd", "Function: file.managed", "Succeeded: 1 (changed=1)"}, []string{"__run_num__"}},
		{"other function: YAML, digits kept", ping, []string{"return:\n  web1: 9007199254740993\n"}, []string{"Succeeded:"}},
		{"runner naming its outputter", orch, []string{"return:\n  demo_master:\n", "Function: salt.state", "Succeeded: 1"}, []string{"outputter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := printJob(&b, json.RawMessage(tc.reply)); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("output has %q:\n%s", n, b.String())
				}
			}
		})
	}
}
