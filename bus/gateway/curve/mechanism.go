package curve

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync/atomic"
	"syscall"

	"github.com/go-zeromq/zmq4"
)

// Authorizer decides whether a client that proved it holds the secret key of
// client may connect; meta is the client's metadata (names as zmq4 spells
// them, e.g. "Socket-Type", "Identity"). A non-nil error refuses the client:
// its text (printable ASCII, at most 255 bytes) goes to the client in an
// ERROR command.
type Authorizer func(client Key, meta map[string]string) error

// Mechanism is the CURVE security mechanism for one connection: a
// zmq4.Security whose Handshake runs the client or the server side of
// CurveZMQ and, once it succeeded, leaves the connection's Session. Make a
// new Mechanism (NewClient, NewServer) for every connection: its Handshake
// runs once.
type Mechanism struct {
	server    bool
	keys      KeyPair
	serverKey Key // the client's configured server key
	authorize Authorizer
	rand      io.Reader

	state   atomic.Int32
	session *Session
}

// Mechanism states: Encrypt and Decrypt pass data through only while the
// handshake runs (zmq4 routes the handshake's commands through them).
const (
	stateNew int32 = iota
	stateHandshake
	stateDone
	stateFailed
)

// NewClient returns the client side of CURVE for one connection, with the
// client's long-term key pair and the server's long-term public key.
func NewClient(keys KeyPair, server Key) *Mechanism {
	return &Mechanism{keys: keys, serverKey: server, rand: rand.Reader}
}

// NewServer returns the server side of CURVE for one connection, with the
// server's long-term key pair. authorize, when not nil, is asked about every
// client that completes INITIATE; nil accepts every client (which still
// proves it holds the secret key of the public key it presents).
func NewServer(keys KeyPair, authorize Authorizer) *Mechanism {
	return &Mechanism{server: true, keys: keys, authorize: authorize, rand: rand.Reader}
}

// Type returns "CURVE", the mechanism's name in the ZMTP greeting.
func (*Mechanism) Type() zmq4.SecurityType { return zmq4.CurveSecurity }

// Session returns the connection's Session once Handshake has succeeded,
// nil before or after a failed handshake.
func (m *Mechanism) Session() *Session {
	if m.state.Load() != stateDone {
		return nil
	}
	return m.session
}

// Handshake runs the CURVE handshake on conn; zmq4.Open calls it after the
// greeting. server must match the side the Mechanism was made for. On
// success conn.Peer.Meta holds the peer's metadata and Session returns the
// connection's Session.
func (m *Mechanism) Handshake(conn *zmq4.Conn, server bool) error {
	if server != m.server {
		return fmt.Errorf("curve: a %s mechanism cannot run the %s side of a handshake", side(m.server), side(server))
	}
	if !m.state.CompareAndSwap(stateNew, stateHandshake) {
		return errors.New("curve: this Mechanism already ran a handshake; make one per connection")
	}
	var (
		s   *Session
		err error
	)
	if server {
		s, err = m.serverSide(conn)
	} else {
		s, err = m.clientSide(conn)
	}
	if err != nil {
		m.state.Store(stateFailed)
		return err
	}
	m.session = s
	m.state.Store(stateDone)
	return nil
}

func side(server bool) string {
	if server {
		return "server"
	}
	return "client"
}

func (m *Mechanism) serverSide(conn *zmq4.Conn) (*Session, error) {
	h := serverHandshake{keys: m.keys, rand: m.rand}
	defer h.forget()
	body, err := recvCmd(conn, zmq4.CmdHello, false)
	if err != nil {
		return nil, err
	}
	welcome, err := h.hello(body)
	if errors.Is(err, ErrServerKey) {
		// Tell the client why: its operator is looking for "wrong key".
		_ = conn.SendCmd(zmq4.CmdError, errorBody(reasonServerKey))
	}
	if err != nil {
		return nil, err
	}
	if err := conn.SendCmd(zmq4.CmdWelcome, welcome); err != nil {
		return nil, fmt.Errorf("curve: sending WELCOME: %w", err)
	}
	if body, err = recvCmd(conn, zmq4.CmdInitiate, false); err != nil {
		return nil, err
	}
	client, meta, nonce, err := h.initiate(body)
	if err != nil {
		return nil, err
	}
	if err := conn.Peer.Meta.UnmarshalZMTP(meta); err != nil {
		return nil, fmt.Errorf("curve: %w: INITIATE metadata: %w", ErrProtocol, err)
	}
	if m.authorize != nil {
		if err := m.authorize(client, maps.Clone(map[string]string(conn.Peer.Meta))); err != nil {
			_ = conn.SendCmd(zmq4.CmdError, errorBody(err.Error()))
			return nil, fmt.Errorf("curve: client %s refused: %w", client, err)
		}
	}
	own, err := conn.Meta.MarshalZMTP()
	if err != nil {
		return nil, fmt.Errorf("curve: metadata: %w", err)
	}
	if err := conn.SendCmd(zmq4.CmdReady, h.ready(own)); err != nil {
		return nil, fmt.Errorf("curve: sending READY: %w", err)
	}
	return newSession(client, &h.shared, true, nonce), nil
}

func (m *Mechanism) clientSide(conn *zmq4.Conn) (*Session, error) {
	h := clientHandshake{keys: m.keys, server: m.serverKey, rand: m.rand}
	defer h.forget()
	hello, err := h.hello()
	if err != nil {
		return nil, err
	}
	if err := conn.SendCmd(zmq4.CmdHello, hello); err != nil {
		return nil, fmt.Errorf("curve: sending HELLO: %w", err)
	}
	body, err := recvCmd(conn, zmq4.CmdWelcome, true)
	if err != nil {
		return nil, err
	}
	if err := h.welcome(body); err != nil {
		return nil, err
	}
	own, err := conn.Meta.MarshalZMTP()
	if err != nil {
		return nil, fmt.Errorf("curve: metadata: %w", err)
	}
	initiate, err := h.initiate(own)
	if err != nil {
		return nil, err
	}
	if err := conn.SendCmd(zmq4.CmdInitiate, initiate); err != nil {
		return nil, fmt.Errorf("curve: sending INITIATE: %w", err)
	}
	if body, err = recvCmd(conn, zmq4.CmdReady, false); err != nil {
		return nil, err
	}
	meta, nonce, err := h.ready(body)
	if err != nil {
		return nil, err
	}
	if err := conn.Peer.Meta.UnmarshalZMTP(meta); err != nil {
		return nil, fmt.Errorf("curve: %w: READY metadata: %w", ErrProtocol, err)
	}
	return newSession(m.serverKey, &h.shared, false, nonce), nil
}

// recvCmd reads the next command, which must be want. A client (the only
// side that may receive ERROR) gets ErrRefused with the server's reason;
// afterHello marks the wait for WELCOME, where a server that drops the
// connection or answers "wrong server key" means ErrServerKey.
func recvCmd(conn *zmq4.Conn, want string, afterHello bool) ([]byte, error) {
	cmd, err := conn.RecvCmd()
	if err != nil {
		if afterHello && closedByPeer(err) {
			return nil, fmt.Errorf("curve: %w: the server closed the connection in answer to HELLO, as a CURVE server does when HELLO was not sealed for its key: %w", ErrServerKey, err)
		}
		return nil, fmt.Errorf("curve: waiting for %s: %w", want, err)
	}
	switch {
	case cmd.Name == want:
		return cmd.Body, nil
	case cmd.Name == zmq4.CmdError && !conn.Server:
		reason, err := parseErrorBody(cmd.Body)
		if err != nil {
			return nil, err
		}
		if afterHello && reason == reasonServerKey {
			return nil, fmt.Errorf("curve: %w: %w: %s", ErrServerKey, ErrRefused, reason)
		}
		return nil, fmt.Errorf("curve: %w: %s", ErrRefused, reason)
	default:
		return nil, protoErr("got a %q command, want %s", cmd.Name, want)
	}
}

func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, zmq4.ErrClosedConn)
}

// errorBody encodes an ERROR body: a length byte and the reason, cut to 255
// bytes, with bytes outside printable ASCII replaced by '?'.
func errorBody(reason string) []byte {
	if len(reason) > 255 {
		reason = reason[:255]
	}
	b := make([]byte, 1, 1+len(reason))
	b[0] = byte(len(reason))
	for i := range len(reason) {
		c := reason[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b = append(b, c)
	}
	return b
}

// parseErrorBody returns the reason of an ERROR body, made printable.
func parseErrorBody(b []byte) (string, error) {
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return "", protoErr("malformed ERROR command")
	}
	return string(errorBody(string(b[1 : 1+int(b[0])]))[1:]), nil
}

// ErrNoMessages is what Encrypt and Decrypt return outside the handshake.
var ErrNoMessages = errors.New("curve: zmq4 cannot carry CURVE messages (it writes a frame's size before Encrypt sees it); seal and open frames with Mechanism.Session")

// Encrypt passes the handshake's commands through (zmq4 sends every command
// through Encrypt) and refuses anything else with ErrNoMessages: a MESSAGE
// is 33 bytes larger than its payload, and zmq4 has already written the
// frame header with the payload's size when it calls Encrypt.
func (m *Mechanism) Encrypt(w io.Writer, data []byte) (int, error) {
	if m.state.Load() != stateHandshake {
		return 0, ErrNoMessages
	}
	return w.Write(data)
}

// Decrypt passes the handshake's commands through, like Encrypt, and
// refuses anything else with ErrNoMessages.
func (m *Mechanism) Decrypt(w io.Writer, data []byte) (int, error) {
	if m.state.Load() != stateHandshake {
		return 0, ErrNoMessages
	}
	return w.Write(data)
}

var _ zmq4.Security = (*Mechanism)(nil)
