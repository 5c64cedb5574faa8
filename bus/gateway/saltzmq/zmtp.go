package saltzmq

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"
)

// ZMTP 3 framing (rfc.zeromq.org/spec/23 and /37).
const (
	flagMore    = 0x1
	flagLong    = 0x2
	flagCommand = 0x4

	// GreetingSize is the length of a ZMTP 3 greeting: signature (10),
	// version (2), mechanism (20), as-server (1), filler (31).
	GreetingSize = 64

	// maxHandshakeFrame bounds the READY command a peer sends: libzmq's
	// holds its socket type and identity, a few dozen bytes.
	maxHandshakeFrame = 4 << 10
)

// Errors of a connection refused during its handshake.
var (
	// ErrNotZMTP: the peer's greeting is not ZMTP 3's.
	ErrNotZMTP = errors.New("not a ZMTP 3 peer")
	// ErrMechanism: the peer wants another security mechanism than NULL.
	ErrMechanism = errors.New("security mechanism is not NULL")
	// ErrSocketType: the peer's socket type is not one this end serves.
	ErrSocketType = errors.New("socket type not served here")
	// ErrProtocol: the peer broke ZMTP framing or sent a command out of
	// place.
	ErrProtocol = errors.New("ZMTP protocol error")
	// ErrTooLarge: a message over the size or frame bounds.
	ErrTooLarge = errors.New("message too large")
)

// greeting is this end's ZMTP greeting: version 3.minor, NULL, as-server
// 0. With minor 0 it is byte for byte the greeting of zmq4 (which brine's
// gateway runs its own handshakes with), so that a server that wrote it to
// learn the peer's socket type (PeekSocketType) can still hand the
// connection to zmq4, which skips what was written. libzmq speaks the
// lower of the two versions: 3.0 means subscriptions come as messages,
// 3.1 as SUBSCRIBE commands; both are understood.
func greeting(minor byte) [GreetingSize]byte {
	var g [GreetingSize]byte
	g[0] = 0xFF
	g[9] = 0x7F
	g[10] = 3
	g[11] = minor
	copy(g[12:32], "NULL")
	return g
}

// checkGreeting validates a peer's greeting: ZMTP 3 or later, NULL.
func checkGreeting(g []byte) error {
	if len(g) < GreetingSize || g[0] != 0xFF || g[9] != 0x7F {
		return fmt.Errorf("%w: bad signature", ErrNotZMTP)
	}
	if g[10] < 3 {
		return fmt.Errorf("%w: version %d.%d", ErrNotZMTP, g[10], g[11])
	}
	if m := mechanismOf(g); m != "NULL" {
		return fmt.Errorf("%w: %q", ErrMechanism, m)
	}
	return nil
}

// mechanismOf reads the mechanism name of a ZMTP 3 greeting.
func mechanismOf(g []byte) string {
	m := g[12:32]
	if i := bytes.IndexByte(m, 0); i >= 0 {
		m = m[:i]
	}
	return string(m)
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
	if _, err := raw.Write(encodeCommand("READY", properties("Socket-Type", sock))); err != nil {
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
	name, data, err := parseCommand(body)
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
	props, err := parseProperties(data)
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
	if flags&flagCommand == 0 || flags&flagMore != 0 {
		return "", fmt.Errorf("%w: a message before READY", ErrProtocol)
	}
	start, size := GreetingSize+2, uint64(hdr[GreetingSize+1])
	if flags&flagLong != 0 {
		if hdr, err = br.Peek(GreetingSize + 9); err != nil {
			return "", fmt.Errorf("ready: %w", err)
		}
		start, size = GreetingSize+9, binary.BigEndian.Uint64(hdr[GreetingSize+1:])
	}
	if room := min(maxHandshakeFrame, br.Size()-start); room < 0 || size > uint64(room) {
		return "", fmt.Errorf("%w: READY of %d bytes", ErrTooLarge, size)
	}
	all, err := br.Peek(start + int(size))
	if err != nil {
		return "", fmt.Errorf("ready: %w", err)
	}
	return readyType(all[start:])
}

// frameCost is what holding one frame costs beyond its payload (its slice
// header), counted so that a message of many empty frames is bounded too.
const frameCost = 24

// readMsg reads one message (all its frames) or one command. A message of
// more than maxFrames frames, or of more than max bytes counting each
// frame's header and frameCost, is an error, as is a command inside a
// message: the stream cannot be resynchronised, so the connection is
// dropped. reserve, when not nil, is called with each frame's size before
// its body is allocated, and may refuse it.
func (c *conn) readMsg(max, maxFrames int, reserve func(int) error) (frames [][]byte, cmd bool, err error) {
	r := c.br
	total := 0
	for {
		if len(frames) == maxFrames {
			return nil, false, fmt.Errorf("%w: more than %d frames", ErrTooLarge, maxFrames)
		}
		flags, err := r.ReadByte()
		if err != nil {
			return nil, false, err
		}
		if flags&^(flagMore|flagLong|flagCommand) != 0 {
			return nil, false, fmt.Errorf("%w: frame flags %#x", ErrProtocol, flags)
		}
		var size uint64
		if flags&flagLong != 0 {
			var b [8]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return nil, false, err
			}
			size = binary.BigEndian.Uint64(b[:])
			total += 9
		} else {
			b, err := r.ReadByte()
			if err != nil {
				return nil, false, err
			}
			size = uint64(b)
			total += 2
		}
		isCmd := flags&flagCommand != 0
		if isCmd && (flags&flagMore != 0 || len(frames) > 0) {
			return nil, false, fmt.Errorf("%w: command inside a message", ErrProtocol)
		}
		total += frameCost
		if total > max || size > uint64(max-total) {
			return nil, false, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
		}
		if reserve != nil && size > 0 {
			if err := reserve(int(size)); err != nil {
				return nil, false, err
			}
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, false, err
		}
		total += int(size)
		frames = append(frames, body)
		if isCmd {
			return frames, true, nil
		}
		if flags&flagMore == 0 {
			return frames, false, nil
		}
	}
}

// parseCommand splits a command frame into its name and data.
func parseCommand(body []byte) (name string, data []byte, err error) {
	if len(body) == 0 || int(body[0]) > len(body)-1 {
		return "", nil, fmt.Errorf("%w: malformed command", ErrProtocol)
	}
	n := int(body[0])
	return string(body[1 : 1+n]), body[1+n:], nil
}

// parseProperties reads ZMTP metadata (name length, name, value length,
// value …) into a map keyed by lower-cased name: names are case-insensitive.
func parseProperties(b []byte) (map[string]string, error) {
	props := make(map[string]string)
	for len(b) > 0 {
		n := int(b[0])
		b = b[1:]
		if len(b) < n+4 {
			return nil, fmt.Errorf("%w: malformed metadata", ErrProtocol)
		}
		name := strings.ToLower(string(b[:n]))
		vl := binary.BigEndian.Uint32(b[n:])
		b = b[n+4:]
		if uint64(len(b)) < uint64(vl) {
			return nil, fmt.Errorf("%w: malformed metadata", ErrProtocol)
		}
		props[name] = string(b[:vl])
		b = b[vl:]
	}
	return props, nil
}

// properties encodes metadata given as name, value pairs.
func properties(kv ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, byte(len(kv[i])))
		b = append(b, kv[i]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(kv[i+1])))
		b = append(b, kv[i+1]...)
	}
	return b
}

// encodeCommand encodes a command frame.
func encodeCommand(name string, data []byte) []byte {
	body := make([]byte, 0, 1+len(name)+len(data))
	body = append(body, byte(len(name)))
	body = append(body, name...)
	body = append(body, data...)
	return appendFrame(nil, flagCommand, body)
}

func appendFrame(b []byte, flags byte, f []byte) []byte {
	if len(f) > 255 {
		b = append(b, flags|flagLong)
		b = binary.BigEndian.AppendUint64(b, uint64(len(f)))
	} else {
		b = append(b, flags, byte(len(f)))
	}
	return append(b, f...)
}

// encodeMsg encodes frames as one ZMTP message.
func encodeMsg(frames ...[]byte) []byte {
	n := 0
	for _, f := range frames {
		n += 9 + len(f)
	}
	b := make([]byte, 0, n)
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		b = appendFrame(b, flags, f)
	}
	return b
}

// pong answers a PING command's data (TTL, then context) with PONG and
// the same context; nil for a malformed PING.
func pong(ping []byte) []byte {
	if len(ping) < 2 || len(ping) > 2+16 {
		return nil
	}
	return encodeCommand("PONG", ping[2:])
}

// remoteHost is the IP address of a TCP peer, "" for other transports
// (unix sockets), which are not capped per address. An IPv6 peer is
// counted by its /64, the least a host is usually given: otherwise one
// host could use a fresh address per connection.
func remoteHost(raw net.Conn) string {
	a, ok := raw.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	if a.IP.To4() == nil {
		return (&net.IPNet{IP: a.IP.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
	}
	return a.IP.String()
}
