package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
)

// stormTag is the tag of the events agents queue while the master is down.
const stormTag = "bench/agents/storm"

// tally counts the events of interest stored on the master's bus, as a
// watch (or a replay of the whole log) delivers them, once per log
// position.
type tally struct {
	mu sync.Mutex
	// starts: agent id -> salt/minion/<id>/start event ids -> when seen.
	starts map[string]map[string]time.Time
	// base: agent id -> start events counted when the storm began.
	base map[string]int
	// stormStart: agent id -> when its first start event after the storm
	// began was seen.
	stormStart   map[string]time.Time
	minionStarts int
	auth         int
	events       int
	// Storm events by payload (agent/seq) and by event id.
	byPayload map[string]int
	byID      map[string]int
	payloadAt map[string]time.Time
	// wrongID counts storm events whose payload names another agent than
	// the id the master stamped on them.
	wrongID int
	// unexpected counts storm events whose payload is not one queued.
	unexpected int
	expected   map[string]bool
}

func newTally() *tally {
	return &tally{starts: map[string]map[string]time.Time{}, stormStart: map[string]time.Time{},
		byPayload: map[string]int{}, byID: map[string]int{}, payloadAt: map[string]time.Time{}}
}

func payloadKey(agent string, seq int) string { return fmt.Sprintf("%s/%d", agent, seq) }

func (t *tally) add(ev *bus.Event) error {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events++
	switch {
	case ev.Tag == "salt/auth":
		t.auth++
	case ev.Tag == "minion_start":
		t.minionStarts++
	case strings.HasPrefix(ev.Tag, "salt/minion/") && strings.HasSuffix(ev.Tag, "/start"):
		id := strings.TrimSuffix(strings.TrimPrefix(ev.Tag, "salt/minion/"), "/start")
		set := t.starts[id]
		if set == nil {
			set = map[string]time.Time{}
			t.starts[id] = set
		}
		if _, ok := set[ev.ID]; !ok {
			set[ev.ID] = now
		}
		if t.base != nil && len(set) > t.base[id] {
			if _, ok := t.stormStart[id]; !ok {
				t.stormStart[id] = now
			}
		}
	case ev.Tag == stormTag:
		t.byID[ev.ID]++
		var load struct {
			ID   string `json:"id"`
			Data struct {
				Agent string `json:"agent"`
				Seq   int    `json:"seq"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Data, &load); err != nil {
			return fmt.Errorf("storm event %s: %w", ev.ID, err)
		}
		agent, seq := load.Data.Agent, load.Data.Seq
		if agent != load.ID {
			t.wrongID++
		}
		key := payloadKey(agent, seq)
		if t.expected != nil && !t.expected[key] {
			t.unexpected++
		}
		t.byPayload[key]++
		if _, ok := t.payloadAt[key]; !ok {
			t.payloadAt[key] = now
		}
	}
	return nil
}

// beginStorm records what was counted before the master went down.
func (t *tally) beginStorm(expected map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base = map[string]int{}
	for id, set := range t.starts {
		t.base[id] = len(set)
	}
	t.expected = expected
}

// startsBefore sets the start events counted before the storm (from
// another tally's baseline), for a tally fed from the beginning of the log.
func (t *tally) startsBefore(base map[string]int, expected map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.base, t.expected = base, expected
}

// baseline is what beginStorm recorded, to set up another tally (a
// replay) that tells the storm's start events from the onboarding's.
func (t *tally) baseline() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.base))
	for id, n := range t.base {
		out[id] = n
	}
	return out
}

// started is the number of agents with at least one start event.
func (t *tally) started() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.starts)
}

func (t *tally) counts() (starts, minionStarts, stormStarts, payloads int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.starts), t.minionStarts, len(t.stormStart), len(t.byPayload)
}

// check is the verdict on the storm events: queued ones not stored, and
// those stored more than once, by payload and by event id.
type check struct {
	Expected            int `json:"expected"`
	Stored              int `json:"stored"`
	Lost                int `json:"lost"`
	DuplicatedByPayload int `json:"duplicated_by_payload"`
	DuplicatedByID      int `json:"duplicated_by_id"`
	WrongID             int `json:"wrong_id"`
	Unexpected          int `json:"unexpected"`
	// AgentsRestarted counts agents with a start event after the restart.
	AgentsRestarted int `json:"agents_restarted"`
	AuthEvents      int `json:"salt_auth_events"`
	MinionStart     int `json:"minion_start_events"`
	Events          int `json:"events"`
}

func (t *tally) verdict(expected map[string]bool) check {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := check{Expected: len(expected), WrongID: t.wrongID, Unexpected: t.unexpected,
		AgentsRestarted: len(t.stormStart), AuthEvents: t.auth, MinionStart: t.minionStarts, Events: t.events}
	for key, n := range t.byPayload {
		c.Stored += n
		if n > 1 {
			c.DuplicatedByPayload += n - 1
		}
		if !expected[key] {
			c.Unexpected++
		}
	}
	for key := range expected {
		if t.byPayload[key] == 0 {
			c.Lost++
		}
	}
	for _, n := range t.byID {
		if n > 1 {
			c.DuplicatedByID += n - 1
		}
	}
	return c
}

// replayAll feeds every event stored on the master's log to t, through the
// gateway's replay method, page by page: the stored truth, independent of
// what a live watch saw.
func replayAll(ctx context.Context, c *gateway.Client, t *tally) (uint64, error) {
	var cursor uint64
	for {
		var rep gateway.ReplayReply
		req := gateway.ReplayRequest{AfterSeq: cursor, Limit: 10000}
		if err := c.Call(ctx, "replay", req, &rep); err != nil {
			return cursor, err
		}
		for _, re := range rep.Events {
			if err := t.add(re.Event); err != nil {
				return cursor, err
			}
		}
		if rep.Done {
			return rep.Head, nil
		}
		if rep.LastSeq <= cursor {
			return cursor, fmt.Errorf("replay made no progress after %d", cursor)
		}
		cursor = rep.LastSeq
	}
}
