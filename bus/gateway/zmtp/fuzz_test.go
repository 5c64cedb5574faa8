package zmtp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadMsg reads any bytes as a message, strict or lenient, with and
// without an Open that strips a wrapping: it never panics, never returns
// more than the bounds allow, and a message it accepts reads back the same
// once encoded again.
func FuzzReadMsg(f *testing.F) {
	f.Add(EncodeMsg(nil, []byte("payload")), uint16(100), uint8(4), false, false)
	f.Add(EncodeCommand("READY", Properties("Socket-Type", "REQ")), uint16(100), uint8(1), true, false)
	f.Add(append(wrapped(FlagMore, "a"), wrapped(0, "bc")...), uint16(200), uint8(4), false, true)
	f.Fuzz(func(t *testing.T, wire []byte, max uint16, maxFrames uint8, strict, open bool) {
		o := ReadOptions{Max: int(max), MaxFrames: int(maxFrames), Strict: strict}
		if open {
			o.Open, o.Slack = unwrap, 4
		}
		reserved := 0
		o.Reserve = func(n int) error {
			if n <= 0 || n > int(max)+o.Slack {
				t.Fatalf("reserve(%d) over the bound %d", n, int(max)+o.Slack)
			}
			reserved += n
			return nil
		}
		frames, cmd, err := ReadMsg(bufio.NewReader(bytes.NewReader(wire)), o)
		if err != nil {
			if frames != nil || cmd {
				t.Fatalf("error %v with frames %q", err, frames)
			}
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrProtocol) && err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(frames) == 0 || len(frames) > int(maxFrames) {
			t.Fatalf("%d frames, bound %d", len(frames), maxFrames)
		}
		total := 0
		for _, fr := range frames {
			total += 2 + FrameCost + len(fr)
		}
		if total > int(max)+o.Slack {
			t.Fatalf("%d bytes read, bound %d", total, int(max)+o.Slack)
		}
		if strict && !open && cmd && len(frames) != 1 {
			t.Fatalf("a command inside a message of %d frames", len(frames))
		}
		if open || cmd {
			return
		}
		again, _, err := ReadMsg(bufio.NewReader(bytes.NewReader(EncodeMsg(frames...))), ReadOptions{Max: 1 << 20, MaxFrames: 256})
		if err != nil || len(again) != len(frames) {
			t.Fatalf("re-encoded message reads as %q, %v; want %q", again, err, frames)
		}
		for i := range again {
			if !bytes.Equal(again[i], frames[i]) {
				t.Fatalf("frame %d reads back as %q, want %q", i, again[i], frames[i])
			}
		}
	})
}
