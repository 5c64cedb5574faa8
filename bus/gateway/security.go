package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/go-zeromq/zmq4"
)

// ErrAuth reports that the other side does not hold the same key. Errors a
// Client returns for a refused key match it with errors.Is.
var ErrAuth = errors.New("authentication failed")

// mechanism names the handshake in the ZMTP greeting. zmq4's PLAIN accepts
// any password and sends it in clear, so watchers use this challenge-response
// instead: both sides prove they hold the key without revealing it.
const mechanism zmq4.SecurityType = "BRINE-HMAC1"

const nonceSize = 32

// reasonWrongKey is what a watcher with the wrong key is told.
const reasonWrongKey = "wrong key"

// keySecurity is a zmq4.Security with an HMAC-SHA256 challenge-response:
//
//	client → HELLO    client nonce
//	server → WELCOME  server nonce
//	client → INITIATE HMAC(key, "client" nonces) + metadata
//	server → READY    HMAC(key, "server" nonces) + metadata  (or ERROR reason)
//
// The server checks the client's proof in constant time and refuses with a
// ZMTP ERROR whose reason the client reports; the client checks the server's
// proof, so a watcher cannot be fed events by an impostor. Frames after the
// handshake are not encrypted (like PLAIN and NULL).
type keySecurity struct {
	key []byte
}

func (keySecurity) Type() zmq4.SecurityType { return mechanism }

func (s keySecurity) proof(role string, cn, sn []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("brine watch " + role + "\x00"))
	m.Write(cn)
	m.Write(sn)
	return m.Sum(nil)
}

func (s keySecurity) Handshake(conn *zmq4.Conn, server bool) error {
	if server {
		return s.serverHandshake(conn)
	}
	return s.clientHandshake(conn)
}

func (s keySecurity) serverHandshake(conn *zmq4.Conn) error {
	hello, err := recvCmd(conn, zmq4.CmdHello)
	if err != nil {
		return err
	}
	if len(hello) != nonceSize {
		return fmt.Errorf("HELLO: nonce of %d bytes, want %d", len(hello), nonceSize)
	}
	sn := make([]byte, nonceSize)
	if _, err := rand.Read(sn); err != nil {
		return err
	}
	if err := conn.SendCmd(zmq4.CmdWelcome, sn); err != nil {
		return fmt.Errorf("send WELCOME: %w", err)
	}
	init, err := recvCmd(conn, zmq4.CmdInitiate)
	if err != nil {
		return err
	}
	if len(init) < sha256.Size || !hmac.Equal(init[:sha256.Size], s.proof("client", hello, sn)) {
		_ = conn.SendCmd(zmq4.CmdError, errorReason(reasonWrongKey))
		return fmt.Errorf("%w: %s", ErrAuth, reasonWrongKey)
	}
	if err := conn.Peer.Meta.UnmarshalZMTP(init[sha256.Size:]); err != nil {
		return fmt.Errorf("peer metadata: %w", err)
	}
	meta, err := conn.Meta.MarshalZMTP()
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if err := conn.SendCmd(zmq4.CmdReady, append(s.proof("server", hello, sn), meta...)); err != nil {
		return fmt.Errorf("send READY: %w", err)
	}
	return nil
}

func (s keySecurity) clientHandshake(conn *zmq4.Conn) error {
	cn := make([]byte, nonceSize)
	if _, err := rand.Read(cn); err != nil {
		return err
	}
	if err := conn.SendCmd(zmq4.CmdHello, cn); err != nil {
		return fmt.Errorf("send HELLO: %w", err)
	}
	sn, err := recvCmd(conn, zmq4.CmdWelcome)
	if err != nil {
		return err
	}
	meta, err := conn.Meta.MarshalZMTP()
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if err := conn.SendCmd(zmq4.CmdInitiate, append(s.proof("client", cn, sn), meta...)); err != nil {
		return fmt.Errorf("send INITIATE: %w", err)
	}
	ready, err := recvCmd(conn, zmq4.CmdReady)
	if err != nil {
		return err
	}
	if len(ready) < sha256.Size || !hmac.Equal(ready[:sha256.Size], s.proof("server", cn, sn)) {
		return fmt.Errorf("%w: the master did not prove it holds the key", ErrAuth)
	}
	if err := conn.Peer.Meta.UnmarshalZMTP(ready[sha256.Size:]); err != nil {
		return fmt.Errorf("peer metadata: %w", err)
	}
	return nil
}

// recvCmd reads the next command, which must be want; an ERROR from the peer
// becomes an error carrying its reason.
func recvCmd(conn *zmq4.Conn, want string) ([]byte, error) {
	cmd, err := conn.RecvCmd()
	if err != nil {
		return nil, fmt.Errorf("waiting for %s: %w", want, err)
	}
	switch cmd.Name {
	case want:
		return cmd.Body, nil
	case zmq4.CmdError:
		reason := parseReason(cmd.Body)
		if reason == reasonWrongKey {
			return nil, fmt.Errorf("%w: %s", ErrAuth, reason)
		}
		return nil, fmt.Errorf("refused by peer: %s", reason)
	default:
		return nil, fmt.Errorf("got %s command, want %s", cmd.Name, want)
	}
}

// errorReason encodes a ZMTP ERROR body: a length byte and the reason.
func errorReason(s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	return append([]byte{byte(len(s))}, s...)
}

func parseReason(b []byte) string {
	if len(b) > 0 && int(b[0]) == len(b)-1 {
		return string(b[1:])
	}
	return string(b)
}

func (keySecurity) Encrypt(w io.Writer, data []byte) (int, error) { return w.Write(data) }
func (keySecurity) Decrypt(w io.Writer, data []byte) (int, error) { return w.Write(data) }

var _ zmq4.Security = keySecurity{}
