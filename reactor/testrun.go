package reactor

import (
	"context"

	"github.com/brinehq/brine/bus"
)

// TestReport is what the reactor would do with one event (`brine reactor
// test`): the files the tag maps to, as rendered, the calls compiled from
// them and every error, with line; after an execution, each call's result
// and the events the calls fired, which were recorded, not published.
type TestReport struct {
	Tag     string       `json:"tag"`
	Files   []TestFile   `json:"files"`
	Calls   []*Reaction  `json:"calls"`
	Errors  []string     `json:"errors"`
	Results []TestResult `json:"results,omitempty"`
	Events  []*bus.Event `json:"events,omitempty"`
	// Problems counts the errors and the calls that neither succeeded nor
	// were skipped: a test with any is a failed one.
	Problems int `json:"-"`
}

// TestFile is one file the tag maps to.
type TestFile struct {
	Glob     string `json:"glob"`
	Spec     string `json:"spec"`
	Path     string `json:"path,omitempty"`
	Rendered string `json:"rendered,omitempty"`
}

// TestResult is one call's outcome when the test executes them.
type TestResult struct {
	ID       string `json:"id"`
	Call     string `json:"call"`
	Status   string `json:"status"`
	JID      string `json:"jid,omitempty"`
	Return   any    `json:"return,omitempty"`
	Error    string `json:"error,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
}

// Test plans ev's reactions and, with execute, runs them, publishing what
// they fire to a recorder instead of the bus. Without execute, a call the
// live reactor would refuse (Runnable) is a problem now rather than when
// the event comes. Give the reactor one attempt (Retry{Attempts: 1}) for a
// failure to be reported at once rather than backed off.
func (r *Reactor) Test(ctx context.Context, ev *bus.Event, execute bool) (*TestReport, error) {
	data, err := ev.DataMap()
	if err != nil {
		return nil, err
	}
	plan := r.Plan(ctx, ev.Tag, data)
	rep := &TestReport{Tag: ev.Tag, Files: []TestFile{}, Calls: plan.Reactions, Errors: []string{}}
	if rep.Calls == nil {
		rep.Calls = []*Reaction{}
	}
	for _, f := range plan.Files {
		rep.Files = append(rep.Files, TestFile{Glob: f.Glob, Spec: f.Spec, Path: f.Path, Rendered: string(f.Rendered)})
	}
	for _, e := range plan.Errors {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.Problems = len(plan.Errors)
	if !execute {
		for _, c := range plan.Reactions {
			if err := r.Runnable(c); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				rep.Problems++
			}
		}
		return rep, nil
	}
	pub := &bus.Recorder{}
	for _, res := range r.Execute(ctx, ev, plan.Reactions, pub, nil) {
		tr := TestResult{ID: res.Reaction.ID, Call: res.Reaction.Call(), Status: string(res.Status), JID: res.JID,
			Return: res.Return, Reason: res.Reason, Attempts: res.Attempts}
		if res.Err != nil {
			tr.Error = res.Err.Error()
		}
		if res.Status != Succeeded && res.Status != Skipped {
			rep.Problems++
		}
		rep.Results = append(rep.Results, tr)
	}
	rep.Events = pub.Events()
	return rep, nil
}
