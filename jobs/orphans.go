package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/brinehq/brine/bus"
)

// ErrInterrupted is the failure of a job whose master stopped before the job
// ended.
var ErrInterrupted = errors.New("interrupted: the master stopped (a crash, SIGKILL or shutdown) before the job ended")

// CloseOrphans ends, as interrupted, the runner jobs still running that were
// started from one of sources (brine://<master>/run, …/reactor, …/jobs): at
// start, a master closes what it owned and did not finish, so that no job
// stays "running" forever. Each gets its ret event (success false,
// interrupted true) through pub, with origin; the jobs closed are returned.
// The jobs resumable accepts are left running and returned apart: the
// master resumes them (orchestrations started with brine run).
func (s *Store) CloseOrphans(ctx context.Context, pub bus.Publisher, sources []string, origin bus.Origin, resumable func(*Job) bool) (closed []string, resume []*Job, err error) {
	list, err := s.List(ctx, Filter{Active: true})
	if err != nil {
		return nil, nil, err
	}
	for _, j := range list {
		if j.Kind != KindRun || !slices.Contains(sources, j.Source) {
			continue
		}
		if resumable != nil && resumable(j) {
			resume = append(resume, j)
			continue
		}
		r := &Run{JID: j.JID, Fun: j.Fun, FunArgs: j.Arg, User: j.User, Origin: origin, Start: j.StartTime}
		if err := r.End(ctx, pub, nil, ErrInterrupted, map[string]any{"interrupted": true}); err != nil {
			return closed, resume, fmt.Errorf("closing interrupted job %s: %w", j.JID, err)
		}
		closed = append(closed, j.JID)
	}
	return closed, resume, nil
}

// Rerun finds the job that ran an interrupted job's work again: the first
// later job of the same function caused by the same event ("" when none).
func (s *Store) Rerun(ctx context.Context, j *Job) (string, error) {
	if !j.Interrupted || j.Cause == "" {
		return "", nil
	}
	list, err := s.List(ctx, Filter{Fun: j.Fun})
	if err != nil {
		return "", err
	}
	for _, o := range list { // oldest first
		if o.JID > j.JID && o.Cause == j.Cause {
			return o.JID, nil
		}
	}
	return "", nil
}
