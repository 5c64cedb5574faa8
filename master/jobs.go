package master

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
)

// run runs a registry function as a job for `brine run`. Unknown functions
// and wrong arguments are refused before any job starts, as salt-run does;
// a function that fails is a finished job with success false.
func (m *Master) run(ctx context.Context, body json.RawMessage) (any, error) {
	req, err := rpc.DecodeRunRequest(rpc.Run, body)
	if err != nil {
		return nil, err
	}
	if err := m.funcs.Check(req.Fun, req.Args, req.Kwargs); err != nil {
		return nil, err
	}
	res, err := jobs.Call(ctx, m.funcs, m.bus, req.Fun, req.Args, req.Kwargs, req.User,
		bus.Origin{Source: m.source + "/run"})
	if errors.Is(err, jobs.ErrNotAnnounced) {
		return nil, err
	}
	return res, nil
}

// jobBegin announces a job that a client runs itself (a `brine cloud`
// run): clients may not fire salt/run/ events, the master fires them for
// it. The reply carries the JID and start that jobs.end needs.
func (m *Master) jobBegin(ctx context.Context, body json.RawMessage) (any, error) {
	req, err := rpc.DecodeRunRequest(rpc.JobsBegin, body)
	if err != nil {
		return nil, err
	}
	r := jobs.NewRun(req.Fun, req.Args, req.Kwargs, req.User, bus.Origin{Source: m.source + "/jobs"})
	if err := r.Begin(ctx, m.bus); err != nil {
		return nil, err
	}
	req.JID, req.Start = r.JID, r.Start
	return req, nil
}

// jobEnd fires the ret of a job begun with jobs.begin: the request is that
// reply with return and, for a failure, error.
func (m *Master) jobEnd(ctx context.Context, body json.RawMessage) (any, error) {
	req, err := rpc.DecodeRunRequest(rpc.JobsEnd, body)
	if err != nil {
		return nil, err
	}
	if !jobs.IsJID(req.JID) || req.Start.IsZero() {
		return nil, fmt.Errorf("jobs.end: want the jid and start of jobs.begin's reply, got %q %v", req.JID, req.Start)
	}
	r := jobs.NewRun(req.Fun, req.Args, req.Kwargs, req.User, bus.Origin{Source: m.source + "/jobs"})
	r.JID, r.Start = req.JID, req.Start
	var jobErr error
	if req.Error != "" {
		jobErr = errors.New(req.Error)
	}
	if err := r.End(ctx, m.bus, req.Return, jobErr, nil); err != nil {
		return nil, err
	}
	return map[string]string{"jid": r.JID}, nil
}
