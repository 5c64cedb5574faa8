package gateway

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// rawFrames encodes frames of the given payload sizes as one message,
// short headers where they fit, as a peer is free to.
func rawFrames(sizes ...int) []byte {
	var b []byte
	for i, n := range sizes {
		var flags byte
		if i < len(sizes)-1 {
			flags = zmtp.FlagMore
		}
		if n > 255 {
			b = append(b, flags|zmtp.FlagLong)
			b = binary.BigEndian.AppendUint64(b, uint64(n))
		} else {
			b = append(b, flags, byte(n))
		}
		b = append(b, make([]byte, n)...)
	}
	return b
}

func repeat(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// TestReadMsgLimits: a message is bounded in frames and in bytes, each
// frame's header and zmtp.FrameCost counted with its payload, so that empty
// frames cannot grow a message without bound.
func TestReadMsgLimits(t *testing.T) {
	const limit = 1000
	perFrame := 2 + zmtp.FrameCost // a short header and the frame's cost
	tests := []struct {
		name   string
		stream []byte
		frames int   // read when no error
		err    error // wanted, or nil
	}{
		{"request of 4 frames", rawFrames(8, 5, 100, 64), 4, nil},
		{"8 frames", rawFrames(repeat(8, 1)...), 8, nil},
		{"9 frames", rawFrames(repeat(9, 1)...), 0, zmtp.ErrTooManyFrames},
		{"endless empty frames", bytes.Repeat([]byte{zmtp.FlagMore, 0}, 1<<20), 0, zmtp.ErrTooManyFrames},
		// A long header (9 bytes) is 7 more than a short one.
		{"one frame at the limit", rawFrames(limit - perFrame - 7), 1, nil},
		{"one frame a byte over", rawFrames(limit - perFrame - 7 + 1), 0, zmtp.ErrTooLarge},
		// Payload alone (7*120 = 840) is under the limit; with each frame's cost
		// it is over.
		{"framing counted", rawFrames(repeat(7, 120)...), 0, zmtp.ErrTooLarge},
		{"huge announced size", binary.BigEndian.AppendUint64([]byte{zmtp.FlagLong}, 1<<62), 0, zmtp.ErrTooLarge},
		{"truncated", rawFrames(10, 10)[:15], 0, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc := &peerConn{br: bufio.NewReader(bytes.NewReader(tt.stream))}
			frames, _, err := pc.readMsg(limit)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || frames != nil {
					t.Fatalf("readMsg = %d frames, %v; want %v", len(frames), err, tt.err)
				}
				return
			}
			if err != nil || len(frames) != tt.frames {
				t.Fatalf("readMsg = %d frames, %v; want %d frames", len(frames), err, tt.frames)
			}
		})
	}
}
