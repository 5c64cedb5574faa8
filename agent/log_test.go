package agent

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/brinehq/brine/agent/grains"
	"github.com/brinehq/brine/internal/logging"
	"github.com/brinehq/brine/wire"
)

// TestFailingJobOutputIsMaskedInTheLog: a failing cmd.run logs its
// output at ERROR (Salt's output_loglevel); the agent's logger, the one
// `brine agent` builds, masks what the job's return and events mask.
func TestFailingJobOutputIsMaskedInTheLog(t *testing.T) {
	dir := t.TempDir()
	testAgent(t, dir) // writes the configuration
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		log, err := logging.New(&b, format, slog.LevelInfo)
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(cfg, Options{Version: "test", Log: log, Grains: grains.Collector{Root: t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		r := a.execute(context.Background(), wire.Job{JID: "1", Fun: "cmd.run",
			Arg: []any{"echo password=hunter2SECRET; echo token xoxb-1234-abcdSECRET >&2; exit 3"}})
		if r.Retcode != 3 {
			t.Fatalf("retcode %d, want 3", r.Retcode)
		}
		got := b.String()
		if !strings.Contains(got, "ERROR") && !strings.Contains(got, `"level":"ERROR"`) {
			t.Fatalf("%s: no ERROR line for the failing command:\n%s", format, got)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("%s: the agent log holds the secret:\n%s", format, got)
		}
		if !strings.Contains(got, "password=***") {
			t.Errorf("%s: the output is not in the log, masked:\n%s", format, got)
		}
	}
}
