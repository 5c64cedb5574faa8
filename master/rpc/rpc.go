// Package rpc names the requests a master answers on its request port and
// defines their bodies. The master serves them and the CLI sends them, both
// from these declarations, so the two cannot drift apart.
//
// Bodies are JSON. A request the master cannot answer comes back as an
// error reply naming the method (bus/gateway carries them).
package rpc

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/reactor"
)

// Methods of the master, besides the gateway's own (publish, ping, watch).
const (
	// Run runs a registry function as a job (RunRequest → jobs.Result).
	Run = "run"
	// JobsBegin announces a job a client runs itself (RunRequest → RunRequest
	// with JID and Start); JobsEnd reports its outcome (RunRequest with
	// Return or Error → {"jid"}).
	JobsBegin = "jobs.begin"
	JobsEnd   = "jobs.end"
	// JobsList lists kept jobs (jobs.Filter → []*jobs.Job); JobsShow returns
	// one (JobRequest → *jobs.Job).
	JobsList = "jobs.list"
	JobsShow = "jobs.show"
	// MineGet answers mine.get (MineGetRequest → {id: value} or {fun: {id:
	// value}}); MineList returns every record ([]*mine.Host); MineDelete
	// removes one (MineDeleteReply with the ID → the same with Deleted set).
	MineGet    = "mine.get"
	MineList   = "mine.list"
	MineDelete = "mine.delete"
	// ReactorList returns the mapping and counters (→ ReactorListReply);
	// ReactorDLQ the dead letters (→ []*reactor.DeadLetter); ReactorRedrive
	// runs dead letters again (RedriveRequest → []RedriveReply).
	ReactorList    = "reactor.list"
	ReactorDLQ     = "reactor.dlq"
	ReactorRedrive = "reactor.redrive"
)

// Status is the method of an integration's status, "<name>.status"
// (→ integrations.Status); the master serves it for every integration that
// reports one.
func Status(integration string) string { return integration + ".status" }

// RunRequest is a function call and who asks for it (Run, JobsBegin,
// JobsEnd); JobsEnd adds the job's JID, start and outcome.
type RunRequest struct {
	Fun    string         `json:"fun"`
	Args   []any          `json:"args,omitempty"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
	User   string         `json:"user"`

	JID    string    `json:"jid,omitempty"`
	Start  time.Time `json:"start,omitzero"`
	Return any       `json:"return,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// DecodeRunRequest reads a RunRequest as event data is read, so that
// integers stay integers (encoding/json would make them float64).
func DecodeRunRequest(method string, body json.RawMessage) (RunRequest, error) {
	var req RunRequest
	raw, err := (&bus.Event{Data: body}).DataMap()
	if err != nil {
		return req, fmt.Errorf("%s: %w", method, err)
	}
	req.Fun, _ = raw["fun"].(string)
	req.User, _ = raw["user"].(string)
	req.Args, _ = raw["args"].([]any)
	req.Kwargs, _ = raw["kwargs"].(map[string]any)
	req.JID, _ = raw["jid"].(string)
	req.Return = raw["return"]
	req.Error, _ = raw["error"].(string)
	if s, ok := raw["start"].(string); ok {
		if req.Start, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return req, fmt.Errorf("%s: start: %w", method, err)
		}
	}
	switch {
	case req.Fun == "":
		return req, fmt.Errorf("%s: the request names no function", method)
	case req.User == "":
		return req, fmt.Errorf("%s: the request names no user", method)
	}
	return req, nil
}

// JobRequest names one job (JobsShow).
type JobRequest struct {
	JID string `json:"jid"`
}

// MineGetRequest is `brine mine get TGT [FUN]`.
type MineGetRequest struct {
	Tgt     string `json:"tgt"`
	Fun     string `json:"fun,omitempty"`
	TgtType string `json:"tgt_type,omitempty"`
}

// MineDeleteReply says whether the host was there; the request is one with
// only ID set.
type MineDeleteReply struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// ReactorListReply is the reactor's mapping, file status, counters and
// settings.
type ReactorListReply struct {
	Entries []reactor.EntryStatus `json:"entries"`
	Stats   map[string]uint64     `json:"stats"`
	Config  reactor.Config        `json:"config"`
}

// RedriveRequest names one dead letter, or all of them; AsRecorded replays
// the recorded calls instead of rendering them from the current files.
type RedriveRequest struct {
	ID         string `json:"id,omitempty"`
	All        bool   `json:"all,omitempty"`
	AsRecorded bool   `json:"as_recorded,omitempty"`
}

// RedriveReply is how one redriven reaction ended, and what ran
// (reactor.FromFiles or reactor.AsRecorded).
type RedriveReply struct {
	ID     string `json:"id"`
	JID    string `json:"jid"`
	Status string `json:"status"`
	From   string `json:"from"`
	Error  string `json:"error,omitempty"`
}

// RedriveReplies describes the results of a redrive.
func RedriveReplies(results []reactor.Result) []RedriveReply {
	out := make([]RedriveReply, 0, len(results))
	for _, res := range results {
		rep := RedriveReply{JID: res.JID, Status: string(res.Status), From: res.From}
		if res.Reaction != nil {
			rep.ID = res.Reaction.ID
		}
		if res.Status != reactor.Succeeded {
			rep.Status = "failed"
		}
		if res.Err != nil {
			rep.Error = res.Err.Error()
		}
		out = append(out, rep)
	}
	return out
}

// Methods of remote execution (brine exec, Salt's salt).
const (
	// ExecPublish publishes a job to the agents its target selects
	// (jobs.Targeted → jobs.Published; no agent selected: empty Minions).
	ExecPublish = "exec.publish"
	// ExecFindJob asks agents whether they still run a job (FindJobRequest
	// → {id: proto.JobState}).
	ExecFindJob = "exec.find_job"
	// ExecTargets lists the agents a target selects (TargetRequest →
	// TargetReply), for --batch and --preview-target.
	ExecTargets = "exec.targets"
)

// FindJobRequest names a job and the agents to ask about it.
type FindJobRequest struct {
	JID     string   `json:"jid"`
	Minions []string `json:"minions"`
}

// TargetRequest is a target, as `brine exec` takes one.
type TargetRequest struct {
	Tgt     any    `json:"tgt"`
	TgtType string `json:"tgt_type"`
}

// TargetReply lists the agents a target selects, those of them connected,
// and the names of a list target without an accepted key.
type TargetReply struct {
	Minions   []string `json:"minions"`
	Connected []string `json:"connected"`
	Missing   []string `json:"missing"`
}
