package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
)

// tally keeps the times the master stamped on the events of the
// orchestrations (salt/run/<jid>/new|ret|prog/<n>) and of the jobs their
// steps published (salt/job/<jid>/new|ret/<id>), as the watch delivers
// them: the master's side of each step, beside what the return says.
type tally struct {
	mu   sync.Mutex
	runs map[string]*runSeen
	jobs map[string]*jobSeen
}

// runSeen is an orchestration (a runner job).
type runSeen struct {
	newT, retT time.Time
	// prog is each step's progress event by its run number.
	prog map[int]time.Time
}

// jobSeen is a job a step published.
type jobSeen struct {
	newT time.Time
	// orch is the orchestration's jid (the new event's metadata).
	orch    string
	minions int
	// rets is the master's time on each agent's first return; copies
	// counts the returns stored again for an agent, notTrue those that
	// were not success with True.
	rets    map[string]time.Time
	copies  int
	notTrue int
}

func newTally() *tally {
	return &tally{runs: map[string]*runSeen{}, jobs: map[string]*jobSeen{}}
}

func (t *tally) run(jid string) *runSeen {
	r := t.runs[jid]
	if r == nil {
		r = &runSeen{prog: map[int]time.Time{}}
		t.runs[jid] = r
	}
	return r
}

func (t *tally) job(jid string) *jobSeen {
	j := t.jobs[jid]
	if j == nil {
		j = &jobSeen{rets: map[string]time.Time{}}
		t.jobs[jid] = j
	}
	return j
}

// add takes one stored event; others than the above are ignored.
func (t *tally) add(ev *bus.Event) error {
	if rest, ok := strings.CutPrefix(ev.Tag, "salt/run/"); ok {
		jid, what, _ := strings.Cut(rest, "/")
		t.mu.Lock()
		defer t.mu.Unlock()
		r := t.run(jid)
		switch {
		case what == "new":
			r.newT = ev.Time
		case what == "ret":
			r.retT = ev.Time
		case strings.HasPrefix(what, "prog/"):
			if n, err := strconv.Atoi(strings.TrimPrefix(what, "prog/")); err == nil {
				r.prog[n] = ev.Time
			}
		}
		return nil
	}
	kind, jid, what, id, ok := jobs.ParseTag(ev.Tag)
	if !ok || kind != jobs.KindJob {
		return nil
	}
	if what == "new" {
		var load struct {
			Minions  []string `json:"minions"`
			Metadata struct {
				Orch string `json:"orchestration_jid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(ev.Data, &load); err != nil {
			return fmt.Errorf("%s: %w", ev.Tag, err)
		}
		t.mu.Lock()
		j := t.job(jid)
		j.newT, j.orch, j.minions = ev.Time, load.Metadata.Orch, len(load.Minions)
		t.mu.Unlock()
		return nil
	}
	isTrue, err := fleet.ReturnedTrue(ev.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", ev.Tag, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.job(jid)
	if _, seen := j.rets[id]; seen {
		j.copies++
		return nil
	}
	j.rets[id] = ev.Time
	if !isTrue {
		j.notTrue++
	}
	return nil
}

// stepJob is what the watch saw of one job a step published.
type stepJob struct {
	jid           string
	newT, lastRet time.Time
	minions, rets int
	copies        int
	notTrue       int
}

// orchestration is what the watch saw of orchestration jid: its own
// events and its steps' jobs in the order they were published.
func (t *tally) orchestration(jid string) (runSeen, []stepJob) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var r runSeen
	if x := t.runs[jid]; x != nil {
		r = *x
		r.prog = maps.Clone(x.prog)
	}
	var steps []stepJob
	for sj, j := range t.jobs {
		if j.orch != jid {
			continue
		}
		s := stepJob{jid: sj, newT: j.newT, minions: j.minions, rets: len(j.rets), copies: j.copies, notTrue: j.notTrue}
		for _, at := range j.rets {
			if at.After(s.lastRet) {
				s.lastRet = at
			}
		}
		steps = append(steps, s)
	}
	slices.SortFunc(steps, func(a, b stepJob) int { return a.newT.Compare(b.newT) })
	return r, steps
}

// complete says whether the watch saw orchestration jid end, with steps
// step jobs each returned by agents agents and a progress event each.
func (t *tally) complete(jid string, steps, agents int) bool {
	r, js := t.orchestration(jid)
	if r.retT.IsZero() || len(js) < steps || len(r.prog) < steps {
		return false
	}
	for _, j := range js {
		if j.rets < agents {
			return false
		}
	}
	return true
}
