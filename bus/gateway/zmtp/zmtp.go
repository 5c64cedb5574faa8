// Package zmtp is the wire format of ZMTP 3.0 and 3.1 (rfc.zeromq.org/spec/23
// and /37) that both of the gateway's ZeroMQ implementations speak: brine's
// CURVE gateway and saltzmq's NULL transport for Salt minions. It holds the
// greeting's layout and checks, frame headers, reading a message with
// bounds on its bytes and frames, encoding frames, messages and commands,
// and READY metadata. Security mechanisms, socket semantics and
// connections are its users' business: it imports neither of them, so
// that a fix to the framing (a bound, a check) is made once for both.
package zmtp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// Frame flags, the first byte of a frame header.
const (
	FlagMore    = 0x1
	FlagLong    = 0x2
	FlagCommand = 0x4
)

// FrameCost is what holding one frame costs beyond its payload: its slice
// header in the message's frame list. ReadMsg counts it against a
// message's bound, so that a message of many empty frames (which add
// nothing to a count of payload bytes: 32 MiB of them once held 1.4 GiB)
// is bounded too.
const FrameCost = 24

// Errors of a peer that breaks the wire format or a bound. Their wording
// is saltzmq's, whose exported errors they are.
var (
	// ErrNotZMTP: the peer's greeting is not ZMTP 3's.
	ErrNotZMTP = errors.New("not a ZMTP 3 peer")
	// ErrProtocol: the peer broke ZMTP framing or sent a command out of
	// place.
	ErrProtocol = errors.New("ZMTP protocol error")
	// ErrTooLarge: a message over the size or frame bounds.
	ErrTooLarge = errors.New("message too large")
	// ErrTooManyFrames: a message over the frame bound. It is an
	// ErrTooLarge, and reads as one: the error ReadMsg returns says "more
	// than N frames".
	ErrTooManyFrames = fmt.Errorf("%w", ErrTooLarge)
)

// RemoteHost is the IP address of a TCP peer, "" for other transports
// (ipc, unix sockets), which are not capped per address. An IPv6 peer is
// counted by its /64, the least a host is usually given: otherwise one
// host could use a fresh address per connection.
func RemoteHost(c net.Conn) string {
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	if a.IP.To4() == nil {
		return (&net.IPNet{IP: a.IP.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
	}
	return a.IP.String()
}

// HeaderSize is the length of a frame header whose first byte is flags:
// 2 (flags, a size byte), or 9 for a long frame (a 64-bit size).
func HeaderSize(flags byte) int {
	if flags&FlagLong != 0 {
		return 9
	}
	return 2
}

// ParseHeader reads the frame header at the start of b: its flags, the
// size of the body that follows, and the header's length n; n is 0 when b
// is shorter than the header.
func ParseHeader(b []byte) (flags byte, size uint64, n int) {
	if len(b) < 2 {
		return 0, 0, 0
	}
	flags, n = b[0], HeaderSize(b[0])
	if len(b) < n {
		return 0, 0, 0
	}
	if n == 9 {
		return flags, binary.BigEndian.Uint64(b[1:9]), n
	}
	return flags, uint64(b[1]), n
}

// ReadOptions bound one message and say how ReadMsg checks and opens its
// frames.
type ReadOptions struct {
	// Max bounds the message in bytes: each frame's header, FrameCost and
	// payload.
	Max int
	// MaxFrames bounds its frames.
	MaxFrames int
	// Slack is allowed beyond Max for the wrapping Open removes from a
	// frame (CURVE's seal): a frame is checked as read, with its
	// wrapping, and counts towards what follows as opened.
	Slack int
	// Strict refuses what ZMTP forbids and a lenient reader passes on:
	// reserved flag bits, a command with MORE or after a message frame.
	Strict bool
	// Reserve, when not nil, is called with the size of each non-empty
	// frame before its body is allocated, and may refuse it.
	Reserve func(size int) error
	// Open, when not nil, turns each frame as read (its header's flags and
	// its body) into the frame it carries: a CURVE MESSAGE into its
	// plaintext. Its flags decide MORE and COMMAND.
	Open func(flags byte, body []byte) (byte, []byte, error)
}

// ReadMsg reads one message (all its frames) or one command; cmd reports a
// command among its frames. A message over o's bounds is an error matching
// ErrTooLarge (ErrTooManyFrames for the frame count), checked on each
// frame's header before its body is allocated, so that a header announcing
// 2^62 bytes costs nothing. The stream cannot be resynchronised after any
// error: the caller drops the connection. r is buffered so that a frame
// header costs no system call.
func ReadMsg(r *bufio.Reader, o ReadOptions) (frames [][]byte, cmd bool, err error) {
	limit := o.Max + o.Slack
	total := 0 // headers, FrameCost and (opened) payloads of the frames so far
	for {
		if len(frames) == o.MaxFrames {
			return nil, false, fmt.Errorf("%w: more than %d frames", ErrTooManyFrames, o.MaxFrames)
		}
		flags, err := r.ReadByte()
		if err != nil {
			return nil, false, err
		}
		if o.Strict && flags&^(FlagMore|FlagLong|FlagCommand) != 0 {
			return nil, false, fmt.Errorf("%w: frame flags %#x", ErrProtocol, flags)
		}
		var size uint64
		if flags&FlagLong != 0 {
			var b [8]byte
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return nil, false, err
			}
			size = binary.BigEndian.Uint64(b[:])
		} else {
			b, err := r.ReadByte()
			if err != nil {
				return nil, false, err
			}
			size = uint64(b)
		}
		total += HeaderSize(flags)
		if o.Strict && flags&FlagCommand != 0 && (flags&FlagMore != 0 || len(frames) > 0) {
			return nil, false, fmt.Errorf("%w: command inside a message", ErrProtocol)
		}
		total += FrameCost
		if total > limit || size > uint64(limit-total) {
			return nil, false, fmt.Errorf("%w: over %d bytes", ErrTooLarge, o.Max)
		}
		if o.Reserve != nil && size > 0 {
			if err := o.Reserve(int(size)); err != nil {
				return nil, false, err
			}
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, false, err
		}
		if o.Open != nil {
			if flags, body, err = o.Open(flags, body); err != nil {
				return nil, false, err
			}
		}
		total += len(body)
		frames = append(frames, body)
		cmd = cmd || flags&FlagCommand != 0
		if flags&FlagMore == 0 {
			return frames, cmd, nil
		}
	}
}

// AppendFrame appends one frame with flags (FlagLong is added when f
// needs it) and body f.
func AppendFrame(b []byte, flags byte, f []byte) []byte {
	if len(f) > 255 {
		b = append(b, flags|FlagLong)
		b = binary.BigEndian.AppendUint64(b, uint64(len(f)))
	} else {
		b = append(b, flags, byte(len(f)))
	}
	return append(b, f...)
}

// EncodeMsg encodes frames as one ZMTP message.
func EncodeMsg(frames ...[]byte) []byte {
	n := 0
	for _, f := range frames {
		n += 9 + len(f)
	}
	b := make([]byte, 0, n)
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = FlagMore
		}
		b = AppendFrame(b, flags, f)
	}
	return b
}

// EncodeCommand encodes a command frame: name, then data.
func EncodeCommand(name string, data []byte) []byte {
	body := make([]byte, 0, 1+len(name)+len(data))
	body = append(body, byte(len(name)))
	body = append(body, name...)
	body = append(body, data...)
	return AppendFrame(nil, FlagCommand, body)
}

// ParseCommand splits a command frame's body into its name and data.
func ParseCommand(body []byte) (name string, data []byte, err error) {
	if len(body) == 0 || int(body[0]) > len(body)-1 {
		return "", nil, fmt.Errorf("%w: malformed command", ErrProtocol)
	}
	n := int(body[0])
	return string(body[1 : 1+n]), body[1+n:], nil
}

// Properties encodes metadata (a READY command's data) given as name,
// value pairs.
func Properties(kv ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, byte(len(kv[i])))
		b = append(b, kv[i]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(kv[i+1])))
		b = append(b, kv[i+1]...)
	}
	return b
}

// ParseProperties reads metadata (name length, name, value length, value
// …) into a map keyed by lower-cased name: names are case-insensitive.
func ParseProperties(b []byte) (map[string]string, error) {
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
