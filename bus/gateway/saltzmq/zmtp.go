package saltzmq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// The wire format, ZMTP 3 (rfc.zeromq.org/spec/23 and /37), is package
// zmtp's, shared with brine's gateway; this file is NULL's handshake.
const (
	// GreetingSize is the length of a ZMTP 3 greeting: signature (10),
	// version (2), mechanism (20), as-server (1), filler (31).
	GreetingSize = zmtp.GreetingSize

	// maxHandshakeFrame bounds the READY command a peer sends: libzmq's
	// holds its socket type and identity, a few dozen bytes.
	maxHandshakeFrame = 4 << 10
)

// Errors of a connection refused during its handshake.
var (
	// ErrNotZMTP: the peer's greeting is not ZMTP 3's.
	ErrNotZMTP = zmtp.ErrNotZMTP
	// ErrMechanism: the peer wants another security mechanism than NULL.
	ErrMechanism = errors.New("security mechanism is not NULL")
	// ErrSocketType: the peer's socket type is not one this end serves.
	ErrSocketType = errors.New("socket type not served here")
	// ErrProtocol: the peer broke ZMTP framing or sent a command out of
	// place.
	ErrProtocol = zmtp.ErrProtocol
	// ErrTooLarge: a message over the size or frame bounds.
	ErrTooLarge = zmtp.ErrTooLarge
)

// greeting is this end's ZMTP greeting: version 3.minor, NULL, as-server
// 0. With minor 0 it is byte for byte the greeting of zmq4 (which brine's
// gateway runs its own handshakes with), so that a server that wrote it to
// learn the peer's socket type (PeekSocketType) can still hand the
// connection to zmq4, which skips what was written. libzmq speaks the
// lower of the two versions: 3.0 means subscriptions come as messages,
// 3.1 as SUBSCRIBE commands; both are understood.
func greeting(minor byte) [GreetingSize]byte { return zmtp.Greeting(minor, "NULL") }

// checkGreeting validates a peer's greeting: ZMTP 3 or later, NULL.
func checkGreeting(g []byte) error {
	if err := zmtp.CheckGreeting(g); err != nil {
		return err
	}
	if m := zmtp.Mechanism(g); m != "NULL" {
		return fmt.Errorf("%w: %q", ErrMechanism, m)
	}
	return nil
}

// Accepted is a connection accepted by someone else — brine's gateway,
// which serves Salt minions on the ports of its own agents and watchers —
// to be served here. The gateway has read ahead the peer's greeting (and
// its READY, PeekSocketType) without consuming it and written the start of
// this end's greeting.
type Accepted struct {
	Conn net.Conn
	// Reader reads Conn and holds what was read ahead; nil: nothing was.
	Reader *bufio.Reader
	// Sent is how many bytes of this end's greeting are already written
	// (GreetingSize after PeekSocketType); they must be the bytes of the
	// NULL greeting this package writes.
	Sent int
	// Deadline bounds the handshake (zero: HandshakeTimeout from now).
	Deadline time.Time
	// Authenticated, when not nil, is called once the connection no longer
	// counts as unauthenticated: for a request connection when its handler
	// called Authenticate, for a subscriber once its handshake is done.
	// The gateway gives back its slot in its unauthenticated count there.
	Authenticated func()
}

// conn is a connection after its handshake.
type conn struct {
	raw    net.Conn
	br     *bufio.Reader
	remote string
	// peerType is the peer's Socket-Type, upper case (REQ, DEALER, SUB …).
	peerType string
}

// handshake runs the NULL handshake on a as a sock socket (the servers'
// "ROUTER" and "PUB", the clients' "REQ" and "SUB": NULL's handshake is
// the same both ways) with a peer whose socket type is one of peers, by
// deadline; it is
// abandoned when ctx ends. It writes the greeting (what a.Sent says is not
// yet written), reads the peer's, sends READY and reads the peer's READY.
func handshake(ctx context.Context, a Accepted, deadline time.Time, sock string, peers []string, minor byte) (*conn, error) {
	raw := a.Conn
	br := a.Reader
	if br == nil {
		br = bufio.NewReaderSize(raw, reqReadBuffer)
	}
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	g := greeting(minor)
	// ZMTP lets each side send its whole greeting at once; libzmq sends its
	// mechanism once it has seen our major version, which is in it.
	if a.Sent < GreetingSize {
		if _, err := raw.Write(g[max(a.Sent, 0):]); err != nil {
			return nil, fmt.Errorf("greeting: %w", err)
		}
	}
	var pg [GreetingSize]byte
	if _, err := io.ReadFull(br, pg[:]); err != nil {
		return nil, fmt.Errorf("greeting: %w", err)
	}
	if err := checkGreeting(pg[:]); err != nil {
		return nil, err
	}
	if _, err := raw.Write(zmtp.EncodeCommand("READY", zmtp.Properties("Socket-Type", sock))); err != nil {
		return nil, fmt.Errorf("ready: %w", err)
	}
	c := &conn{raw: raw, br: br, remote: raw.RemoteAddr().String()}
	frames, cmd, err := c.readMsg(maxHandshakeFrame, 1, nil)
	if err != nil {
		return nil, fmt.Errorf("ready: %w", err)
	}
	if !cmd {
		return nil, fmt.Errorf("%w: a message before READY", ErrProtocol)
	}
	typ, err := readyType(frames[0])
	if err != nil {
		return nil, err
	}
	if !slices.Contains(peers, typ) {
		return nil, fmt.Errorf("%w: %s (want %s)", ErrSocketType, typ, strings.Join(peers, " or "))
	}
	c.peerType = typ
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return c, nil
}

// readyType reads the Socket-Type of a READY command's body (an ERROR
// command is reported with its reason).
func readyType(body []byte) (string, error) {
	name, data, err := zmtp.ParseCommand(body)
	if err != nil {
		return "", err
	}
	switch name {
	case "READY":
	case "ERROR":
		reason := ""
		if len(data) > 0 && int(data[0]) <= len(data)-1 {
			reason = string(data[1 : 1+int(data[0])])
		}
		return "", fmt.Errorf("%w: the peer refused: %q", ErrProtocol, reason)
	default:
		return "", fmt.Errorf("%w: %q command instead of READY", ErrProtocol, name)
	}
	props, err := zmtp.ParseProperties(data)
	if err != nil {
		return "", err
	}
	typ, ok := props["socket-type"]
	if !ok {
		return "", fmt.Errorf("%w: READY without Socket-Type", ErrProtocol)
	}
	return strings.ToUpper(typ), nil
}

// PeekSocketType is for a server that has read ahead a peer's greeting
// into br without consuming it, found the NULL mechanism there, and must
// learn the peer's socket type before choosing whom to hand the connection
// to (brine's gateway: a REQ is a Salt minion, a DEALER its own key
// bootstrap). It writes the rest of the NULL greeting (sent bytes of it are
// written already), by deadline or until ctx ends, then reads ahead the
// peer's READY command, again without consuming anything, and returns its
// Socket-Type in upper case. br must have room for the greeting and the
// READY (4 KiB will do). Afterwards GreetingSize bytes of the greeting are
// written, and the connection's deadline is left set.
func PeekSocketType(ctx context.Context, raw net.Conn, br *bufio.Reader, sent int, deadline time.Time) (string, error) {
	if err := raw.SetDeadline(deadline); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	pg, err := br.Peek(GreetingSize)
	if err != nil {
		return "", fmt.Errorf("greeting: %w", err)
	}
	if err := checkGreeting(pg); err != nil {
		return "", err
	}
	if sent < GreetingSize {
		g := greeting(0)
		if _, err := raw.Write(g[max(sent, 0):]); err != nil {
			return "", fmt.Errorf("greeting: %w", err)
		}
	}
	hdr, err := br.Peek(GreetingSize + 2)
	if err != nil {
		return "", fmt.Errorf("ready: %w", err)
	}
	flags := hdr[GreetingSize]
	if flags&zmtp.FlagCommand == 0 || flags&zmtp.FlagMore != 0 {
		return "", fmt.Errorf("%w: a message before READY", ErrProtocol)
	}
	if hdr, err = br.Peek(GreetingSize + zmtp.HeaderSize(flags)); err != nil {
		return "", fmt.Errorf("ready: %w", err)
	}
	_, size, n := zmtp.ParseHeader(hdr[GreetingSize:])
	start := GreetingSize + n
	if room := min(maxHandshakeFrame, br.Size()-start); room < 0 || size > uint64(room) {
		return "", fmt.Errorf("%w: READY of %d bytes", ErrTooLarge, size)
	}
	all, err := br.Peek(start + int(size))
	if err != nil {
		return "", fmt.Errorf("ready: %w", err)
	}
	return readyType(all[start:])
}

// readMsg reads one message (all its frames) or one command. A message of
// more than maxFrames frames, or of more than max bytes counting each
// frame's header and zmtp.FrameCost, is an error, as is a command inside a
// message or a reserved flag: the stream cannot be resynchronised, so the
// connection is dropped. reserve, when not nil, is called with each
// frame's size before its body is allocated, and may refuse it.
func (c *conn) readMsg(max, maxFrames int, reserve func(int) error) (frames [][]byte, cmd bool, err error) {
	return zmtp.ReadMsg(c.br, zmtp.ReadOptions{Max: max, MaxFrames: maxFrames, Strict: true, Reserve: reserve})
}

// pong answers a PING command's data (TTL, then context) with PONG and
// the same context; nil for a malformed PING.
func pong(ping []byte) []byte {
	if len(ping) < 2 || len(ping) > 2+16 {
		return nil
	}
	return zmtp.EncodeCommand("PONG", ping[2:])
}
