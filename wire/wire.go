// Package wire is the conversation between an agent and its master over
// the gateway's encrypted request connection: method names and bodies. It
// is a leaf both sides import, so that neither imports the other.
//
// An agent first learns the master's public key (the gateway serves it to
// connections without encryption, and nothing else), then connects with the
// CURVE mechanism under its own key and says who it is (MethodHello). The
// master answers with the key's state; only an accepted agent may send
// events, returns and mine data, and everything it sends is stamped by the
// master with the id it authenticated, never with an id the agent claims.
package wire

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
)

// The master's refusals of an agent's request, whatever transport carries
// it: each transport tells its agents in its own terms (brine's gateway as
// its error codes), so the master's handlers need not know which.
var (
	// ErrReservedTag is the refusal of a tag an agent may not fire under.
	ErrReservedTag = errors.New("reserved tag prefix")
	// ErrInvalidRequest is a request the master cannot read or will not
	// take as it is (a malformed body, a jid never sent to the agent).
	ErrInvalidRequest = errors.New("invalid request")
	// ErrNotAccepted is a request, other than a hello, on a connection
	// whose key is not accepted.
	ErrNotAccepted = errors.New("authentication failed")
)

// CheckTag refuses the tags agent id may not fire: the master's reserved
// prefixes, salt-cloud's lifecycle (bus.OperatorPrefixes), and salt/minion/<x>/ or salt/beacon/<x>/ of another agent. The
// master enforces it; the agent checks first so that its caller hears of
// the refusal instead of the event being dropped later.
func CheckTag(tag, id string) error {
	if p := bus.AgentReserved(tag); p != "" {
		return fmt.Errorf("%w: %q: only the master publishes under %q", ErrReservedTag, tag, p)
	}
	for _, prefix := range []string{"salt/minion/", "salt/beacon/"} {
		if rest, ok := strings.CutPrefix(tag, prefix); ok {
			if owner, _, _ := strings.Cut(rest, "/"); owner != id {
				return fmt.Errorf("%w: %q: agent %s cannot speak for agent %s", ErrReservedTag, tag, id, owner)
			}
		}
	}
	return nil
}

// Methods an agent calls.
const (
	// MethodPing answers any connection, accepted or not: an agent's
	// liveness check of its master (master_alive_interval).
	MethodPing   = "agent.ping"
	MethodHello  = "agent.hello"
	MethodEvent  = "agent.event"
	MethodReturn = "agent.return"
	MethodMine   = "agent.mine"
	// MethodJobState answers a PushFindJob (JobState → nothing).
	MethodJobState = "agent.job_state"
	// MethodMineGet is the agent's mine.get (MineGet → {id: value}).
	MethodMineGet = "agent.mine_get"
	// MethodFileList lists the master's files (FileList → []string);
	// MethodFileStat describes one (FileRequest → FileStat); MethodFileRead
	// reads a chunk of one (FileRequest with Offset → FileChunk).
	MethodFileList = "agent.file_list"
	MethodFileStat = "agent.file_stat"
	MethodFileRead = "agent.file_read"
	// MethodFileEnvs lists the master's saltenvs (nothing → []string).
	MethodFileEnvs = "agent.file_envs"
	// MethodPillar asks for the agent's pillar (PillarRequest → the
	// pillar): the master compiles it for the id it authenticated.
	MethodPillar = "agent.pillar"
	// MethodProgress is a state run's progress (Progress → nothing),
	// which the master fires as salt/job/<jid>/prog/<id>/<n>.
	MethodProgress = "agent.state_progress"
	// MethodFilePush is one chunk of cp.push (FilePush → nothing): the
	// master keeps the file under cachedir/minions/<id>/files/ when its
	// file_recv allows.
	MethodFilePush = "agent.file_push"
)

// FilePush is a chunk of a file an agent pushes to its master (cp.push):
// Data from offset Loc of a file of Size bytes, to be kept at Path (its
// components, relative to the agent's files directory on the master).
// The first chunk has Loc 0; the file is complete when Loc+len(Data)
// reaches Size.
type FilePush struct {
	Path []string `json:"path"`
	Loc  int64    `json:"loc"`
	Size int64    `json:"size"`
	Data []byte   `json:"data"`
}

// PillarRequest asks for the agent's pillar, compiled with its grains
// (top file targets match them), from pillarenv when set.
type PillarRequest struct {
	Grains    map[string]any `json:"grains"`
	Saltenv   string         `json:"saltenv,omitempty"`
	Pillarenv string         `json:"pillarenv,omitempty"`
}

// Progress is one state's result while a state run goes on (Salt's
// state_events): Ret is {state key: result}, Len the number of states.
type Progress struct {
	JID string         `json:"jid"`
	Ret map[string]any `json:"ret"`
	Len int            `json:"len"`
}

// Messages the master pushes to a connected agent.
const (
	// PushAccepted tells a pending agent its key was accepted: it says
	// hello again at once instead of waiting out acceptance_wait_time.
	PushAccepted = "agent.accepted"
	// PushJob is a job for the agent to run (Job); a jid it has seen is
	// not run again.
	PushJob = "agent.job"
	// PushFindJob asks whether a job still runs (FindJob); the agent
	// answers with MethodJobState (Salt's saltutil.find_job, without a
	// job of its own).
	PushFindJob = "agent.find_job"
)

// Key states, as the master keeps them (Salt's salt-key lists).
const (
	StateAccepted = "accepted"
	StatePending  = "pending"
	StateRejected = "rejected"
	StateDenied   = "denied"
)

// Hello is an agent's introduction; its key is the one it connected with.
type Hello struct {
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
	// AutosignGrains are the grains named by autosign_grains, for the
	// master's autosign_grains_dir.
	AutosignGrains map[string]any `json:"autosign_grains,omitempty"`
}

// HelloReply is the master's verdict on a Hello.
type HelloReply struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Master string `json:"master,omitempty"`
}

// Event is an event the agent fires on the master's bus. The master turns
// Load into the event's data after setting its id to the authenticated one
// (Salt's `_minion_event`).
type Event struct {
	// ID is the event's id, fixed when the agent queued it: a re-sent copy
	// is stored once.
	ID   string         `json:"id"`
	Tag  string         `json:"tag"`
	Load map[string]any `json:"load"`
	Time time.Time      `json:"time"`
}

// RequestJID is the jid of a return for a job the agent started itself
// (salt-call's, brine call's): the master gives it a jid of its own when it
// stores it, as Salt's master does for salt-call's return ("req"). An
// agent cannot name a jid it was not sent, so it cannot write into another
// job's record.
const RequestJID = "req"

// Return is the result of a job run on the agent (Salt's `_return`).
type Return struct {
	// ID is the return event's id, fixed when queued.
	ID      string    `json:"id"`
	JID     string    `json:"jid"`
	Fun     string    `json:"fun"`
	FunArgs []any     `json:"fun_args"`
	Return  any       `json:"return"`
	Retcode int       `json:"retcode"`
	Success bool      `json:"success"`
	Out     string    `json:"out,omitempty"`
	Time    time.Time `json:"time"`
}

// Stored is the master's answer to an Event or a Return: the id of the
// event it stored, after which the agent drops its queued copy.
type Stored struct {
	ID string `json:"id"`
}

// Mine is the agent's grains and mine function results.
type Mine struct {
	Grains map[string]any `json:"grains,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
	// Errors are mine functions that failed, by name (kept out of Data).
	Errors map[string]string `json:"errors,omitempty"`
	// Delete names functions whose data is removed (mine.delete).
	Delete []string `json:"delete,omitempty"`
}

// Job is what the master publishes to the agents a job targets, Salt's
// publish load: the jobs.Targeted it was asked to publish, with its jid
// (its Extra stays on the master). KillAfter, when set, ends the function
// on the agent when it runs longer.
type Job = jobs.Targeted

// FindJob asks about the job JID; Req is echoed in the answer.
type FindJob struct {
	JID string `json:"jid"`
	Req string `json:"req"`
}

// JobState says whether the agent still runs a job (Running) or has
// already finished it (Done).
type JobState struct {
	JID     string `json:"jid"`
	Req     string `json:"req"`
	Running bool   `json:"running"`
	Done    bool   `json:"done,omitempty"`
}

// MineGet is the agent's mine.get: the mine data of fun on the minions
// tgt selects.
type MineGet struct {
	Tgt     string `json:"tgt"`
	Fun     string `json:"fun"`
	TgtType string `json:"tgt_type,omitempty"`
}

// FileList lists the files of a saltenv under Prefix.
type FileList struct {
	Saltenv string `json:"saltenv"`
	Prefix  string `json:"prefix,omitempty"`
}

// FileRequest names a file of the master's file server (a salt:// path
// without its scheme) and, for MethodFileRead, where to read from.
type FileRequest struct {
	Path    string `json:"path"`
	Saltenv string `json:"saltenv"`
	Offset  int64  `json:"offset,omitempty"`
}

// FileStat describes a served file.
type FileStat struct {
	Size int64  `json:"size"`
	Hash string `json:"hash"` // sha256, hex
	Mode uint32 `json:"mode"`
}

// FileChunk is a part of a served file: Data from Offset; EOF when it
// reaches the end.
type FileChunk struct {
	Data []byte `json:"data"`
	EOF  bool   `json:"eof"`
}

// DecodeJob reads a pushed Job (jobs.DecodeTargeted), which must name its
// jid and function.
func DecodeJob(body []byte) (Job, error) {
	j, err := jobs.DecodeTargeted(body)
	if err == nil && (j.JID == "" || j.Fun == "") {
		err = errors.New("job: no jid or no fun")
	}
	return j, err
}
