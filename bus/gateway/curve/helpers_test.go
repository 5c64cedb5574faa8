package curve

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// peer is one end of a test connection after zmq4.Open.
type peer struct {
	raw  net.Conn
	conn *zmq4.Conn
	mech *Mechanism
	br   *bufio.Reader
	err  error
}

// tcpPair returns both ends of a TCP loopback connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
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

// open runs zmq4.Open on raw with mech, as the gateway does.
func open(raw net.Conn, mech *Mechanism, typ zmq4.SocketType, id string, server bool) peer {
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	conn, err := zmq4.Open(raw, mech, typ, zmq4.SocketIdentity(id), server, nil)
	raw.SetDeadline(time.Time{})
	return peer{raw: raw, conn: conn, mech: mech, br: bufio.NewReader(raw), err: err}
}

// handshake connects a client and a server mechanism over TCP loopback.
func handshake(t *testing.T, cm, sm *Mechanism, ct, st zmq4.SocketType) (client, server peer) {
	t.Helper()
	craw, sraw := tcpPair(t)
	done := make(chan peer, 1)
	go func() { done <- open(sraw, sm, st, "brine-master", true) }()
	client = open(craw, cm, ct, "", false)
	if client.err != nil {
		// The server may wait for a command that will never come.
		craw.Close()
	}
	server = <-done
	if server.err != nil {
		sraw.Close()
	}
	return client, server
}

// readFrame reads one ZMTP frame as the gateway's readMsg does.
func readFrame(r *bufio.Reader, max uint64) (flags byte, body []byte, err error) {
	if flags, err = r.ReadByte(); err != nil {
		return 0, nil, err
	}
	var size uint64
	if flags&FlagLong != 0 {
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		size = binary.BigEndian.Uint64(b[:])
	} else {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		size = uint64(b)
	}
	if size > max {
		return 0, nil, fmt.Errorf("frame of %d bytes", size)
	}
	body = make([]byte, size)
	_, err = io.ReadFull(r, body)
	return flags, body, err
}

// readMessage reads and opens the frames of one message, skipping commands.
func readMessage(r *bufio.Reader, s *Session) ([][]byte, error) {
	var frames [][]byte
	for {
		flags, body, err := readFrame(r, 1<<20)
		if err != nil {
			return nil, err
		}
		f, payload, err := s.OpenFrame(flags, body)
		if err != nil {
			return nil, err
		}
		if f&FlagCommand != 0 {
			continue
		}
		frames = append(frames, payload)
		if f&FlagMore == 0 {
			return frames, nil
		}
	}
}

// appendMessage seals frames as one message.
func appendMessage(dst []byte, s *Session, frames ...[]byte) []byte {
	for i, f := range frames {
		dst = s.AppendFrame(dst, i < len(frames)-1, f)
	}
	return dst
}

func mustKeyPair(t testing.TB) KeyPair {
	t.Helper()
	kp, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// testFrames covers an empty frame and both header sizes (a MESSAGE body
// of a 222-byte payload is 255 bytes, of a 223-byte payload 256).
func testFrames() [][]byte {
	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte(i * 7)
	}
	return [][]byte{[]byte("hello"), {}, make([]byte, 222), make([]byte, 223), big}
}

// Fixed keys and randomness, so that the fuzz tests' seeds (a real HELLO and
// INITIATE) open on a server state built the same way.
var (
	fixedServerKeys = Derive([]byte("curve test"), "server")
	fixedClientKeys = Derive([]byte("curve test"), "client")
)

func fixedRand(seed byte) io.Reader {
	var s [32]byte
	s[0] = seed
	return mrand.NewChaCha8(s)
}

func fixedServer() *serverHandshake {
	return &serverHandshake{keys: fixedServerKeys, rand: fixedRand(1)}
}

func fixedClient() *clientHandshake {
	return &clientHandshake{keys: fixedClientKeys, server: fixedServerKeys.Public, rand: fixedRand(2)}
}

// clientMeta is what a libzmq DEALER sends in INITIATE.
var clientMeta = []byte("\x0bSocket-Type\x00\x00\x00\x06DEALER\x08Identity\x00\x00\x00\x00")

// memoryHandshake runs both sides of a handshake in memory and returns the
// HELLO and INITIATE bodies and both sessions.
func memoryHandshake(t testing.TB, sh *serverHandshake, ch *clientHandshake) (hello, initiate []byte, client, server *Session) {
	t.Helper()
	hello, err := ch.hello()
	if err != nil {
		t.Fatal(err)
	}
	welcome, err := sh.hello(hello)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.welcome(welcome); err != nil {
		t.Fatal(err)
	}
	if initiate, err = ch.initiate(clientMeta); err != nil {
		t.Fatal(err)
	}
	ckey, _, nonce, err := sh.initiate(initiate)
	if err != nil {
		t.Fatal(err)
	}
	if ckey != ch.keys.Public {
		t.Fatalf("server saw client key %s, want %s", ckey, ch.keys.Public)
	}
	_, rnonce, err := ch.ready(sh.ready(nil))
	if err != nil {
		t.Fatal(err)
	}
	return hello, initiate, newSession(sh.keys.Public, &ch.shared, false, rnonce), newSession(ckey, &sh.shared, true, nonce)
}

func randomHandshake(t testing.TB) (client, server *Session) {
	t.Helper()
	skp, ckp := mustKeyPair(t), mustKeyPair(t)
	_, _, client, server = memoryHandshake(t,
		&serverHandshake{keys: skp, rand: rand.Reader},
		&clientHandshake{keys: ckp, server: skp.Public, rand: rand.Reader})
	return client, server
}
