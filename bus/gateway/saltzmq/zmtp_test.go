package saltzmq

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// libzmqReqReady is the READY command libzmq 4.3's REQ socket sends with
// the NULL mechanism: Socket-Type REQ and an empty Identity.
var libzmqReqReady = []byte("\x04\x26\x05READY\x0bSocket-Type\x00\x00\x00\x03REQ\x08Identity\x00\x00\x00\x00")

// peerGreeting is a ZMTP greeting of version 3.minor with mechanism mech.
func peerGreeting(minor byte, mech string) []byte {
	g := greeting(minor)
	clear(g[12:32])
	copy(g[12:32], mech)
	return g[:]
}

func TestCheckGreeting(t *testing.T) {
	zmtp2 := peerGreeting(0, "NULL")
	zmtp2[10] = 1
	badSig := peerGreeting(0, "NULL")
	badSig[9] = 0
	tests := []struct {
		name string
		g    []byte
		want error
	}{
		{"3.0 NULL", peerGreeting(0, "NULL"), nil},
		{"3.1 NULL", peerGreeting(1, "NULL"), nil},
		{"CURVE", peerGreeting(1, "CURVE"), ErrMechanism},
		{"PLAIN", peerGreeting(0, "PLAIN"), ErrMechanism},
		{"ZMTP 2", zmtp2, ErrNotZMTP},
		{"bad signature", badSig, ErrNotZMTP},
		{"short", make([]byte, 10), ErrNotZMTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkGreeting(tt.g)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("checkGreeting: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReadyType(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		want    string
		wantErr error
	}{
		{"libzmq REQ", libzmqReqReady[2:], "REQ", nil},
		{"lower case", []byte("\x05READY\x0bsocket-type\x00\x00\x00\x03sub"), "SUB", nil},
		{"DEALER", append([]byte("\x05READY"), zmtp.Properties("Identity", "", "Socket-Type", "DEALER")...), "DEALER", nil},
		{"no socket type", append([]byte("\x05READY"), zmtp.Properties("Identity", "x")...), "", ErrProtocol},
		{"ERROR", []byte("\x05ERROR\x06denied"), "", ErrProtocol},
		{"other command", []byte("\x04PING\x00\x00"), "", ErrProtocol},
		{"truncated metadata", []byte("\x05READY\x0bSocket-Type\x00\x00\x00\x09REQ"), "", ErrProtocol},
		{"empty", nil, "", ErrProtocol},
		{"name past the end", []byte("\x09READY"), "", ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readyType(tt.body)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("readyType = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestReadMsg(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 300)
	tests := []struct {
		name      string
		wire      []byte
		max       int
		maxFrames int
		want      [][]byte
		cmd       bool
		wantErr   error
	}{
		{"one frame", zmtp.EncodeMsg([]byte("a")), 100, 4, [][]byte{[]byte("a")}, false, nil},
		{"REQ envelope", zmtp.EncodeMsg(nil, []byte("payload")), 100, 4, [][]byte{{}, []byte("payload")}, false, nil},
		{"long frame", zmtp.EncodeMsg(long), 1000, 4, [][]byte{long}, false, nil},
		{"command", zmtp.EncodeCommand("PING", []byte{0, 0}), 100, 4, [][]byte{[]byte("\x04PING\x00\x00")}, true, nil},
		{"too large", zmtp.EncodeMsg(long), 200, 4, nil, false, ErrTooLarge},
		{"too many frames", zmtp.EncodeMsg(nil, nil, nil), 1000, 2, nil, false, ErrTooLarge},
		// Empty frames cost their header and zmtp.FrameCost: 10 of them are over 200 bytes.
		{"many empty frames", zmtp.EncodeMsg(make([][]byte, 10)...), 200, 100, nil, false, ErrTooLarge},
		{"command inside a message", append([]byte{zmtp.FlagMore, 1, 'a'}, zmtp.EncodeCommand("PING", nil)...), 100, 4, nil, false, ErrProtocol},
		{"command with more", []byte{zmtp.FlagCommand | zmtp.FlagMore, 0}, 100, 4, nil, false, ErrProtocol},
		{"reserved flags", []byte{0x80, 0}, 100, 4, nil, false, ErrProtocol},
		{"huge length", []byte{zmtp.FlagLong, 0x40, 0, 0, 0, 0, 0, 0, 0}, 1 << 20, 4, nil, false, ErrTooLarge},
		{"truncated", []byte{0, 5, 'a'}, 100, 4, nil, false, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &conn{br: bufio.NewReader(bytes.NewReader(tt.wire))}
			frames, cmd, err := c.readMsg(tt.max, tt.maxFrames, nil)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("readMsg error %v, want %v", err, tt.wantErr)
			}
			if cmd != tt.cmd || len(frames) != len(tt.want) {
				t.Fatalf("readMsg = %q (cmd %v), want %q (cmd %v)", frames, cmd, tt.want, tt.cmd)
			}
			for i := range frames {
				if !bytes.Equal(frames[i], tt.want[i]) {
					t.Fatalf("frame %d = %q, want %q", i, frames[i], tt.want[i])
				}
			}
		})
	}
}

func TestReadMsgReserve(t *testing.T) {
	c := &conn{br: bufio.NewReader(bytes.NewReader(zmtp.EncodeMsg(nil, []byte("abc"))))}
	var asked []int
	if _, _, err := c.readMsg(100, 4, func(n int) error { asked = append(asked, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != 3 {
		t.Fatalf("reserved %v, want [3] (empty frames cost nothing to reserve)", asked)
	}
	refuse := errors.New("no room")
	c = &conn{br: bufio.NewReader(bytes.NewReader(zmtp.EncodeMsg([]byte("abc"))))}
	if _, _, err := c.readMsg(100, 4, func(int) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("readMsg with a refusing reserve: %v", err)
	}
}

func TestSplitEnvelope(t *testing.T) {
	tests := []struct {
		name    string
		frames  [][]byte
		env     int
		payload string
		wantErr bool
	}{
		{"REQ", [][]byte{{}, []byte("p")}, 1, "p", false},
		{"REQ_CORRELATE", [][]byte{[]byte("id"), {}, []byte("p")}, 2, "p", false},
		{"empty payload", [][]byte{{}, {}}, 1, "", false},
		{"no delimiter", [][]byte{[]byte("p")}, 0, "", true},
		{"two payload frames", [][]byte{{}, []byte("a"), []byte("b")}, 0, "", true},
		{"delimiter only", [][]byte{{}}, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, payload, err := splitEnvelope(tt.frames)
			if (err != nil) != tt.wantErr {
				t.Fatalf("splitEnvelope error %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (len(env) != tt.env || string(payload) != tt.payload) {
				t.Fatalf("splitEnvelope = %q, %q", env, payload)
			}
		})
	}
}

func TestPong(t *testing.T) {
	if got := pong([]byte{0, 10, 'c', 't', 'x'}); !bytes.Equal(got, zmtp.EncodeCommand("PONG", []byte("ctx"))) {
		t.Fatalf("pong = %q", got)
	}
	if pong([]byte{0}) != nil || pong(make([]byte, 19)) != nil {
		t.Fatal("pong answered a malformed PING")
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// gatewayPrefix is what brine's gateway writes before peeking a peer's
// greeting: the signature and major version (its greetingPrefix).
var gatewayPrefix = []byte{0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3}

// TestPeekSocketType plays the gateway: peek the greeting after writing
// its prefix, then PeekSocketType; nothing the peer sent is consumed, and
// the greeting written is this package's.
func TestPeekSocketType(t *testing.T) {
	client, server := tcpPair(t)
	if _, err := client.Write(append(peerGreeting(1, "NULL"), libzmqReqReady...)); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write(gatewayPrefix); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(server, 16<<10)
	if _, err := br.Peek(GreetingSize); err != nil {
		t.Fatal(err)
	}
	typ, err := PeekSocketType(context.Background(), server, br, len(gatewayPrefix), time.Now().Add(5*time.Second))
	if err != nil || typ != "REQ" {
		t.Fatalf("PeekSocketType = %q, %v; want REQ", typ, err)
	}
	if br.Buffered() != GreetingSize+len(libzmqReqReady) {
		t.Fatalf("%d bytes buffered, want the greeting and READY unconsumed (%d)", br.Buffered(), GreetingSize+len(libzmqReqReady))
	}
	got := make([]byte, GreetingSize)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if want := greeting(0); !bytes.Equal(got, want[:]) {
		t.Fatalf("greeting written %x, want %x", got, want)
	}
}

func TestPeekSocketTypeRefusals(t *testing.T) {
	tests := []struct {
		name string
		wire []byte
		want error
	}{
		{"CURVE", append(peerGreeting(0, "CURVE"), libzmqReqReady...), ErrMechanism},
		{"message first", append(peerGreeting(0, "NULL"), 0, 1, 'x'), ErrProtocol},
		{"READY too large", append(peerGreeting(0, "NULL"), zmtp.FlagCommand|zmtp.FlagLong, 0, 0, 0, 0, 0, 1, 0, 0), ErrTooLarge},
		{"ERROR", append(peerGreeting(0, "NULL"), append([]byte{zmtp.FlagCommand, 8}, "\x05ERROR\x01x"...)...), ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, server := tcpPair(t)
			go client.Write(tt.wire)
			go io.Copy(io.Discard, client)
			br := bufio.NewReaderSize(server, 16<<10)
			_, err := PeekSocketType(context.Background(), server, br, 0, time.Now().Add(5*time.Second))
			if !errors.Is(err, tt.want) {
				t.Fatalf("PeekSocketType: %v, want %v", err, tt.want)
			}
		})
	}
}

// TestPeekSocketTypeTimeout: a peer that sends its greeting and no READY
// is given up at the deadline, and a cancelled context ends the wait too.
func TestPeekSocketTypeTimeout(t *testing.T) {
	client, server := tcpPair(t)
	go client.Write(peerGreeting(0, "NULL"))
	go io.Copy(io.Discard, client)
	br := bufio.NewReaderSize(server, 16<<10)
	start := time.Now()
	if _, err := PeekSocketType(context.Background(), server, br, 0, time.Now().Add(200*time.Millisecond)); !isTimeout(err) {
		t.Fatalf("PeekSocketType without READY: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("gave up after %s", d)
	}

	client, server = tcpPair(t)
	go client.Write(peerGreeting(0, "NULL"))
	go io.Copy(io.Discard, client)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := PeekSocketType(ctx, server, bufio.NewReaderSize(server, 16<<10), 0, time.Now().Add(time.Minute)); err == nil {
		t.Fatal("PeekSocketType went on after its context ended")
	}
}

// TestGreetingIsZmq4s pins what the gateway's handover relies on: the
// NULL greeting this package writes is byte for byte zmq4's, so that
// after PeekSocketType a connection can still be handed to zmq4.Open.
func TestGreetingIsZmq4s(t *testing.T) {
	client, server := tcpPair(t)
	go zmq4.Open(client, null.Security(), zmq4.Dealer, nil, false, nil)
	got := make([]byte, GreetingSize)
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if want := greeting(0); !bytes.Equal(got, want[:]) {
		t.Fatalf("zmq4's NULL greeting %x\nthis package's       %x", got, want)
	}
}
