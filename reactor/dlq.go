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

// Redrive runs the dead letter id again, once, as a new job caused by the
// original event. On success it is removed from the list; on failure it
// stays, with the new error and attempt count.
func (r *Reactor) Redrive(ctx context.Context, id string) (Result, error) {
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
	res := r.job(ctx, rt.bus, dl.Event, dl.Reaction, 1, Retry{Attempts: 1})
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

// RedriveAll redrives every dead letter and returns their results.
func (r *Reactor) RedriveAll(ctx context.Context) ([]Result, error) {
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
		res, err := r.Redrive(ctx, dl.ID)
		if err != nil {
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
