package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
)

const (
	// DefaultReplayLimit is the page size of a replay that names none.
	DefaultReplayLimit = 1000
	maxReplayLimit     = 10000
	// maxReplayBytes ends a page early so that a reply stays a few MiB even
	// when the events are large.
	maxReplayBytes = 8 << 20
	// replayIdle ends a page when the log delivers nothing for this long:
	// the start point lies past every stored event.
	replayIdle = time.Second
)

// ReplayRequest is the body of "replay": a page of stored events matching
// Pattern after a starting point (the first of AfterSeq, AfterID, SinceTime
// that is set; none means the start of the log), up to UntilSeq (default:
// the newest event when the request arrives).
type ReplayRequest struct {
	Pattern   string    `json:"pattern,omitempty"`
	AfterSeq  uint64    `json:"after_seq,omitempty"`
	AfterID   string    `json:"after_id,omitempty"`
	SinceTime time.Time `json:"since_time,omitzero"`
	UntilSeq  uint64    `json:"until_seq,omitempty"`
	Limit     int       `json:"limit,omitempty"`
}

// ReplayReply is one page. LastSeq is the log position the page covers
// through, matching or not: the next page starts after it. Done means the
// page reached UntilSeq (or the head of the log), or that nothing is stored
// after the starting point.
type ReplayReply struct {
	Events  []ReplayedEvent `json:"events"`
	LastSeq uint64          `json:"last_seq"`
	Head    uint64          `json:"head"`
	Done    bool            `json:"done"`
}

// ReplayedEvent is a stored event with its log position.
type ReplayedEvent struct {
	Seq   uint64     `json:"seq"`
	Event *bus.Event `json:"event"`
}

// lastSeqer is implemented by buses that can tell the head of their log
// (natsbus does); without it the gateway knows only what it has seen.
type lastSeqer interface {
	LastSeq(ctx context.Context) (uint64, error)
}

func (s *Server) logHead(ctx context.Context) (uint64, error) {
	head := s.head.Load()
	if ls, ok := s.bus.(lastSeqer); ok {
		h, err := ls.LastSeq(ctx)
		if err != nil {
			return 0, err
		}
		head = max(head, h)
	}
	return head, nil
}

// handleReplay reads a page of the durable log through a bus subscription on
// every event (so that it sees every position up to the target, even those
// the pattern skips), keeping the matching ones.
func (s *Server) handleReplay(ctx context.Context, body json.RawMessage) (any, error) {
	var req ReplayRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: replay body: %v", ErrInvalidRequest, err)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultReplayLimit
	}
	limit = min(limit, maxReplayLimit)
	head, err := s.logHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	target := head
	if req.UntilSeq > 0 {
		target = min(target, req.UntilSeq)
	}
	reply := &ReplayReply{Events: []ReplayedEvent{}, Head: head, LastSeq: req.AfterSeq}
	since := bus.Since{AfterSeq: req.AfterSeq, AfterID: req.AfterID, Time: req.SinceTime}
	if since.IsZero() {
		since.Time = time.Unix(0, 0)
	}
	if target == 0 || req.AfterSeq >= target {
		reply.Done = true
		return reply, nil
	}
	var g *fnmatch.Glob
	if req.Pattern != "" {
		g = fnmatch.Compile(req.Pattern)
	}

	var (
		mu       sync.Mutex
		size     int
		finished bool
		seen     = make(chan struct{}, 1)
		full     = make(chan struct{})
	)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := s.bus.Subscribe(sctx, bus.SubscribeOptions{Since: since}, func(ev *bus.Event) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		reply.LastSeq = ev.Seq
		if g == nil || g.Match(ev.Tag) {
			reply.Events = append(reply.Events, ReplayedEvent{Seq: ev.Seq, Event: ev})
			size += len(ev.Data) + len(ev.Tag) + 256
		}
		switch {
		case ev.Seq >= target:
			reply.Done = true
		case len(reply.Events) < limit && size < maxReplayBytes:
			select {
			case seen <- struct{}{}:
			default:
			}
			return
		}
		finished = true
		close(full)
	})
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer sub.Stop()
	idle := time.NewTimer(replayIdle)
	defer idle.Stop()
	for {
		select {
		case <-full:
			return reply, nil
		case <-seen:
			idle.Reset(replayIdle)
		case <-idle.C:
			mu.Lock()
			defer mu.Unlock()
			finished = true
			// Nothing at all means nothing is stored after the starting
			// point (a time after every event): done, without claiming
			// positions that were not seen. A watch fills any gap from its
			// first live event.
			reply.Done = reply.LastSeq == req.AfterSeq
			return reply, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("replay: %w", ctx.Err())
		}
	}
}
