package master

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/wire"
)

// agentMethods is the agent protocol: every method an agent may call,
// beside the operators' table (handleRequests), whatever transport
// carries it. Hello and ping answer any authenticated connection; every
// other method only an accepted one (agents.bind), with the id its key
// was accepted under.
func (m *Master) agentMethods() map[string]AgentHandler {
	a, p := m.agents, m.publisher
	files := files{roots: m.roots, log: m.log}
	recv := &fileRecv{cfg: func() *config.Master { return m.cfg }, log: m.log}
	return map[string]AgentHandler{
		wire.MethodHello:    a.hello,
		wire.MethodPing:     func(context.Context, Conn, json.RawMessage) (any, error) { return map[string]any{}, nil },
		wire.MethodEvent:    a.bind(a.event),
		wire.MethodReturn:   a.bind(a.ret),
		wire.MethodMine:     a.bind(a.mineUpdate),
		wire.MethodJobState: a.bind(p.jobState),
		wire.MethodProgress: a.bind(p.progress),
		wire.MethodMineGet:  a.bind(mineGet(m.mine)),
		wire.MethodPillar:   a.bind(m.pillars.serve),
		wire.MethodFileList: a.bind(files.list),
		wire.MethodFileStat: a.bind(files.stat),
		wire.MethodFileRead: a.bind(files.read),
		wire.MethodFileEnvs: a.bind(files.envs),
		wire.MethodFilePush: a.bind(recv.push),
	}
}

// serveAgents serves the agent protocol on each of the master's
// transports.
func (m *Master) serveAgents() {
	methods := m.agentMethods()
	for _, t := range m.transports {
		t.ServeAgents(methods, m.agents.gone)
	}
}

// mineQuerier answers mine.get: the mine data of fun on the minions tgt
// selects.
type mineQuerier interface {
	Query(ctx context.Context, tgt any, fun any, tgtType string) (map[string]any, error)
}

// mineGet answers an agent's mine.get from the mine.
func mineGet(q mineQuerier) func(context.Context, string, json.RawMessage) (any, error) {
	return func(ctx context.Context, _ string, body json.RawMessage) (any, error) {
		var req wire.MineGet
		if err := readBody("mine.get", body, &req); err != nil {
			return nil, err
		}
		return q.Query(ctx, req.Tgt, req.Fun, req.TgtType)
	}
}

// readBody decodes an agent's request body into v; what it cannot read is
// refused as wire.ErrInvalidRequest, naming what the request was.
func readBody(what string, body json.RawMessage, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s: %v", wire.ErrInvalidRequest, what, err)
	}
	return nil
}
