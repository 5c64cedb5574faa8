package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/brinehq/brine/bench/internal/fleet"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/jobs"
)

// jobTally counts the jobs' events stored on the master's bus, as a watch
// (or a replay of the log) delivers them, once per log position: a return
// stored twice is two positions, and is counted twice.
type jobTally struct {
	mu   sync.Mutex
	jobs map[string]*jobSeen
}

// jobSeen is what was stored of one job.
type jobSeen struct {
	// newTime is the time the master stamped on salt/job/<jid>/new.
	newTime time.Time
	// count is returns stored by agent id; first is the master's time on
	// each agent's first, seen when the watch delivered it.
	count map[string]int
	first map[string]time.Time
	seen  map[string]time.Time
	// byEventID counts returns by event id: the agent re-sends a return
	// under the id it queued it with, which the bus must store once.
	byEventID map[string]int
	// ok counts returns with success true and a return of true (what
	// test.ping and test.sleep return).
	ok int
}

func newJobTally() *jobTally {
	return &jobTally{jobs: map[string]*jobSeen{}}
}

func (t *jobTally) job(jid string) *jobSeen {
	j := t.jobs[jid]
	if j == nil {
		j = &jobSeen{count: map[string]int{}, first: map[string]time.Time{}, seen: map[string]time.Time{}, byEventID: map[string]int{}}
		t.jobs[jid] = j
	}
	return j
}

// add takes one stored event; anything but a job's new and ret events is
// ignored.
func (t *jobTally) add(ev *bus.Event) error {
	now := time.Now()
	kind, jid, what, id, ok := jobs.ParseTag(ev.Tag)
	if !ok || kind != jobs.KindJob {
		return nil
	}
	if what == "new" {
		t.mu.Lock()
		t.job(jid).newTime = ev.Time
		t.mu.Unlock()
		return nil
	}
	isTrue, err := fleet.ReturnedTrue(ev.Data)
	if err != nil {
		return fmt.Errorf("return %s: %w", ev.Tag, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	j := t.job(jid)
	j.byEventID[ev.ID]++
	j.count[id]++
	if j.count[id] == 1 {
		j.first[id], j.seen[id] = ev.Time, now
		if isTrue {
			j.ok++
		}
	}
	return nil
}

// returned is how many agents' returns to jid are stored.
func (t *jobTally) returned(jid string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j := t.jobs[jid]; j != nil {
		return len(j.count)
	}
	return 0
}

// allReturned reports whether every job of jids has n returns.
func (t *jobTally) allReturned(jids []string, n int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, jid := range jids {
		if j := t.jobs[jid]; j == nil || len(j.count) < n {
			return false
		}
	}
	return true
}

// timing is what the watch saw of some jobs' returns: each return's
// latency (the master's time on its ret event minus that on the job's new
// event), the master's times on the returns, and when the watch saw the
// last.
type timing struct {
	latency  []time.Duration
	retTimes []time.Time
	lastSeen time.Time
}

func (t *jobTally) timing(jids []string) timing {
	t.mu.Lock()
	defer t.mu.Unlock()
	var tm timing
	for _, jid := range jids {
		j := t.jobs[jid]
		if j == nil {
			continue
		}
		for id, at := range j.first {
			tm.retTimes = append(tm.retTimes, at)
			if !j.newTime.IsZero() {
				tm.latency = append(tm.latency, at.Sub(j.newTime))
			}
			if s := j.seen[id]; s.After(tm.lastSeen) {
				tm.lastSeen = s
			}
		}
	}
	slices.SortFunc(tm.retTimes, func(a, b time.Time) int { return a.Compare(b) })
	return tm
}

// check is the verdict on some jobs' returns.
type check struct {
	Expected int `json:"expected"`
	// Stored counts the agents with a return stored, Events every return
	// event, copies included.
	Stored int `json:"stored"`
	Events int `json:"return_events"`
	Lost   int `json:"lost"`
	// DuplicatedByAgent is the returns stored beyond the first for one
	// (jid, agent); DuplicatedByEventID those stored beyond the first
	// under one event id (a re-sent return the bus did not recognise).
	DuplicatedByAgent   int `json:"duplicated_by_agent"`
	DuplicatedByEventID int `json:"duplicated_by_event_id"`
	// NotTrue counts first returns that were not success with True.
	NotTrue int `json:"not_true"`
	// Strangers are returns from agents the bench does not run.
	Strangers int `json:"strangers"`
}

// verdict checks that each of jids has exactly one return from each of
// agents.
func (t *jobTally) verdict(jids []string, agents []string) check {
	t.mu.Lock()
	defer t.mu.Unlock()
	want := make(map[string]bool, len(agents))
	for _, id := range agents {
		want[id] = true
	}
	c := check{Expected: len(jids) * len(agents)}
	for _, jid := range jids {
		j := t.jobs[jid]
		if j == nil {
			c.Lost += len(agents)
			continue
		}
		for id, n := range j.count {
			if !want[id] {
				c.Strangers++
				continue
			}
			c.Stored++
			c.Events += n
			c.DuplicatedByAgent += n - 1
		}
		for _, id := range agents {
			if j.count[id] == 0 {
				c.Lost++
			}
		}
		c.NotTrue += len(j.count) - j.ok
		for _, n := range j.byEventID {
			c.DuplicatedByEventID += n - 1
		}
	}
	return c
}

// replay feeds t every stored event matching pattern from since on,
// through the gateway's replay method, page by page: the stored truth,
// independent of what a live watch saw.
func replay(ctx context.Context, c *gateway.Client, pattern string, since time.Time, t *jobTally) error {
	req := gateway.ReplayRequest{Pattern: pattern, SinceTime: since, Limit: 10000}
	for {
		var rep gateway.ReplayReply
		if err := c.Call(ctx, "replay", req, &rep); err != nil {
			return fmt.Errorf("replay %s: %w", pattern, err)
		}
		for _, re := range rep.Events {
			if err := t.add(re.Event); err != nil {
				return err
			}
		}
		if rep.Done {
			return nil
		}
		if rep.LastSeq <= req.AfterSeq {
			return fmt.Errorf("replay %s made no progress after %d", pattern, req.AfterSeq)
		}
		req.AfterSeq, req.SinceTime = rep.LastSeq, time.Time{}
	}
}
