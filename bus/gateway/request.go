package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/bus/gateway/zmtp"
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

// serveRequests runs a requester's handshake — CURVE, or NULL for a
// client that only asks for the master's key — and serves it as an
// operator, an agent or a key bootstrap, by the key it proved it holds.
func (s *Server) serveRequests(ctx context.Context, raw net.Conn, slot *unauthSlot) {
	br := bufio.NewReaderSize(raw, readBuffer)
	mech, err := peekMechanism(ctx, raw, br, slot.accepted.Add(s.cfg.HandshakeTimeout))
	if err != nil {
		s.log.Log(ctx, closedLevel(err), "connection refused", "remote", raw.RemoteAddr().String(), "err", err)
		raw.Close()
		return
	}
	var sec zmq4.Security
	sent := zmtp.PrefixSize
	switch mech {
	case string(zmq4.CurveSecurity):
		sec = curve.NewServer(s.cfg.Keys, nil)
	case string(zmq4.NullSecurity):
		if s.cfg.SaltRequests != nil {
			// A Salt minion's REQ, or brine's own key bootstrap (a
			// DEALER): the socket type in the peer's READY tells.
			deadline := slot.accepted.Add(s.cfg.HandshakeTimeout)
			typ, err := saltzmq.PeekSocketType(ctx, raw, br, sent, deadline)
			if err != nil {
				s.log.Log(ctx, closedLevel(err), "connection refused", "remote", raw.RemoteAddr().String(), "err", err)
				raw.Close()
				return
			}
			if typ == "REQ" {
				s.cfg.SaltRequests.ServeConn(ctx, saltzmq.Accepted{Conn: raw, Reader: br, Sent: saltzmq.GreetingSize,
					Deadline: deadline, Authenticated: slot.release})
				return
			}
			sent = saltzmq.GreetingSize
		}
		sec = null.Security()
	default:
		s.log.Warn("connection refused", "remote", raw.RemoteAddr().String(),
			"err", fmt.Sprintf("security mechanism %q: this master speaks CURVE (and NULL only to hand out its public key)", mech))
		raw.Close()
		return
	}
	pc := s.open(ctx, raw, br, sent, sec, zmq4.Router, slot)
	if pc == nil {
		return
	}
	switch {
	case pc.sess == nil:
		// Unauthenticated, and so still counted in slot, until it ends:
		// a key bootstrap takes one request, so the connection is given
		// little time.
		pc.start(1, 64<<10)
		pc.idle = s.cfg.BootstrapIdle
		pc.expires = slot.accepted.Add(s.cfg.BootstrapLifetime)
		s.serveLoop(ctx, pc, maxBootstrapMsg, s.serveBootstrap)
	case pc.sess.Peer() == s.operator:
		pc.start(s.cfg.ReplyQueue, s.cfg.QueueBytes)
		// Messages up to twice the event limit are read, so that an
		// oversized event gets a readable refusal; anything larger
		// cannot be a request and costs the sender its connection.
		s.serveLoop(ctx, pc, 2*s.cfg.MaxEventSize+64<<10, s.serveRequest)
	default:
		s.serveAgent(ctx, pc)
	}
}

// peekMechanism sends the start of the greeting (zmtp.PrefixSize bytes of
// zmq4's NULL greeting: libzmq sends its mechanism only after seeing the
// other side's major version) and reads the peer's whole greeting (without
// consuming it) for its security mechanism, by deadline; it is abandoned
// when ctx ends, so that a shutdown does not wait for a peer that sends
// nothing.
func peekMechanism(ctx context.Context, raw net.Conn, br *bufio.Reader, deadline time.Time) (string, error) {
	if err := raw.SetDeadline(deadline); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	prefix := zmtp.Greeting(0, "NULL")
	if _, err := raw.Write(prefix[:zmtp.PrefixSize]); err != nil {
		return "", fmt.Errorf("greeting: %w", err)
	}
	g, err := br.Peek(zmtp.GreetingSize)
	if err != nil {
		return "", fmt.Errorf("greeting: %w", err)
	}
	if !zmtp.HasSignature(g) {
		return "", errors.New("greeting: not ZMTP")
	}
	return zmtp.Mechanism(g), nil
}

// maxBootstrapMsg bounds a request on an unencrypted connection.
const maxBootstrapMsg = 4 << 10

// serveLoop reads a connection's requests and hands each to the worker
// pool; serve turns one request's frames into its encoded reply, sent back
// on the same connection, in completion order, matched by correlation id.
func (s *Server) serveLoop(ctx context.Context, pc *peerConn, limit int, serve func(remote string, frames [][]byte) []byte) {
	var inflight sync.WaitGroup
	defer func() {
		inflight.Wait()
		pc.finish()
		s.forget(pc)
	}()
	for {
		if !s.readDeadline(ctx, pc) {
			return
		}
		frames, cmd, err := pc.readMsg(limit)
		if err != nil {
			switch {
			case overLimit(err) || errors.Is(err, curve.ErrProtocol):
				s.log.Warn("requester dropped", "remote", pc.remote, "err", err)
			case pc.idle > 0 && isTimeout(err):
				reason := fmt.Sprintf("no request for %s", pc.idle)
				if !time.Now().Before(pc.expires) {
					reason = "its lifetime is over"
				}
				s.log.Debug("unauthenticated connection closed", "remote", pc.remote, "reason", reason)
			}
			return
		}
		if pc.firstOnly && !cmd {
			// The first request lifts the bound (an agent may then be
			// silent for hours; TCP keepalive finds a dead one).
			pc.firstOnly, pc.idle = false, 0
			if err := pc.raw.SetReadDeadline(time.Time{}); err != nil || ctx.Err() != nil {
				return
			}
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
			reply := serve(pc.remote, frames)
			if !pc.send(reply) {
				s.log.Warn("requester dropped", "remote", pc.remote, "reason", "not reading its replies")
				pc.close()
			}
		})
	}
}

// readDeadline sets the read deadline of a connection with an idle bound
// (pc.idle): pc.idle from now, and never past pc.expires. It reports false
// when the server is stopping: Run sets every connection's read deadline to
// now once ctx ended, which this must not push back.
func (s *Server) readDeadline(ctx context.Context, pc *peerConn) bool {
	if pc.idle > 0 {
		d := time.Now().Add(pc.idle)
		if pc.expires.Before(d) {
			d = pc.expires
		}
		if err := pc.raw.SetReadDeadline(d); err != nil {
			return false
		}
	}
	// Run sets the deadlines only after ctx ended: either it did so after
	// the line above, or ctx has ended by now.
	return ctx.Err() == nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// MethodMasterKey is the one request an unencrypted connection may make:
// the master's public key, which an agent then pins.
const MethodMasterKey = "master.pubkey"

// MasterKeyReply is the answer to MethodMasterKey.
type MasterKeyReply struct {
	// Key is the Z85 text of the master's long-term public key.
	Key string `json:"key"`
	// Fingerprint is its SHA-256 (what master_finger pins).
	Fingerprint string `json:"fingerprint"`
}

// serveBootstrap answers an unencrypted connection: the master's public
// key, and a refusal for anything else.
func (s *Server) serveBootstrap(_ string, frames [][]byte) []byte {
	var corr []byte
	if len(frames) > 0 {
		corr = frames[0]
	}
	if len(frames) < 2 || string(frames[1]) != MethodMasterKey {
		return errorReply(corr, CodeAuth, "authentication failed: this master requires encryption (CURVE); "+
			"connect with a brine of the same version")
	}
	b, _ := json.Marshal(MasterKeyReply{Key: s.cfg.Keys.Public.String(), Fingerprint: curve.Fingerprint(s.cfg.Keys.Public)})
	return zmtp.EncodeMsg(corr, []byte(statusOK), b)
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
	return s.answer(corr, remote, method, h, body)
}

// answer runs h on a request's body and returns the encoded reply, an
// error reply carrying the handler's error.
func (s *Server) answer(corr []byte, remote, method string, h Handler, body json.RawMessage) []byte {
	ctx := context.WithValue(s.hctx, ctxKey{}, remote)
	out, err := s.call(ctx, method, h, body)
	if err != nil {
		return errorReply(corr, errorCode(err), err.Error())
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorReply(corr, CodeFailed, fmt.Sprintf("%s: encoding the result: %v", method, err))
	}
	return zmtp.EncodeMsg(corr, []byte(statusOK), b)
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
	return zmtp.EncodeMsg(corr, []byte(statusError), b)
}

func errorCode(err error) string {
	switch {
	case errors.Is(err, ErrReservedTag):
		return CodeReserved
	case errors.Is(err, bus.ErrTooLarge):
		return CodeTooLarge
	case errors.Is(err, ErrAuth):
		return CodeAuth
	case errors.Is(err, bus.ErrInvalidTag), errors.Is(err, bus.ErrInvalidData), errors.Is(err, ErrInvalidRequest):
		return CodeInvalid
	default:
		return CodeFailed
	}
}

// ErrInvalidRequest marks a malformed request (its reply's code is
// CodeInvalid); handlers wrap it.
var ErrInvalidRequest = errors.New("invalid request")

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
		return nil, fmt.Errorf("%w: publish body: %v", ErrInvalidRequest, err)
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

// closedLevel is the level of a refusal while peeking at a connection's
// greeting: a peer that closed before it said anything (a port probe, a
// load balancer's health check, a salt-minion checking the port before it
// connects) is not worth more than a debug line; anything else is.
func closedLevel(err error) slog.Level {
	if errors.Is(err, io.EOF) {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
