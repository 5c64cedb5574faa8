package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"

	"github.com/brinehq/brine/bus"
)

// Reply statuses.
const (
	statusOK    = "ok"
	statusError = "error"
)

// Error codes in an error reply's body, so that a client can tell a refusal
// (fix the request) from a failure (try again).
const (
	CodeAuth     = "auth"      // wrong or missing mac
	CodeInvalid  = "invalid"   // malformed request, bad tag or data
	CodeReserved = "reserved"  // tag under a prefix only the master fires
	CodeTooLarge = "too_large" // event over the size limit
	CodeUnknown  = "unknown"   // no such method
	CodeFailed   = "failed"    // the method failed (bus down, handler error)
)

// ErrReservedTag is the refusal of a tag only the master may fire.
var ErrReservedTag = errors.New("reserved tag prefix")

type ctxKey struct{}

// RemoteAddr returns the address of the client whose request a handler is
// serving, for handlers that log or record who asked.
func RemoteAddr(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

// errorBody is the body of an error reply.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// serveRequests reads a requester's messages and hands each to the worker
// pool; replies go back on the same connection, in completion order, matched
// by correlation id.
func (s *Server) serveRequests(ctx context.Context, raw net.Conn) {
	pc := s.open(ctx, raw, null.Security(), zmq4.Router, s.cfg.ReplyQueue)
	if pc == nil {
		return
	}
	go pc.writeLoop()
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		pc.finish()
		s.forget(pc)
	}()
	// Messages up to twice the event limit are read, so that an oversized
	// event gets a readable refusal; anything larger cannot be a request
	// and costs the sender its connection.
	limit := 2*s.cfg.MaxEventSize + 64<<10
	for {
		frames, cmd, err := readMsg(pc.br, limit)
		if err != nil {
			if errors.Is(err, errFrameTooLarge) {
				s.log.Warn("requester dropped", "remote", pc.remote, "err", err)
			}
			return
		}
		if cmd {
			continue
		}
		select {
		case s.workers <- struct{}{}:
		case <-ctx.Done():
			return
		}
		inflight.Add(1)
		s.pool.Go(func() {
			defer inflight.Done()
			defer func() { <-s.workers }()
			reply := s.serveRequest(pc.remote, frames)
			if !pc.send(reply) {
				s.log.Warn("requester dropped", "remote", pc.remote, "reason", "not reading its replies")
				pc.close()
			}
		})
	}
}

// serveRequest checks and runs one request and returns the encoded reply.
func (s *Server) serveRequest(remote string, frames [][]byte) []byte {
	if len(frames) != 4 {
		var corr []byte
		if len(frames) > 0 {
			corr = frames[0]
		}
		return errorReply(corr, CodeInvalid, fmt.Sprintf("malformed request: %d frames, want 4 (id, method, body, mac)", len(frames)))
	}
	corr, method, body, mac := frames[0], string(frames[1]), frames[2], frames[3]
	if len(mac) == 0 {
		return errorReply(corr, CodeAuth, "authentication failed: request is not signed")
	}
	if !s.signer.verify(method, body, mac) {
		return errorReply(corr, CodeAuth, "authentication failed: wrong key")
	}
	h := s.handler(method)
	if h == nil {
		return errorReply(corr, CodeUnknown, fmt.Sprintf("unknown method %q", method))
	}
	ctx := context.WithValue(s.hctx, ctxKey{}, remote)
	out, err := s.call(ctx, method, h, body)
	if err != nil {
		return errorReply(corr, errorCode(err), err.Error())
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorReply(corr, CodeFailed, fmt.Sprintf("%s: encoding the result: %v", method, err))
	}
	return encodeMsg(corr, []byte(statusOK), b)
}

// call runs a handler; a panic in one (a registered method's bug) becomes an
// error reply instead of taking the master down, as net/http does.
func (s *Server) call(ctx context.Context, method string, h Handler, body json.RawMessage) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("request handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("%s: internal error", method)
		}
	}()
	return h(ctx, body)
}

func errorReply(corr []byte, code, msg string) []byte {
	b, _ := json.Marshal(errorBody{Error: msg, Code: code})
	return encodeMsg(corr, []byte(statusError), b)
}

func errorCode(err error) string {
	switch {
	case errors.Is(err, ErrReservedTag):
		return CodeReserved
	case errors.Is(err, bus.ErrTooLarge):
		return CodeTooLarge
	case errors.Is(err, bus.ErrInvalidTag), errors.Is(err, bus.ErrInvalidData), errors.Is(err, errInvalidRequest):
		return CodeInvalid
	default:
		return CodeFailed
	}
}

var errInvalidRequest = errors.New("invalid request")

// PublishReply is the body of a successful "publish".
type PublishReply struct {
	ID string `json:"id"`
}

// handlePublish validates a remote event, refuses reserved tags and publishes
// it durably; the reply is sent only after the bus has stored it. The body is
// a whole envelope (with an id, which makes re-sending it idempotent) or just
// {"tag", "data"}, from which the event is built here.
func (s *Server) handlePublish(ctx context.Context, body json.RawMessage) (any, error) {
	if len(body) > s.cfg.MaxEventSize {
		return nil, fmt.Errorf("%w: request of %d bytes, the limit is %d", bus.ErrTooLarge, len(body), s.cfg.MaxEventSize)
	}
	ev, err := bus.ParseEnvelope(body)
	if err != nil {
		return nil, fmt.Errorf("%w: publish body: %v", errInvalidRequest, err)
	}
	if ev.ID == "" {
		var data map[string]any
		if len(ev.Data) > 0 && !bytes.Equal(ev.Data, []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(ev.Data))
			dec.UseNumber()
			if err := dec.Decode(&data); err != nil {
				return nil, fmt.Errorf("%w: data must be a JSON object: %v", bus.ErrInvalidData, err)
			}
		}
		ev, err = bus.NewEvent(ev.Tag, data, bus.Origin{Source: "zmq://" + RemoteAddr(ctx)})
		if err != nil {
			return nil, err
		}
	} else if ev.Source == "" {
		ev.Source = "zmq://" + RemoteAddr(ctx)
	}
	if bus.HasReservedPrefix(ev.Tag) {
		return nil, fmt.Errorf("%w: %q: only the master publishes under %q", ErrReservedTag, ev.Tag, reservedPrefixOf(ev.Tag))
	}
	if _, err := ev.Validate(s.cfg.MaxEventSize); err != nil {
		return nil, err
	}
	if err := s.bus.Publish(ctx, ev); err != nil {
		return nil, fmt.Errorf("publish %q: %w", ev.Tag, err)
	}
	return PublishReply{ID: ev.ID}, nil
}

// reservedPrefixOf names the reserved prefix tag falls under, for the refusal.
func reservedPrefixOf(tag string) string {
	for _, p := range bus.ReservedPrefixes {
		if strings.HasPrefix(tag, p) {
			return p
		}
	}
	return ""
}

func handlePing(context.Context, json.RawMessage) (any, error) {
	return map[string]string{"time": time.Now().UTC().Format(bus.TimeLayout)}, nil
}
