package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
)

// Targeted is a job for agents, what `salt TGT FUN ARG…`, a local.*
// reaction and `brine exec` publish: Salt's publish load.
type Targeted struct {
	// JID is the job's id; empty, the master assigns one. A client that
	// chooses it can watch for the returns before publishing.
	JID string `json:"jid,omitempty"`
	Fun string `json:"fun"`
	// Arg is Salt's arg: positional arguments with the keyword arguments
	// in a trailing `__kwarg__` mapping (PackArgs).
	Arg     []any  `json:"arg"`
	Tgt     any    `json:"tgt"`
	TgtType string `json:"tgt_type"`
	User    string `json:"user"`
	Ret     string `json:"ret,omitempty"`
	// KillAfter, in seconds, ends the function on the agents when it runs
	// longer (0: no limit).
	KillAfter float64        `json:"kill_after,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Extra is added to the job's new event by the part of the master
	// that publishes it (a reaction names itself there).
	Extra map[string]any `json:"-"`
}

// DecodeTargeted reads a Targeted job as event data is read, so that the
// integers of its arguments stay integers (encoding/json alone would make
// every number a float64); a number no float64 holds is refused.
func DecodeTargeted(body []byte) (Targeted, error) {
	var t Targeted
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("job: %w", err)
	}
	for i := range t.Arg {
		t.Arg[i] = bus.Numbers(t.Arg[i])
	}
	t.Tgt = bus.Numbers(t.Tgt)
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	} else {
		t.Metadata = bus.Numbers(t.Metadata).(map[string]any)
	}
	if !finite(t.Arg) || !finite(t.Tgt) || !finite(t.Metadata) {
		return t, errors.New("job: a number beyond what a float64 holds")
	}
	return t, nil
}

// finite reports whether v holds no infinite or NaN number (what a JSON
// number too large for a float64 decodes to, and cannot be encoded again).
func finite(v any) bool {
	switch t := v.(type) {
	case float64:
		return !math.IsInf(t, 0) && !math.IsNaN(t)
	case []any:
		for _, x := range t {
			if !finite(x) {
				return false
			}
		}
	case map[string]any:
		for _, x := range t {
			if !finite(x) {
				return false
			}
		}
	}
	return true
}

// Check refuses a job that cannot be published.
func (t *Targeted) Check() error {
	switch {
	case t.Fun == "" || !strings.Contains(t.Fun, "."):
		return fmt.Errorf("a job needs a function named module.function, got %q", t.Fun)
	case t.User == "":
		return fmt.Errorf("job %s: no user", t.Fun)
	case t.JID != "" && !IsJID(t.JID):
		return fmt.Errorf("job %s: %q is not a jid", t.Fun, t.JID)
	case t.KillAfter < 0:
		return fmt.Errorf("job %s: kill_after %g is negative", t.Fun, t.KillAfter)
	}
	return nil
}

// Published is what the master did with a Targeted job.
type Published struct {
	JID string `json:"jid"`
	// Minions are the agents the target selected (accepted keys); the job
	// was sent to those connected.
	Minions []string `json:"minions"`
	// Missing are names a list target gave that have no accepted key.
	Missing []string `json:"missing"`
	// NotConnected are selected agents the master could not send the job
	// to: they will not return.
	NotConnected []string `json:"not_connected"`
}

// Return is one agent's return to a targeted job.
type Return struct {
	ID      string    `json:"id"`
	Return  any       `json:"return"`
	Retcode int       `json:"retcode"`
	Success bool      `json:"success"`
	Out     string    `json:"out,omitempty"`
	Time    time.Time `json:"time"`
}

// Outcome is how a targeted job ended for a caller that waited for it
// (a local reaction).
type Outcome struct {
	Published
	// Returns are the agents' returns, by id.
	Returns map[string]Return `json:"returns"`
	// NoResponse are connected agents that did not return in time.
	NoResponse []string `json:"no_response,omitempty"`
}

// Failures are the agents whose job failed or that did not answer, by
// id, each with why.
func (o *Outcome) Failures() map[string]string {
	out := map[string]string{}
	for _, id := range o.Minions {
		r, ok := o.Returns[id]
		switch {
		case ok && r.Success && r.Retcode == 0:
		case ok:
			out[id] = fmt.Sprintf("retcode %d: %s", r.Retcode, clip(fmt.Sprint(r.Return), 200))
		case slices.Contains(o.NotConnected, id):
			out[id] = "not connected"
		default:
			out[id] = "no response"
		}
	}
	return out
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// BatchSize reads a batch size, N agents or N% of total (at least one).
func BatchSize(spec string, total int) (int, error) {
	if p, ok := strings.CutSuffix(spec, "%"); ok {
		pc, err := strconv.ParseFloat(p, 64)
		if err != nil || pc <= 0 || pc > 100 {
			return 0, fmt.Errorf("batch size %q: want N or a percentage between 0 and 100", spec)
		}
		return max(1, int(math.Ceil(float64(total)*pc/100))), nil
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("batch size %q: want a positive number of agents or N%%", spec)
	}
	return n, nil
}
