package saltzmq

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

func TestReqClient(t *testing.T) {
	_, addr := startRequestServer(t, RequestConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := DialReq(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct {
		name    string
		payload []byte
		want    []byte
		wantErr bool
	}{
		{"small", []byte("hi"), []byte("re:hi"), false},
		{"empty", nil, []byte("re:"), false},
		{"long frame", bytes.Repeat([]byte("y"), 1<<20), append([]byte("re:"), bytes.Repeat([]byte("y"), 1<<20)...), false},
		// The handler refuses: the server drops the connection unanswered.
		{"dropped", []byte("fail"), nil, true},
		// The next request dials again.
		{"after a drop", []byte("again"), []byte("re:again"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Request(ctx, tt.payload)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("reply %.40q, want an error", got)
				}
				if r.Connected() {
					t.Fatal("the connection was kept after a failed request")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("reply %.40q, want %.40q", got, tt.want)
			}
		})
	}
	r.Close()
	if _, err := r.Request(ctx, []byte("closed")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a request after Close: %v, want net.ErrClosed", err)
	}
}

// TestReqClientTimeout: a reply that does not come by the context's
// deadline fails the request and the connection; Close ends a request
// blocked in its read.
func TestReqClientTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	handler := func(ctx context.Context, remote string, payload []byte) ([]byte, error) {
		if string(payload) == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return payload, nil
	}
	_, addr := startRequestServer(t, RequestConfig{Handler: handler})
	r := NewReqClient(addr)
	if r.Connected() {
		t.Fatal("connected before the first request")
	}
	// A refused connection: the request was not sent.
	if _, err := NewReqClient(startPublisherAddr(t)).Request(context.Background(), []byte("x")); !errors.Is(err, ErrNotConnected) || !errors.Is(err, ErrSocketType) {
		t.Fatalf("a REQ to a publish port: %v, want ErrNotConnected and ErrSocketType", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := r.Request(ctx, []byte("slow")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a late reply: %v, want the deadline", err)
	}
	if r.Connected() {
		t.Fatal("the connection was kept after a timeout")
	}
	got, err := r.Request(context.Background(), []byte("quick"))
	if err != nil || string(got) != "quick" {
		t.Fatalf("after a timeout: %q %v", got, err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.Request(context.Background(), []byte("slow"))
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	r.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a request cut by Close succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a request in progress")
	}
}

// TestReqClientWire plays the server by hand for what the package's own
// servers never send: a PING between request and reply, a reply with a
// routing envelope, a peer that is not a ROUTER.
func TestReqClientWire(t *testing.T) {
	tests := []struct {
		name    string
		sock    string
		replies [][]byte // written after the request, in turn
		ping    bool     // the first is a PING, to be answered
		want    string
		wantErr error
	}{
		{"PING first", "ROUTER", [][]byte{zmtp.EncodeCommand("PING", []byte{0, 1, 'c'}), zmtp.EncodeMsg(nil, []byte("ok"))}, true, "ok", nil},
		{"REP", "REP", [][]byte{zmtp.EncodeMsg(nil, []byte("ok"))}, false, "ok", nil},
		{"envelope", "ROUTER", [][]byte{zmtp.EncodeMsg([]byte("id"), nil, []byte("ok"))}, false, "", ErrProtocol},
		{"no delimiter", "ROUTER", [][]byte{zmtp.EncodeMsg([]byte("ok"))}, false, "", ErrProtocol},
		{"a PUB", "PUB", nil, false, "", ErrSocketType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln := listenLocal(t)
			defer ln.Close()
			pongs := make(chan []byte, 1)
			go func() {
				raw, err := ln.Accept()
				if err != nil {
					return
				}
				defer raw.Close()
				c, err := handshake(context.Background(), Accepted{Conn: raw}, time.Now().Add(5*time.Second), tt.sock, []string{"REQ"}, 0)
				if err != nil {
					return
				}
				if _, _, err := c.readMsg(1<<20, 8, nil); err != nil {
					return
				}
				for i, b := range tt.replies {
					raw.Write(b)
					if i == 0 && tt.ping {
						if frames, cmd, err := c.readMsg(1<<10, 1, nil); err == nil && cmd {
							pongs <- frames[0]
						}
					}
				}
				c.readMsg(1<<10, 1, nil) // until the client closes
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r := NewReqClient(ln.Addr().String())
			defer r.Close()
			got, err := r.Request(ctx, []byte("req"))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %q, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
			if tt.ping {
				select {
				case p := <-pongs:
					if string(p) != "\x04PONGc" {
						t.Fatalf("PONG %q", p)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no PONG")
				}
			}
		})
	}
}

func TestSubClient(t *testing.T) {
	p, addr := startPublisher(t, PublisherConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := DialSub(ctx, addr); err == nil {
		t.Fatal("a subscriber without a subscription was dialled")
	}
	all, err := DialSub(ctx, addr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	filtered, err := DialSub(ctx, addr, "broadcast", topicOf("minion1"))
	if err != nil {
		t.Fatal(err)
	}
	defer filtered.Close()
	eventually(t, "the subscriptions", func() bool {
		return p.subscribedTo("") == 1 && p.subscribedTo("broadcast") == 1 && p.subscribedTo(topicOf("minion1")) == 1
	})
	msgs := [][][]byte{
		{[]byte("load 1")},
		{[]byte(topicOf("minion2")), []byte("to minion2")},
		{[]byte(topicOf("minion1")), []byte("to minion1")},
		{[]byte("broadcast"), bytes.Repeat([]byte("z"), 1<<16)},
	}
	for _, m := range msgs {
		p.Publish(m...)
	}
	tests := []struct {
		name string
		sub  *SubClient
		want [][][]byte
	}{
		{"everything", all, msgs},
		{"zmq_filtering", filtered, msgs[2:]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range tt.want {
				got, err := tt.sub.Recv(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !framesEqual(got, want) {
					t.Fatalf("got %.40q, want %.40q", got, want)
				}
			}
		})
	}
	// Nothing more comes: Recv ends with its context.
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if got, err := filtered.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv with nothing published: %q %v, want the deadline", got, err)
	}
	all.Close()
	if _, err := all.Recv(ctx); err == nil {
		t.Fatal("Recv after Close succeeded")
	}
	if _, err := DialSub(ctx, startRequestServerAddr(t), ""); !errors.Is(err, ErrSocketType) {
		t.Fatalf("a SUB to a request port: %v, want ErrSocketType", err)
	}
}

// topicOf is Salt's zmq_filtering topic of a minion id (saltproto.Topic).
func topicOf(id string) string {
	h := sha1.Sum([]byte(id))
	return hex.EncodeToString(h[:])
}

func startPublisherAddr(t *testing.T) string {
	_, addr := startPublisher(t, PublisherConfig{})
	return addr
}

func startRequestServerAddr(t *testing.T) string {
	_, addr := startRequestServer(t, RequestConfig{})
	return addr
}

func framesEqual(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestInteropClients: the clients against libzmq playing the master
// (testdata/saltmasterpeer.py): Salt's ROUTER answering the REQ, and its
// PUB (an XPUB, to know when the subscriptions arrived) filtering for the
// SUB by the ZMTP 3.0 subscription messages it sent.
func TestInteropClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Run("REQ", func(t *testing.T) {
		payloads := [][]byte{[]byte("\x82\xa3cmd\xa5_auth\xa2id\xa7minion1"), {}, bytes.Repeat([]byte{0x93, 0x01, 0xa1, 'x'}, 1<<18)}
		peer := startPyPeer(t, "testdata/saltmasterpeer.py", map[string]any{"mode": "router", "count": len(payloads), "timeout_ms": 10000})
		r := NewReqClient(peerEndpoint(t, peer))
		defer r.Close()
		for _, pl := range payloads {
			got, err := r.Request(ctx, pl)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append([]byte("re:"), pl...)) {
				t.Fatalf("reply %.40q, want re:%.40q", got, pl)
			}
			if seen := peerFrames(t, peer.next(t)); !framesEqual(seen, [][]byte{{}, pl}) {
				t.Fatalf("libzmq's ROUTER read %.40q, want the delimiter and %.40q", seen, pl)
			}
		}
		peer.finish(t, len(payloads))
	})
	t.Run("SUB", func(t *testing.T) {
		topics := []string{"broadcast", topicOf("minion1")}
		publish := [][][]byte{
			{[]byte(topicOf("minion2")), []byte("to minion2")},
			{[]byte("broadcast"), []byte("to all")},
			{[]byte(topicOf("minion1")), bytes.Repeat([]byte("m"), 300)},
		}
		var subs []string
		for _, s := range topics {
			subs = append(subs, b64([]byte(s)))
		}
		var pub [][]string
		for _, m := range publish {
			var fs []string
			for _, f := range m {
				fs = append(fs, b64(f))
			}
			pub = append(pub, fs)
		}
		peer := startPyPeer(t, "testdata/saltmasterpeer.py", map[string]any{"mode": "xpub", "subscribe": subs, "publish": pub, "timeout_ms": 10000})
		s, err := DialSub(ctx, peerEndpoint(t, peer), topics...)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for range topics {
			if f := peerFrames(t, peer.next(t)); len(f) != 1 || f[0][0] != 1 {
				t.Fatalf("libzmq's XPUB read %q, want a subscription", f)
			}
		}
		peer.finish(t, len(publish))
		for _, want := range publish[1:] {
			got, err := s.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !framesEqual(got, want) {
				t.Fatalf("got %.40q, want %.40q", got, want)
			}
		}
	})
}

// peerEndpoint reads the address a saltmasterpeer.py bound.
func peerEndpoint(t *testing.T, p *saltPeer) string {
	t.Helper()
	m := p.next(t)
	ep, ok := m["endpoint"].(string)
	if !ok {
		t.Fatalf("want the endpoint, got %v", m)
	}
	return strings.TrimPrefix(ep, "tcp://")
}

// TestClientDialer: clients dial from the dialer's local address, as the
// bench fleet gives each minion a loopback address of its own.
func TestClientDialer(t *testing.T) {
	handler := func(ctx context.Context, remote string, payload []byte) ([]byte, error) {
		host, _, err := net.SplitHostPort(remote)
		return []byte(host), err
	}
	_, addr := startRequestServer(t, RequestConfig{Handler: handler})
	p, pubAddr := startPublisher(t, PublisherConfig{})
	d := &ClientDialer{Dialer: net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := d.NewReqClient(addr)
	defer r.Close()
	if got, err := r.Request(ctx, []byte("who")); err != nil || string(got) != "127.0.0.2" {
		t.Fatalf("the server saw the request from %q (%v), want 127.0.0.2", got, err)
	}
	s, err := d.DialSub(ctx, pubAddr, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if local := s.c.raw.LocalAddr().(*net.TCPAddr); !local.IP.Equal(net.IPv4(127, 0, 0, 2)) {
		t.Fatalf("subscribed from %s", local)
	}
	eventually(t, "the subscription", func() bool { return p.subscribedTo("") == 1 })
}
