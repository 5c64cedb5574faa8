package master

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/wire"
)

// The agent-protocol seam. Agents reach the master through a transport:
// brine's CURVE gateway (curveTransport, below) and any other protocol an
// agent speaks. A transport authenticates a connection by the key it
// proves it holds, hands each of its requests to the master's table of
// agent methods (agentMethods, in agentproto.go) and delivers what the
// master pushes (a job, a find_job question, an acceptance). Everything
// else — who an agent is, what it may do, where its events and returns
// go — is decided once, in the table's handlers, for every transport.

// Conn is one agent's connection as its transport holds it (wire.Conn).
type Conn = wire.Conn

// AgentHandler serves one method of the agent protocol (wire.Handler).
type AgentHandler = wire.Handler

// Transport carries the agent protocol for one kind of agent.
type Transport interface {
	// ServeAgents routes every agent request to the handler of its method
	// (an unknown method is refused by the transport) and calls gone once
	// when a connection ends. It is called once, before the transport
	// accepts its first connection.
	ServeAgents(methods map[string]AgentHandler, gone func(Conn))
}

// curveTransport is brine's own agent protocol: ZeroMQ with CURVE on the
// gateway's request port, each agent under its own key.
type curveTransport struct{ gw *gateway.Server }

func (t curveTransport) ServeAgents(methods map[string]AgentHandler, gone func(Conn)) {
	for method, h := range methods {
		t.gw.HandleAgent(method, func(ctx context.Context, p *gateway.Peer, body json.RawMessage) (any, error) {
			out, err := h(ctx, curveConn{p}, body)
			return out, gatewayCode(err)
		})
	}
	t.gw.OnAgentGone(func(p *gateway.Peer) { gone(curveConn{p}) })
}

// curveConn is a gateway connection as a Conn: equal for the same peer.
type curveConn struct{ p *gateway.Peer }

func (c curveConn) Key() string                       { return c.p.Key().String() }
func (c curveConn) Remote() string                    { return c.p.Remote() }
func (c curveConn) Push(method string, body any) bool { return c.p.Push(method, body) }
func (c curveConn) Close()                            { c.p.Close() }

// gatewayCode gives a refusal of the agent protocol the gateway's error
// code, which agents act on (a key not accepted says hello again, a
// reserved tag is not sent twice), without changing its words.
func gatewayCode(err error) error {
	var code error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrReservedTag):
		code = gateway.ErrReservedTag
	case errors.Is(err, wire.ErrNotAccepted):
		code = gateway.ErrAuth
	case errors.Is(err, wire.ErrInvalidRequest):
		code = gateway.ErrInvalidRequest
	default:
		return err
	}
	return coded{err: err, code: code}
}

// coded is an error with a transport's code beside it.
type coded struct{ err, code error }

func (e coded) Error() string   { return e.err.Error() }
func (e coded) Unwrap() []error { return []error{e.err, e.code} }
