package curve

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

var errNotListed = errors.New("not on the list of accepted minions")

func TestHandshakeOverTCP(t *testing.T) {
	serverKeys, clientKeys, otherKeys := mustKeyPair(t), mustKeyPair(t), mustKeyPair(t)
	type seen struct {
		client Key
		meta   map[string]string
	}
	tests := []struct {
		name       string
		serverKey  Key // the client's configured server key
		authorize  func(*seen) Authorizer
		clientType zmq4.SocketType
		clientErr  []error // the client's error must match all of these
		clientText string  // and contain this
		serverErr  []error // same for the server
		serverText string
	}{
		{
			name:      "accepted",
			serverKey: serverKeys.Public,
			authorize: func(s *seen) Authorizer {
				return func(c Key, meta map[string]string) error {
					s.client, s.meta = c, meta
					return nil
				}
			},
			clientType: zmq4.Dealer,
		},
		{
			name:       "no authorizer",
			serverKey:  serverKeys.Public,
			clientType: zmq4.Dealer,
		},
		{
			name:      "refused",
			serverKey: serverKeys.Public,
			authorize: func(s *seen) Authorizer {
				return func(c Key, meta map[string]string) error {
					s.client, s.meta = c, meta
					return errNotListed
				}
			},
			clientType: zmq4.Dealer,
			clientErr:  []error{ErrRefused},
			clientText: errNotListed.Error(),
			serverErr:  []error{errNotListed},
			serverText: clientKeys.Public.String(),
		},
		{
			name:       "wrong server key",
			serverKey:  otherKeys.Public,
			clientType: zmq4.Dealer,
			clientErr:  []error{ErrServerKey, ErrRefused},
			clientText: "server key mismatch",
			serverErr:  []error{ErrServerKey, ErrProtocol},
			serverText: "HELLO",
		},
		{
			name:       "incompatible socket type",
			serverKey:  serverKeys.Public,
			clientType: zmq4.Pub,
			serverText: "not compatible",
			clientText: "not compatible",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s seen
			var auth Authorizer
			if tt.authorize != nil {
				auth = tt.authorize(&s)
			}
			cm, sm := NewClient(clientKeys, tt.serverKey), NewServer(serverKeys, auth)
			client, server := handshake(t, cm, sm, tt.clientType, zmq4.Router)
			check := func(side string, err error, want []error, text string) {
				t.Helper()
				if len(want) == 0 && text == "" {
					if err != nil {
						t.Fatalf("%s: %v", side, err)
					}
					return
				}
				if err == nil {
					t.Fatalf("%s: handshake succeeded, want an error", side)
				}
				for _, w := range want {
					if !errors.Is(err, w) {
						t.Errorf("%s error %q does not match %q", side, err, w)
					}
				}
				if !strings.Contains(err.Error(), text) {
					t.Errorf("%s error %q does not contain %q", side, err, text)
				}
			}
			check("client", client.err, tt.clientErr, tt.clientText)
			check("server", server.err, tt.serverErr, tt.serverText)
			if tt.authorize != nil && s.client != clientKeys.Public {
				t.Errorf("Authorize saw client %s, want %s", s.client, clientKeys.Public)
			}
			if tt.authorize != nil && s.meta["Socket-Type"] != "DEALER" {
				t.Errorf("Authorize saw metadata %v, want Socket-Type DEALER", s.meta)
			}
			if client.err != nil || server.err != nil {
				// (zmq4 checks socket types after a successful CURVE
				// handshake: that failure leaves a Session behind.)
				if len(tt.clientErr) > 0 && (cm.Session() != nil || sm.Session() != nil) {
					t.Error("Session() is not nil after a failed handshake")
				}
				return
			}
			if got := server.conn.Peer.Meta["Socket-Type"]; got != "DEALER" {
				t.Errorf("server sees Socket-Type %q", got)
			}
			if got := client.conn.Peer.Meta["Socket-Type"]; got != "ROUTER" {
				t.Errorf("client sees Socket-Type %q", got)
			}
			if got := client.conn.Peer.Meta["Identity"]; got != "brine-master" {
				t.Errorf("client sees Identity %q", got)
			}
			if got := sm.Session().Peer(); got != clientKeys.Public {
				t.Errorf("server session peer = %s, want %s", got, clientKeys.Public)
			}
			if got := cm.Session().Peer(); got != serverKeys.Public {
				t.Errorf("client session peer = %s, want %s", got, serverKeys.Public)
			}
		})
	}
}

func TestMessagesOverTCP(t *testing.T) {
	serverKeys, clientKeys := mustKeyPair(t), mustKeyPair(t)
	client, server := handshake(t, NewClient(clientKeys, serverKeys.Public), NewServer(serverKeys, nil), zmq4.Dealer, zmq4.Router)
	if client.err != nil || server.err != nil {
		t.Fatalf("handshake: client %v, server %v", client.err, server.err)
	}
	cs, ss := client.mech.Session(), server.mech.Session()
	frames := testFrames()
	const rounds = 20

	// Both directions at once: each side writes rounds messages while the
	// other reads them.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	send := func(raw net.Conn, s *Session) {
		var buf []byte
		for i := range rounds {
			buf = appendMessage(buf[:0], s, append(slices.Clone(frames), []byte{byte(i)})...)
			if _, err := raw.Write(buf); err != nil {
				errs <- err
				return
			}
		}
	}
	recv := func(p peer, s *Session) {
		for i := range rounds {
			got, err := readMessage(p.br, s)
			if err != nil {
				errs <- err
				return
			}
			want := append(slices.Clone(frames), []byte{byte(i)})
			if !slices.EqualFunc(got, want, bytes.Equal) {
				errs <- errors.New("message differs from what was sent")
				return
			}
		}
	}
	wg.Go(func() { send(client.raw, cs) })
	wg.Go(func() { send(server.raw, ss) })
	wg.Go(func() { recv(server, ss) })
	wg.Go(func() { recv(client, cs) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestFrameHeaders checks what AppendFrame puts on the wire: no MORE or
// COMMAND flag in the header (MORE is sealed), LONG over 255 bytes.
func TestFrameHeaders(t *testing.T) {
	cs, ss := randomHandshake(t)
	for _, n := range []int{0, 1, 222, 223, 5000} {
		for _, more := range []bool{false, true} {
			b := cs.AppendFrame(nil, more, make([]byte, n))
			size := n + Overhead
			wantLen := 2 + size
			var wantFlags byte
			if size > 255 {
				wantFlags, wantLen = FlagLong, 9+size
			}
			if b[0] != wantFlags || len(b) != wantLen {
				t.Errorf("payload %d more %v: header flags %#x, frame %d bytes; want %#x, %d", n, more, b[0], len(b), wantFlags, wantLen)
			}
			hdr := 2
			if size > 255 {
				hdr = 9
			}
			if !bytes.HasPrefix(b[hdr:], []byte("\x07MESSAGE")) {
				t.Errorf("payload %d: body does not start with MESSAGE", n)
			}
			f, p, err := ss.OpenFrame(b[0], b[hdr:])
			if err != nil || len(p) != n || (f == FlagMore) != more {
				t.Errorf("payload %d more %v: OpenFrame = %#x, %d bytes, %v", n, more, f, len(p), err)
			}
		}
	}
}

func TestAppendFrameOverlap(t *testing.T) {
	cs, ss := randomHandshake(t)
	buf := make([]byte, 0, 4096)
	buf = append(buf, "payload that lives in dst's own array"...)
	want := string(buf)
	frame := cs.AppendFrame(buf[:0], false, buf)
	_, p, err := ss.OpenFrame(frame[0], frame[2:])
	if err != nil || string(p) != want {
		t.Fatalf("OpenFrame = %q, %v; want %q", p, err, want)
	}
}

// TestSilentServer: a libzmq server closes the connection without a word
// when HELLO does not open with its key; the client reports ErrServerKey.
func TestSilentServer(t *testing.T) {
	craw, sraw := tcpPair(t)
	go func() {
		greeting := make([]byte, 64)
		greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
		copy(greeting[12:], "CURVE")
		greeting[32] = 1
		sraw.Write(greeting)
		buf := make([]byte, 64+2+200)
		for n := 0; n < len(buf); {
			k, err := sraw.Read(buf[n:])
			if err != nil {
				break
			}
			n += k
		}
		sraw.Close()
	}()
	p := open(craw, NewClient(mustKeyPair(t), mustKeyPair(t).Public), zmq4.Dealer, "", false)
	if !errors.Is(p.err, ErrServerKey) {
		t.Fatalf("error = %v, want ErrServerKey", p.err)
	}
}

func TestMechanismMisuse(t *testing.T) {
	serverKeys, clientKeys := mustKeyPair(t), mustKeyPair(t)
	cm, sm := NewClient(clientKeys, serverKeys.Public), NewServer(serverKeys, nil)
	if _, err := cm.Encrypt(&bytes.Buffer{}, []byte("x")); !errors.Is(err, ErrNoMessages) {
		t.Errorf("Encrypt before the handshake: %v", err)
	}
	client, server := handshake(t, cm, sm, zmq4.Dealer, zmq4.Router)
	if client.err != nil || server.err != nil {
		t.Fatalf("handshake: client %v, server %v", client.err, server.err)
	}
	for _, m := range []*Mechanism{cm, sm} {
		if _, err := m.Encrypt(&bytes.Buffer{}, []byte("x")); !errors.Is(err, ErrNoMessages) {
			t.Errorf("Encrypt after the handshake: %v", err)
		}
		if _, err := m.Decrypt(&bytes.Buffer{}, []byte("x")); !errors.Is(err, ErrNoMessages) {
			t.Errorf("Decrypt after the handshake: %v", err)
		}
		if err := m.Handshake(client.conn, m.server); err == nil || !strings.Contains(err.Error(), "one per connection") {
			t.Errorf("second Handshake: %v", err)
		}
	}
	if err := NewServer(serverKeys, nil).Handshake(client.conn, false); err == nil || !strings.Contains(err.Error(), "server mechanism cannot run the client side") {
		t.Errorf("server mechanism as client: %v", err)
	}
	if NewServer(serverKeys, nil).Session() != nil {
		t.Error("Session before the handshake is not nil")
	}
	if (&Mechanism{}).Type() != "CURVE" {
		t.Error("Type is not CURVE")
	}
}

func TestHandshakeTimesOutOnSilentClient(t *testing.T) {
	craw, sraw := tcpPair(t)
	go func() {
		greeting := make([]byte, 64)
		greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
		copy(greeting[12:], "CURVE")
		craw.Write(greeting)
	}()
	sraw.SetDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := zmq4.Open(sraw, NewServer(mustKeyPair(t), nil), zmq4.Router, zmq4.SocketIdentity(""), true, nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error = %v, want a timeout", err)
	}
}
