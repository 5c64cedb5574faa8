package reactor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
)

// ErrNotFound: no dead letter has that id.
var ErrNotFound = errors.New("no such dead letter")

// DeadLetter is a reaction that failed every attempt, kept durably with the
// event that triggered it so that it can be redriven.
type DeadLetter struct {
	// ID is the JID of the last job that ran it.
	ID       string     `json:"id"`
	Time     time.Time  `json:"time"`
	Event    *bus.Event `json:"event"`
	Reaction *Reaction  `json:"reaction"`
	Error    string     `json:"error"`
	Attempts int        `json:"attempts"`
}

// DeadLetters stores dead letters durably (reactor/kvdlq keeps them in a
// JetStream key-value bucket).
type DeadLetters interface {
	Put(ctx context.Context, dl *DeadLetter) error
	Get(ctx context.Context, id string) (*DeadLetter, error) // ErrNotFound when absent
	List(ctx context.Context) ([]*DeadLetter, error)
	Delete(ctx context.Context, id string) error
}

// DecodeDeadLetter reads a stored dead letter, keeping integer arguments
// integers (JSON would make them floats).
func DecodeDeadLetter(b []byte) (*DeadLetter, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var dl DeadLetter
	if err := dec.Decode(&dl); err != nil {
		return nil, fmt.Errorf("dead letter: %w", err)
	}
	if dl.Reaction == nil || dl.Event == nil {
		return nil, errors.New("dead letter: no reaction or event")
	}
	for i, a := range dl.Reaction.Args {
		dl.Reaction.Args[i] = bus.Numbers(a)
	}
	for k, v := range dl.Reaction.Kwargs {
		dl.Reaction.Kwargs[k] = bus.Numbers(v)
	}
	return &dl, nil
}

// ErrNotRunning: redrive needs the running reactor's bus.
var ErrNotRunning = errors.New("reactor not running")

// ErrGone: a redrive from the current files found no reaction of the dead
// letter's id in its file for its event (the file changed, or its
// conditions no longer hold).
var ErrGone = errors.New("reaction no longer in its file")

// Redrive modes: what runs again.
const (
	// FromFiles renders the reaction again from the current files, with the
	// original event: the usual fix of a failing reaction is editing it.
	FromFiles = "current files"
	// AsRecorded replays the call exactly as it was recorded.
	AsRecorded = "as recorded"
)

// Redrive runs the dead letter id again, once, as a new job caused by the
// original event: re-rendered from the current files (FromFiles), or the
// call as recorded (asRecorded); Result.From says which. On success it is
// removed from the list; on failure it stays, with the new error and
// attempt count.
func (r *Reactor) Redrive(ctx context.Context, id string, asRecorded bool) (Result, error) {
	rt := r.runtime.Load()
	if rt == nil {
		return Result{}, ErrNotRunning
	}
	if rt.dlq == nil {
		return Result{}, fmt.Errorf("redrive %s: no dead-letter store", id)
	}
	dl, err := rt.dlq.Get(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("redrive %s: %w", id, err)
	}
	re, from := dl.Reaction, AsRecorded
	if !asRecorded {
		if re, err = r.current(ctx, dl); err != nil {
			return Result{Reaction: dl.Reaction, Status: Failed, Err: err, From: FromFiles}, fmt.Errorf("redrive %s: %w", id, err)
		}
		from = FromFiles
	}
	res := r.job(ctx, rt.bus, dl.Event, re, 1, Retry{Attempts: 1})
	res.From = from
	if errors.Is(res.Err, errInterrupted) {
		return res, fmt.Errorf("redrive %s: %w", id, res.Err)
	}
	if res.Status == Succeeded {
		if err := rt.dlq.Delete(ctx, id); err != nil {
			return res, fmt.Errorf("redrive %s: ran, but cannot remove it from the list: %w", id, err)
		}
		return res, nil
	}
	dl.Attempts += res.Attempts
	dl.Error = res.Err.Error()
	dl.Time = time.Now().UTC()
	if err := rt.dlq.Put(ctx, dl); err != nil {
		return res, fmt.Errorf("redrive %s: %w", id, err)
	}
	return res, nil
}

// current renders dl's reaction again from the current files with its event.
func (r *Reactor) current(ctx context.Context, dl *DeadLetter) (*Reaction, error) {
	data, err := dl.Event.DataMap()
	if err != nil {
		return nil, err
	}
	plan := r.plan(ctx, dl.Event.Tag, data, false)
	for _, re := range plan.Reactions {
		if re.File == dl.Reaction.File && re.ID == dl.Reaction.ID {
			return re, nil
		}
	}
	for _, e := range plan.Errors {
		if e.File == dl.Reaction.File {
			return nil, fmt.Errorf("%s no longer compiles: %w (--as-recorded replays the recorded call)", dl.Reaction.File, e)
		}
	}
	return nil, fmt.Errorf("%w: %s is not in %s for event %s (--as-recorded replays the recorded call)", ErrGone, dl.Reaction.ID, dl.Reaction.File, dl.Event.ID)
}

// RedriveAll redrives every dead letter and returns their results.
func (r *Reactor) RedriveAll(ctx context.Context, asRecorded bool) ([]Result, error) {
	rt := r.runtime.Load()
	if rt == nil {
		return nil, ErrNotRunning
	}
	if rt.dlq == nil {
		return nil, errors.New("redrive: no dead-letter store")
	}
	list, err := rt.dlq.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, dl := range list {
		res, err := r.Redrive(ctx, dl.ID, asRecorded)
		if err != nil && !errors.Is(err, ErrGone) && res.Err == nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// DeadLetters lists the dead letters of the running reactor.
func (r *Reactor) DeadLetters(ctx context.Context) ([]*DeadLetter, error) {
	rt := r.runtime.Load()
	if rt == nil {
		return nil, ErrNotRunning
	}
	if rt.dlq == nil {
		return nil, nil
	}
	return rt.dlq.List(ctx)
}
