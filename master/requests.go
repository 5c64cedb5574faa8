package master

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brinehq/brine/integrations"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
	"github.com/brinehq/brine/reactor"
)

// handleRequests registers the requests the master answers on its request
// port (master/rpc names them) with the gateway.
func (m *Master) handleRequests() {
	for method, h := range map[string]func(context.Context, json.RawMessage) (any, error){
		rpc.Run:            m.run,
		rpc.JobsBegin:      m.jobBegin,
		rpc.JobsEnd:        m.jobEnd,
		rpc.JobsList:       m.jobsList,
		rpc.JobsShow:       m.jobsShow,
		rpc.MineGet:        m.mineGet,
		rpc.MineList:       m.mineList,
		rpc.MineDelete:     m.mineDelete,
		rpc.ReactorList:    m.reactorList,
		rpc.ReactorDLQ:     m.reactorDLQ,
		rpc.ReactorRedrive: m.reactorRedrive,
		rpc.ExecPublish:    m.execPublish,
		rpc.ExecFindJob:    m.execFindJob,
		rpc.ExecTargets:    m.execTargets,
	} {
		m.gateway.Handle(method, h)
	}
	for _, in := range m.integrations {
		if r, ok := in.(integrations.Reporter); ok {
			m.gateway.Handle(rpc.Status(in.Name()), func(context.Context, json.RawMessage) (any, error) {
				st, on := r.Status()
				if !on {
					return nil, fmt.Errorf("%s is not configured on this master (no %s: section)", in.Name(), in.Name())
				}
				return st, nil
			})
		}
	}
}

// nonNil makes a nil list an empty one, so that JSON says [] rather than
// null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// orEmpty is nonNil for a function's list and error, as replies return
// them.
func orEmpty[T any](list []T, err error) (any, error) { return nonNil(list), err }

// decode reads a request body into v, naming the method in errors.
func decode(method string, body json.RawMessage, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (m *Master) jobsList(ctx context.Context, body json.RawMessage) (any, error) {
	var f jobs.Filter
	if err := decode(rpc.JobsList, body, &f); err != nil {
		return nil, err
	}
	return orEmpty(m.jobs.List(ctx, f))
}

func (m *Master) jobsShow(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.JobRequest
	if err := decode(rpc.JobsShow, body, &req); err != nil {
		return nil, err
	}
	j, err := m.jobs.Get(ctx, req.JID)
	if err != nil {
		return nil, err
	}
	if j.Rerun, err = m.jobs.Rerun(ctx, j); err != nil {
		return nil, err
	}
	return j, nil
}

func (m *Master) mineGet(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.MineGetRequest
	if err := decode(rpc.MineGet, body, &req); err != nil {
		return nil, err
	}
	kwargs := map[string]any{"tgt": req.Tgt, "tgt_type": req.TgtType}
	if req.Fun != "" {
		kwargs["fun"] = req.Fun
	}
	return m.funcs.Call(ctx, "mine.get", nil, kwargs, nil)
}

func (m *Master) mineList(ctx context.Context, _ json.RawMessage) (any, error) {
	return orEmpty(m.mine.List(ctx))
}

func (m *Master) mineDelete(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.MineDeleteReply
	if err := decode(rpc.MineDelete, body, &req); err != nil {
		return nil, err
	}
	existed, err := m.mine.Delete(ctx, req.ID)
	return rpc.MineDeleteReply{ID: req.ID, Deleted: existed}, err
}

func (m *Master) reactorList(context.Context, json.RawMessage) (any, error) {
	r := m.reactor
	return rpc.ReactorListReply{Entries: r.Status(), Stats: r.Stats().Snapshot(), Config: r.Config()}, nil
}

// reactorDLQ lists the dead letters with their calls' secrets masked (they
// are kept whole, for a redrive as recorded).
func (m *Master) reactorDLQ(ctx context.Context, _ json.RawMessage) (any, error) {
	list, err := m.reactor.DeadLetters(ctx)
	for i, dl := range list {
		re := *dl.Reaction
		re.Args, _ = jobs.Redact(re.Args).([]any)
		re.Kwargs, _ = jobs.Redact(re.Kwargs).(map[string]any)
		shown := *dl
		shown.Reaction, shown.Error = &re, jobs.RedactText(dl.Error)
		list[i] = &shown
	}
	return list, err
}

func (m *Master) reactorRedrive(ctx context.Context, body json.RawMessage) (any, error) {
	var req rpc.RedriveRequest
	if err := decode(rpc.ReactorRedrive, body, &req); err != nil {
		return nil, err
	}
	var (
		results []reactor.Result
		err     error
	)
	if req.All {
		results, err = m.reactor.RedriveAll(ctx, req.AsRecorded)
	} else {
		var res reactor.Result
		res, err = m.reactor.Redrive(ctx, req.ID, req.AsRecorded)
		results = []reactor.Result{res}
	}
	if err != nil {
		return nil, err
	}
	return rpc.RedriveReplies(results), nil
}
