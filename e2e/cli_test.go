package e2e

import (
	"time"

	"github.com/brinehq/brine/cloud"
)

// What these tests hold the brine command to, read from outside as a
// script would: its exit statuses, how long a client waits for a master,
// and the shapes of `brine cloud --json`. They restate cmd/brine's
// (main.go, event.go, cloud.go) on purpose: a change there that breaks
// scripts must break these tests too.
const (
	exitUsage       = 2                // bad flags or arguments
	exitUnreachable = 3                // no master answered
	connectTimeout  = 10 * time.Second // a client's wait for the master, whatever --timeout allows
)

// resultsJSON is what `brine cloud --json` prints after a run.
type resultsJSON struct {
	Results   []cloud.Result `json:"results"`
	Failed    int            `json:"failed"`
	Cancelled bool           `json:"cancelled,omitempty"`
}

// planJSON is what `brine cloud --dry-run --json` prints.
type planJSON struct {
	Create []struct {
		Name     string         `json:"name"`
		Profile  string         `json:"profile"`
		Provider string         `json:"provider"`
		Location string         `json:"location"`
		Kwargs   map[string]any `json:"kwargs"`
		Warnings []string       `json:"warnings"`
	} `json:"create"`
	Exists  []*cloud.Node `json:"exists"`
	Destroy []*cloud.Node `json:"destroy"`
	Absent  []string      `json:"absent"`
}
