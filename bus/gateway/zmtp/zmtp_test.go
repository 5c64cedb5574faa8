package zmtp

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
)

// rawFrames encodes frames of the given payload sizes as one message, long
// headers where asked (a peer may use one for any size).
func rawFrames(long bool, sizes ...int) []byte {
	var b []byte
	for i, n := range sizes {
		var flags byte
		if i < len(sizes)-1 {
			flags = FlagMore
		}
		if long || n > 255 {
			b = append(b, flags|FlagLong)
			b = binary.BigEndian.AppendUint64(b, uint64(n))
		} else {
			b = append(b, flags, byte(n))
		}
		b = append(b, make([]byte, n)...)
	}
	return b
}

// TestReadMsg: the bounds count each frame's header and FrameCost with its
// payload; Strict refuses what ZMTP forbids, and a lenient reader passes
// it on.
func TestReadMsg(t *testing.T) {
	const limit = 1000
	perFrame := 2 + FrameCost // a short header and the frame's cost
	long := bytes.Repeat([]byte("x"), 300)
	lenient := ReadOptions{Max: limit, MaxFrames: 8}
	strict := ReadOptions{Max: limit, MaxFrames: 8, Strict: true}
	tests := []struct {
		name string
		wire []byte
		o    ReadOptions
		want [][]byte
		cmd  bool
		err  error
	}{
		{"one frame", EncodeMsg([]byte("a")), strict, [][]byte{[]byte("a")}, false, nil},
		{"envelope", EncodeMsg(nil, []byte("payload")), strict, [][]byte{{}, []byte("payload")}, false, nil},
		{"long frame", EncodeMsg(long), strict, [][]byte{long}, false, nil},
		{"long header for a short frame", rawFrames(true, 3), strict, [][]byte{{0, 0, 0}}, false, nil},
		{"command", EncodeCommand("PING", []byte{0, 0}), strict, [][]byte{[]byte("\x04PING\x00\x00")}, true, nil},
		{"8 frames", rawFrames(false, 1, 1, 1, 1, 1, 1, 1, 1), lenient, [][]byte{{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}}, false, nil},
		{"9 frames", rawFrames(false, 1, 1, 1, 1, 1, 1, 1, 1, 1), lenient, nil, false, ErrTooManyFrames},
		{"endless empty frames", bytes.Repeat([]byte{FlagMore, 0}, 1<<20), lenient, nil, false, ErrTooManyFrames},
		// A long header (9 bytes) is 7 more than a short one.
		{"one frame at the limit", rawFrames(false, limit-perFrame-7), lenient, [][]byte{make([]byte, limit-perFrame-7)}, false, nil},
		{"one frame a byte over", rawFrames(false, limit-perFrame-7+1), lenient, nil, false, ErrTooLarge},
		// Payload alone (7*120 = 840) is under the limit; with each
		// frame's cost it is over.
		{"framing counted", rawFrames(false, 120, 120, 120, 120, 120, 120, 120), lenient, nil, false, ErrTooLarge},
		{"huge announced size", binary.BigEndian.AppendUint64([]byte{FlagLong}, 1<<62), lenient, nil, false, ErrTooLarge},
		{"truncated", rawFrames(false, 10, 10)[:15], lenient, nil, false, io.ErrUnexpectedEOF},
		{"truncated long header", []byte{FlagLong, 0, 0}, lenient, nil, false, io.ErrUnexpectedEOF},
		{"empty", nil, lenient, nil, false, io.EOF},
		{"reserved flags, strict", []byte{0x80, 0}, strict, nil, false, ErrProtocol},
		{"reserved flags, lenient", []byte{0x80, 1, 'a'}, lenient, [][]byte{[]byte("a")}, false, nil},
		{"command inside a message, strict", append([]byte{FlagMore, 1, 'a'}, EncodeCommand("PING", nil)...), strict, nil, false, ErrProtocol},
		{"command with more, strict", []byte{FlagCommand | FlagMore, 0}, strict, nil, false, ErrProtocol},
		{"command with more, lenient", []byte{FlagCommand | FlagMore, 0, 0, 1, 'a'}, lenient, [][]byte{{}, []byte("a")}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkRead(t, tt.wire, tt.o, tt.want, tt.cmd, tt.err) })
	}
}

// checkRead reads wire with o and wants frames and cmd, or the error want.
func checkRead(t *testing.T, wire []byte, o ReadOptions, frames [][]byte, cmd bool, want error) {
	t.Helper()
	got, gotCmd, err := ReadMsg(bufio.NewReader(bytes.NewReader(wire)), o)
	switch {
	case !errors.Is(err, want) || (want == nil) != (err == nil):
		t.Fatalf("ReadMsg error %v, want %v", err, want)
	case gotCmd != cmd || len(got) != len(frames):
		t.Fatalf("ReadMsg = %q (cmd %v), want %q (cmd %v)", got, gotCmd, frames, cmd)
	}
	for i := range got {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d = %q, want %q", i, got[i], frames[i])
		}
	}
}

func TestReadMsgReserve(t *testing.T) {
	var asked []int
	o := ReadOptions{Max: 100, MaxFrames: 4, Reserve: func(n int) error { asked = append(asked, n); return nil }}
	checkRead(t, EncodeMsg(nil, []byte("abc")), o, [][]byte{{}, []byte("abc")}, false, nil)
	if len(asked) != 1 || asked[0] != 3 {
		t.Fatalf("reserved %v, want [3] (empty frames cost nothing to reserve)", asked)
	}
	refuse := errors.New("no room")
	o.Reserve = func(int) error { return refuse }
	checkRead(t, EncodeMsg([]byte("abc")), o, nil, false, refuse)
	// A frame over the bound is refused before it is reserved.
	o.Max = 10
	checkRead(t, EncodeMsg(make([]byte, 50)), o, nil, false, ErrTooLarge)
}

// unwrap is an Open that strips a 4-byte wrapping and takes its flags from
// the first byte of it, as CURVE's seal carries MORE and COMMAND.
func unwrap(_ byte, body []byte) (byte, []byte, error) {
	if len(body) < 4 {
		return 0, nil, ErrProtocol
	}
	return body[0], body[4:], nil
}

func wrapped(flags byte, payload string) []byte {
	return AppendFrame(nil, flags&FlagMore, append([]byte{flags, 0, 0, 0}, payload...))
}

// TestReadMsgOpen: each frame is checked as read, within Max and Slack,
// and counted as opened; the opened flags decide MORE and COMMAND.
func TestReadMsgOpen(t *testing.T) {
	base := FrameCost + 2
	tests := []struct {
		name string
		wire []byte
		max  int
		want [][]byte
		cmd  bool
		err  error
	}{
		{"one frame", wrapped(0, "abc"), base + 3, [][]byte{[]byte("abc")}, false, nil},
		{"two frames", append(wrapped(FlagMore, "a"), wrapped(0, "b")...), 2*base + 2, [][]byte{[]byte("a"), []byte("b")}, false, nil},
		{"opened flags end the message", []byte{FlagMore, 5, 0, 0, 0, 0, 'a'}, base + 1, [][]byte{[]byte("a")}, false, nil},
		{"opened command", wrapped(FlagCommand, "\x04PING"), base + 5, [][]byte{[]byte("\x04PING")}, true, nil},
		{"over the slack", wrapped(0, "abcd"), base + 3, nil, false, ErrTooLarge},
		{"refused by Open", AppendFrame(nil, 0, []byte{1}), 100, nil, false, ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRead(t, tt.wire, ReadOptions{Max: tt.max, MaxFrames: 4, Slack: 4, Open: unwrap}, tt.want, tt.cmd, tt.err)
		})
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name  string
		b     []byte
		flags byte
		size  uint64
		n     int
	}{
		{"short", []byte{FlagMore, 7, 'x'}, FlagMore, 7, 2},
		{"long", binary.BigEndian.AppendUint64([]byte{FlagLong | FlagCommand}, 300), FlagLong | FlagCommand, 300, 9},
		{"empty", nil, 0, 0, 0},
		{"one byte", []byte{0}, 0, 0, 0},
		{"truncated long", []byte{FlagLong, 0, 0, 0}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags, size, n := ParseHeader(tt.b)
			if flags != tt.flags || size != tt.size || n != tt.n {
				t.Fatalf("ParseHeader = %#x, %d, %d; want %#x, %d, %d", flags, size, n, tt.flags, tt.size, tt.n)
			}
		})
	}
}

func TestEncodeMsg(t *testing.T) {
	long := bytes.Repeat([]byte("y"), 256)
	tests := []struct {
		name   string
		frames [][]byte
		want   []byte
	}{
		{"one frame", [][]byte{[]byte("ab")}, []byte{0, 2, 'a', 'b'}},
		{"more", [][]byte{nil, []byte("a")}, []byte{FlagMore, 0, 0, 1, 'a'}},
		{"long", [][]byte{long}, append(binary.BigEndian.AppendUint64([]byte{FlagLong}, 256), long...)},
		{"none", nil, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeMsg(tt.frames...); !bytes.Equal(got, tt.want) {
				t.Fatalf("EncodeMsg = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	c := EncodeCommand("READY", Properties("Socket-Type", "REQ", "Identity", ""))
	if want := []byte("\x04\x26\x05READY\x0bSocket-Type\x00\x00\x00\x03REQ\x08Identity\x00\x00\x00\x00"); !bytes.Equal(c, want) {
		t.Fatalf("EncodeCommand = %q, want libzmq's READY %q", c, want)
	}
	tests := []struct {
		name  string
		body  []byte
		cmd   string
		props map[string]string
		err   error
	}{
		{"READY", c[2:], "READY", map[string]string{"socket-type": "REQ", "identity": ""}, nil},
		{"no properties", []byte("\x05READY"), "READY", map[string]string{}, nil},
		{"empty", nil, "", nil, ErrProtocol},
		{"name past the end", []byte("\x09READY"), "", nil, ErrProtocol},
		{"truncated name", []byte("\x05READY\x0bSocket"), "READY", nil, ErrProtocol},
		{"truncated value", []byte("\x05READY\x0bSocket-Type\x00\x00\x00\x09REQ"), "READY", nil, ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, data, err := ParseCommand(tt.body)
			var props map[string]string
			if err == nil {
				props, err = ParseProperties(data)
			}
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if name != tt.cmd || len(props) != len(tt.props) {
				t.Fatalf("command %q %q, want %q %q", name, props, tt.cmd, tt.props)
			}
			for k, v := range tt.props {
				if got, ok := props[k]; !ok || got != v {
					t.Fatalf("property %q = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestGreeting(t *testing.T) {
	g := Greeting(1, "CURVE")
	if Mechanism(g[:]) != "CURVE" || g[11] != 1 || g[32] != 0 {
		t.Fatalf("Greeting = %q", g)
	}
	// zmq4's NULL greeting, which a handover depends on.
	want := append([]byte{0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0}, "NULL"...)
	want = append(want, make([]byte, GreetingSize-len(want))...)
	if g := Greeting(0, "NULL"); !bytes.Equal(g[:], want) {
		t.Fatalf("Greeting(0, NULL) = %q, want %q", g, want)
	}
	zmtp2 := Greeting(0, "NULL")
	zmtp2[10] = 2
	badSig := Greeting(0, "NULL")
	badSig[9] = 0
	full := Greeting(0, "01234567890123456789")
	tests := []struct {
		name string
		g    []byte
		sig  bool
		mech string
		err  error
	}{
		{"3.0 NULL", want, true, "NULL", nil},
		{"3.1 CURVE", g[:], true, "CURVE", nil},
		{"20-byte mechanism", full[:], true, "01234567890123456789", nil},
		{"ZMTP 2", zmtp2[:], true, "NULL", ErrNotZMTP},
		{"bad signature", badSig[:], false, "NULL", ErrNotZMTP},
		{"short", want[:PrefixSize], true, "", ErrNotZMTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if HasSignature(tt.g) != tt.sig {
				t.Fatalf("HasSignature = %v", !tt.sig)
			}
			if err := CheckGreeting(tt.g); !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("CheckGreeting: %v, want %v", err, tt.err)
			}
			if len(tt.g) == GreetingSize && Mechanism(tt.g) != tt.mech {
				t.Fatalf("Mechanism = %q, want %q", Mechanism(tt.g), tt.mech)
			}
		})
	}
}

type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

func TestRemoteHost(t *testing.T) {
	tests := []struct {
		name   string
		remote net.Addr
		want   string
	}{
		{"IPv4", &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4506}, "192.0.2.7"},
		{"IPv6 by its /64", &net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:3:4:5:6"), Port: 4506}, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", &net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7")}, "192.0.2.7"},
		{"unix", &net.UnixAddr{Name: "/run/brine.sock", Net: "unix"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RemoteHost(addrConn{remote: tt.remote}); got != tt.want {
				t.Fatalf("RemoteHost = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestErrors: a message over the frame bound matches both errors, one over
// the byte bound only ErrTooLarge; the wording is saltzmq's.
func TestErrors(t *testing.T) {
	o := ReadOptions{Max: 100, MaxFrames: 1}
	_, _, frames := ReadMsg(bufio.NewReader(bytes.NewReader(EncodeMsg(nil, nil))), o)
	_, _, size := ReadMsg(bufio.NewReader(bytes.NewReader(EncodeMsg(make([]byte, 100)))), o)
	tests := []struct {
		err      error
		tooLarge bool
		frames   bool
		text     string
	}{
		{frames, true, true, "message too large: more than 1 frames"},
		{size, true, false, "message too large: over 100 bytes"},
	}
	for _, tt := range tests {
		if errors.Is(tt.err, ErrTooLarge) != tt.tooLarge || errors.Is(tt.err, ErrTooManyFrames) != tt.frames || tt.err.Error() != tt.text {
			t.Errorf("%v: ErrTooLarge %v, ErrTooManyFrames %v; want %v, %v, %q", tt.err,
				errors.Is(tt.err, ErrTooLarge), errors.Is(tt.err, ErrTooManyFrames), tt.tooLarge, tt.frames, tt.text)
		}
	}
}
