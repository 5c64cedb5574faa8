package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// Bounds of an agent's connection: an idle agent costs the master little,
// and one that stops reading is cut off before it costs much.
const (
	agentQueue      = 64
	agentQueueBytes = 4 << 20
	// maxAgentMsgExtra is what an agent's request may carry beyond an event.
	maxAgentMsgExtra = 64 << 10
	// minAgentRequest is the least an agent's request may carry, whatever
	// max_event_size says: a chunk of cp.push (256 KiB, a third more as
	// base64 in JSON) is not an event, and a small max_event_size must
	// not cut off an agent that pushes a file.
	minAgentRequest = 512 << 10
	// agentReadBuffer is an agent connection's read buffer: its requests
	// are small and rare, and an idle agent should cost the master little.
	agentReadBuffer = 2 << 10
)

// Peer is an agent's connection: authenticated by CURVE with the public key
// Key, which is all the gateway knows of it; the agent handlers decide what
// the key may do.
type Peer struct {
	pc  *peerConn
	key curve.Key
}

// Key is the public key the agent proved it holds.
func (p *Peer) Key() curve.Key { return p.key }

// Remote is the agent's network address.
func (p *Peer) Remote() string { return p.pc.remote }

// Push sends the agent a message it did not ask for (method and a JSON
// body); false when its queue is full or the connection is gone.
func (p *Peer) Push(method string, body any) bool {
	b, err := json.Marshal(body)
	if err != nil {
		return false
	}
	return p.pc.send(zmtp.EncodeMsg(nil, []byte(method), b))
}

// Close cuts the agent off at once.
func (p *Peer) Close() { p.pc.close() }

// AgentHandler serves one method for agents: p is the connection (its key
// authenticated), body the request's JSON body.
type AgentHandler func(ctx context.Context, p *Peer, body json.RawMessage) (any, error)

// HandleAgent registers h for agents' requests of method. Agents reach
// these handlers only, never the master's methods (Handle), and operators
// never reach these. It panics on a duplicate, as Handle does.
func (s *Server) HandleAgent(method string, h AgentHandler) {
	if method == "" || h == nil {
		panic("gateway: HandleAgent needs a method and a handler")
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if _, dup := s.agentH[method]; dup {
		panic("gateway: agent method " + method + " registered twice")
	}
	s.agentH[method] = h
}

// OnAgentGone sets fn to be called when an agent's connection ends.
func (s *Server) OnAgentGone(fn func(*Peer)) {
	s.hmu.Lock()
	s.gone = fn
	s.hmu.Unlock()
}

// serveAgent serves an agent's connection until it ends.
func (s *Server) serveAgent(ctx context.Context, pc *peerConn) {
	pc.shrinkReader(agentReadBuffer)
	pc.start(agentQueue, agentQueueBytes)
	p := &Peer{pc: pc, key: pc.sess.Peer()}
	s.log.Debug("agent connection", "remote", pc.remote, "key", p.key.String())
	// Any fresh key completes CURVE: a connection is an agent's only once
	// it asks something (its hello). Until then it has HandshakeTimeout,
	// as a handshake does, so that strangers cannot hold connections by
	// saying nothing.
	pc.idle, pc.expires, pc.firstOnly = s.cfg.HandshakeTimeout, time.Now().Add(s.cfg.HandshakeTimeout), true
	var once sync.Once
	defer once.Do(func() {
		s.hmu.RLock()
		gone := s.gone
		s.hmu.RUnlock()
		if gone != nil {
			gone(p)
		}
	})
	s.serveLoop(ctx, pc, max(s.cfg.MaxEventSize, minAgentRequest)+maxAgentMsgExtra, func(_ string, frames [][]byte) []byte {
		return s.serveAgentRequest(p, frames)
	})
}

// serveAgentRequest runs one agent request and returns the encoded reply.
func (s *Server) serveAgentRequest(p *Peer, frames [][]byte) []byte {
	if len(frames) < 3 || len(frames) > 4 {
		var corr []byte
		if len(frames) > 0 {
			corr = frames[0]
		}
		return errorReply(corr, CodeInvalid, fmt.Sprintf("malformed request: %d frames, want 3 or 4 (id, method, body[, mac])", len(frames)))
	}
	corr, method, body := frames[0], string(frames[1]), frames[2]
	s.hmu.RLock()
	h := s.agentH[method]
	s.hmu.RUnlock()
	if h == nil {
		return errorReply(corr, CodeUnknown, fmt.Sprintf("unknown method %q for agents", method))
	}
	return s.answer(corr, p.pc.remote, method, func(ctx context.Context, body json.RawMessage) (any, error) {
		return h(ctx, p, body)
	}, body)
}
