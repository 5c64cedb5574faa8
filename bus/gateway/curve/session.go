package curve

import (
	"encoding/binary"
	"math"
	"slices"

	"golang.org/x/crypto/nacl/box"
)

// ZMTP frame flags, as in a frame header and as OpenFrame reports them.
const (
	FlagMore    = 0x01
	FlagLong    = 0x02
	FlagCommand = 0x04
)

// Overhead is how much larger a MESSAGE frame's body is than its payload:
// the command name "\x07MESSAGE" (8), the short nonce (8), the box's
// authenticator (16) and the sealed flags byte (1).
const Overhead = 8 + 8 + box.Overhead + 1

const messageName = "\x07MESSAGE"

// Flags sealed inside a MESSAGE box (libzmq's msg_t flags).
const (
	sealedMore    = 0x01
	sealedCommand = 0x02
)

// maxScratch bounds the plaintext buffer a Session keeps between frames.
const maxScratch = 64 << 10

// Session seals and opens the MESSAGE frames of one connection after its
// handshake, with the key shared by the two transient keys (computed once).
//
// Sealing (AppendFrame) and opening (OpenFrame) keep separate state: one
// goroutine may seal while another opens. Each direction must be driven by
// one goroutine at a time, in wire order: the peer refuses a frame whose
// nonce is not the one after the previous frame's, so frames must be sealed
// in the order they are written (seal in the writer, not where a message is
// produced), and every frame read must be opened, in the order read.
type Session struct {
	peer   Key
	shared [32]byte
	server bool

	// sending side
	sendNonce uint64 // the next nonce to use
	scratch   []byte

	// receiving side
	recvNonce uint64 // the last nonce accepted
	recvErr   error
}

func newSession(peer Key, shared *[32]byte, server bool, peerNonce uint64) *Session {
	s := &Session{peer: peer, shared: *shared, server: server, recvNonce: peerNonce}
	if server {
		s.sendNonce = 2 // READY was 1
	} else {
		s.sendNonce = initiateNonce + 1
	}
	return s
}

// Peer returns the peer's long-term public key: the client's key on the
// server side, the server's key (as configured) on the client side.
func (s *Session) Peer() Key { return s.peer }

// AppendFrame appends to dst one complete wire frame carrying payload: the
// ZMTP frame header, then the MESSAGE command body ("\x07MESSAGE", the 8-byte
// short nonce, the box of a flags byte and payload). more marks a frame that
// is followed by more frames of the same message; as libzmq does, it is
// sealed in the box, and the header carries no MORE or COMMAND flag (only
// LONG when the body is over 255 bytes). payload may overlap dst.
func (s *Session) AppendFrame(dst []byte, more bool, payload []byte) []byte {
	var flags byte
	if more {
		flags = sealedMore
	}
	pt := append(append(s.scratch[:0], flags), payload...)

	n := s.sendNonce
	if n == math.MaxUint64 {
		// 2^64 frames on one connection: centuries away at any rate.
		panic("curve: short nonces exhausted on this connection")
	}
	s.sendNonce++
	prefix := clientPrefix
	if s.server {
		prefix = serverPrefix
	}

	size := Overhead + len(payload)
	dst = slices.Grow(dst, 9+size)
	if size > 255 {
		dst = append(dst, FlagLong)
		dst = binary.BigEndian.AppendUint64(dst, uint64(size))
	} else {
		dst = append(dst, 0, byte(size))
	}
	dst = append(dst, messageName...)
	dst = binary.BigEndian.AppendUint64(dst, n)
	dst = box.SealAfterPrecomputation(dst, pt, shortNonce(prefix, n), &s.shared)

	if cap(pt) <= maxScratch {
		s.scratch = pt[:0]
	} else {
		s.scratch = nil
	}
	return dst
}

// OpenFrame opens a MESSAGE frame the caller read: flags is the frame
// header's flags byte, body the frame's whole body (the header already
// parsed). It returns the frame's effective flags, FlagMore and FlagCommand
// as sealed by the sender (never FlagLong), and the payload, a new slice.
//
// A body that is not a well-formed MESSAGE, a box that does not open, a
// nonce that is not the one after the previous frame's (a replayed,
// reordered or dropped frame), or a MORE or COMMAND flag in the header that
// the sealed flags do not confirm is an error matching ErrProtocol; the
// connection cannot recover, and every later call fails too.
func (s *Session) OpenFrame(flags byte, body []byte) (byte, []byte, error) {
	if s.recvErr != nil {
		return 0, nil, s.recvErr
	}
	f, payload, err := s.open(flags, body)
	if err != nil {
		s.recvErr = err
		return 0, nil, err
	}
	return f, payload, nil
}

func (s *Session) open(flags byte, body []byte) (byte, []byte, error) {
	if flags&^(FlagMore|FlagLong|FlagCommand) != 0 {
		return 0, nil, protoErr("frame flags %#02x have reserved bits set", flags)
	}
	if len(body) < Overhead {
		return 0, nil, protoErr("MESSAGE of %d bytes, want at least %d", len(body), Overhead)
	}
	if string(body[:len(messageName)]) != messageName {
		return 0, nil, protoErr("frame is not a MESSAGE command")
	}
	n := binary.BigEndian.Uint64(body[8:16])
	if n <= s.recvNonce {
		return 0, nil, protoErr("MESSAGE nonce %d replayed or out of order (last %d)", n, s.recvNonce)
	}
	if n != s.recvNonce+1 {
		return 0, nil, protoErr("MESSAGE nonce %d skips frames (last %d)", n, s.recvNonce)
	}
	prefix := serverPrefix
	if s.server {
		prefix = clientPrefix
	}
	pt, ok := box.OpenAfterPrecomputation(nil, body[16:], shortNonce(prefix, n), &s.shared)
	if !ok {
		return 0, nil, protoErr("MESSAGE box does not open")
	}
	s.recvNonce = n
	sealed := pt[0]
	if sealed&^(sealedMore|sealedCommand) != 0 {
		return 0, nil, protoErr("MESSAGE flags %#02x have reserved bits set", sealed)
	}
	var out byte
	if sealed&sealedMore != 0 {
		out |= FlagMore
	}
	if sealed&sealedCommand != 0 {
		out |= FlagCommand
	}
	if extra := flags & (FlagMore | FlagCommand) &^ out; extra != 0 {
		return 0, nil, protoErr("frame header flags %#02x not confirmed by the sealed flags %#02x", flags, sealed)
	}
	return out, pt[1:], nil
}
