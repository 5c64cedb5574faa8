package curve

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/nacl/box"
)

// splitFrame returns a frame's flags and body.
func splitFrame(b []byte) (byte, []byte) {
	if b[0]&FlagLong != 0 {
		return b[0], b[9:]
	}
	return b[0], b[2:]
}

// sealRaw seals plain (sealed flags byte included) as the client's MESSAGE
// body with nonce n.
func sealRaw(cs *Session, n uint64, plain []byte) []byte {
	body := binary.BigEndian.AppendUint64([]byte(messageName), n)
	return box.SealAfterPrecomputation(body, plain, shortNonce(clientPrefix, n), &cs.shared)
}

func TestOpenFrameRejects(t *testing.T) {
	type frame struct {
		flags byte
		body  []byte
	}
	tests := []struct {
		name   string
		frames func(cs *Session) []frame // all but the last must open
		want   string
	}{
		{"replayed", func(cs *Session) []frame {
			f, b := splitFrame(cs.AppendFrame(nil, false, []byte("a")))
			return []frame{{f, b}, {f, b}}
		}, "replayed or out of order"},
		{"reordered", func(cs *Session) []frame {
			cs.AppendFrame(nil, false, []byte("a"))
			f2, b2 := splitFrame(cs.AppendFrame(nil, false, []byte("b")))
			return []frame{{f2, b2}} // before the first
		}, "skips frames"},
		{"dropped", func(cs *Session) []frame {
			f1, b1 := splitFrame(cs.AppendFrame(nil, false, []byte("a")))
			cs.AppendFrame(nil, false, []byte("b"))
			f3, b3 := splitFrame(cs.AppendFrame(nil, false, []byte("c")))
			return []frame{{f1, b1}, {f3, b3}}
		}, "skips frames"},
		{"truncated", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, false, nil))
			return []frame{{0, b[:Overhead-1]}}
		}, "want at least 33"},
		{"not a MESSAGE", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, false, nil))
			b[1] = 'm'
			return []frame{{0, b}}
		}, "not a MESSAGE"},
		{"box tampered", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, false, []byte("abc")))
			b[len(b)-1] ^= 1
			return []frame{{0, b}}
		}, "does not open"},
		{"nonce tampered", func(cs *Session) []frame {
			cs.AppendFrame(nil, false, nil)
			_, b := splitFrame(cs.AppendFrame(nil, false, []byte("abc")))
			b[15]--
			return []frame{{0, b}}
		}, "does not open"},
		{"header MORE not sealed", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, false, []byte("abc")))
			return []frame{{FlagMore, b}}
		}, "not confirmed"},
		{"header COMMAND not sealed", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, true, []byte("abc")))
			return []frame{{FlagCommand, b}}
		}, "not confirmed"},
		{"header reserved bits", func(cs *Session) []frame {
			_, b := splitFrame(cs.AppendFrame(nil, false, []byte("abc")))
			return []frame{{0x08, b}}
		}, "reserved bits"},
		{"sealed reserved bits", func(cs *Session) []frame {
			return []frame{{0, sealRaw(cs, cs.sendNonce, []byte{0x04, 'x'})}}
		}, "reserved bits"},
		{"sealed nothing", func(cs *Session) []frame {
			b := sealRaw(cs, cs.sendNonce, nil)
			return []frame{{0, b}}
		}, "want at least 33"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, ss := randomHandshake(t)
			frames := tt.frames(cs)
			for i, f := range frames {
				_, _, err := ss.OpenFrame(f.flags, f.body)
				if i < len(frames)-1 {
					if err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					continue
				}
				if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("OpenFrame: %v, want an ErrProtocol containing %q", err, tt.want)
				}
			}
			// The session is dead after an error, even for a good frame.
			f, b := splitFrame(cs.AppendFrame(nil, false, nil))
			if _, _, err := ss.OpenFrame(f, b); err == nil {
				t.Fatal("a frame opened after an error")
			}
		})
	}
}

func TestOpenFrameDirections(t *testing.T) {
	_, ss := randomHandshake(t)
	// A frame sealed by the server, with the nonce the server expects
	// next, does not open on the server: the prefixes differ by direction.
	ss.sendNonce = ss.recvNonce + 1
	f, b := splitFrame(ss.AppendFrame(nil, false, []byte("abc")))
	if _, _, err := ss.OpenFrame(f, b); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "does not open") {
		t.Errorf("reflected frame: %v", err)
	}
	cs, ss := randomHandshake(t)
	// Sealed flags: MORE and COMMAND come back as header flags, and the
	// header may repeat them.
	tests := []struct {
		sealed, header, want byte
	}{
		{0, 0, 0},
		{sealedMore, 0, FlagMore},
		{sealedMore, FlagMore, FlagMore},
		{sealedCommand, 0, FlagCommand},
		{sealedMore | sealedCommand, FlagMore | FlagCommand | FlagLong, FlagMore | FlagCommand},
	}
	for _, tt := range tests {
		body := sealRaw(cs, cs.sendNonce, []byte{tt.sealed, 'p'})
		cs.sendNonce++
		got, p, err := ss.OpenFrame(tt.header, body)
		if err != nil || got != tt.want || string(p) != "p" {
			t.Errorf("sealed %#x header %#x: %#x, %q, %v; want %#x", tt.sealed, tt.header, got, p, err, tt.want)
		}
	}
}

func TestSessionSequence(t *testing.T) {
	cs, ss := randomHandshake(t)
	if cs.sendNonce != 3 || ss.sendNonce != 2 || ss.recvNonce != 2 || cs.recvNonce != 1 {
		t.Fatalf("nonces: client send %d recv %d, server send %d recv %d; want 3 1 2 2 (libzmq's)", cs.sendNonce, cs.recvNonce, ss.sendNonce, ss.recvNonce)
	}
	var wire []byte
	for i := range 100 {
		wire = cs.AppendFrame(wire, i%3 != 2, slices.Repeat([]byte{byte(i)}, i))
	}
	for i := range 100 {
		var f byte
		var body []byte
		if wire[0]&FlagLong != 0 {
			n := binary.BigEndian.Uint64(wire[1:9])
			f, body, wire = wire[0], wire[9:9+n], wire[9+n:]
		} else {
			n := int(wire[1])
			f, body, wire = wire[0], wire[2:2+n], wire[2+n:]
		}
		flags, p, err := ss.OpenFrame(f, body)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if (flags&FlagMore != 0) != (i%3 != 2) || len(p) != i || i > 0 && p[0] != byte(i) {
			t.Fatalf("frame %d: flags %#x, %d bytes", i, flags, len(p))
		}
	}
}
