package fleet

import (
	"path/filepath"
	"testing"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/bench/masterproc"
)

// TestAgentConfig: what AgentConfig writes is an agent configuration the
// agent reads without a warning, pointed at the bench's master, with each
// benchmark's extra keys in force.
func TestAgentConfig(t *testing.T) {
	s := &masterproc.Setup{Dir: t.TempDir(), AgentsDir: t.TempDir(), ReqPort: 14506, PubPort: 14505}
	for _, tc := range []struct {
		id, extra   string
		reauth, acc int
	}{
		{id: "plain", reauth: 10, acc: 10},
		{id: "jobs", extra: "random_reauth_delay: 2\n", reauth: 2, acc: 10},
		{id: "agents", extra: "acceptance_wait_time: 1\nrandom_reauth_delay: 0\n", reauth: 0, acc: 1},
	} {
		dir, err := AgentConfig(s, tc.id, tc.extra)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := agent.LoadConfig(dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if len(cfg.Warnings) > 0 {
			t.Errorf("%s: warnings %v", tc.id, cfg.Warnings)
		}
		want := agent.Config{MasterPort: s.ReqPort, PublishPort: s.PubPort, RandomReauthDelay: tc.reauth, AcceptanceWaitTime: tc.acc}
		if cfg.ID != tc.id || cfg.MasterPort != want.MasterPort || cfg.PublishPort != want.PublishPort ||
			cfg.RandomReauthDelay != want.RandomReauthDelay || cfg.AcceptanceWaitTime != want.AcceptanceWaitTime {
			t.Errorf("%s: id %q, ports %d/%d, random_reauth_delay %d, acceptance_wait_time %d; want %+v",
				tc.id, cfg.ID, cfg.MasterPort, cfg.PublishPort, cfg.RandomReauthDelay, cfg.AcceptanceWaitTime, want)
		}
		if want := filepath.Join(s.AgentsDir, tc.id, "cache"); cfg.CacheDir != want {
			t.Errorf("%s: cachedir %q, want %q", tc.id, cfg.CacheDir, want)
		}
	}
}

// TestReturnedTrue: only a successful return of true counts, whatever
// the space around it; a load that is not JSON is an error.
func TestReturnedTrue(t *testing.T) {
	for _, tc := range []struct {
		data    string
		want    bool
		wantErr bool
	}{
		{data: `{"success": true, "return": true}`, want: true},
		{data: `{"success":true,"return": true , "jid": "1"}`, want: true},
		{data: `{"success": false, "return": true}`},
		{data: `{"success": true, "return": false}`},
		{data: `{"success": true, "return": "true"}`},
		{data: `{"success": true}`},
		{data: `not json`, wantErr: true},
	} {
		got, err := ReturnedTrue([]byte(tc.data))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ReturnedTrue(%s) = %v, %v; want %v (error: %v)", tc.data, got, err, tc.want, tc.wantErr)
		}
	}
}
