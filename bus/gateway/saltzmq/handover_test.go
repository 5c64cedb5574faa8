package saltzmq

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// The gateway's side of the handover, played here as brine's gateway
// would play it: it writes the start of its greeting, peeks the peer's for
// the mechanism, and on the request port peeks the READY for the socket
// type: a NULL REQ goes to the RequestServer, a NULL DEALER (brine's own
// key bootstrap) to zmq4 as before; on the publish port a NULL peer goes
// to the Publisher.

// skipConn is the gateway's handshakeConn in small: reads come from the
// reader holding what was peeked, and the first skip bytes zmq4 writes
// (its greeting, already written by PeekSocketType) are dropped.
type skipConn struct {
	net.Conn
	r    io.Reader
	skip int
}

func (c *skipConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (c *skipConn) Write(p []byte) (int, error) {
	k := min(c.skip, len(p))
	c.skip -= k
	n, err := c.Conn.Write(p[k:])
	return n + k, err
}

// gatewayStandIn accepts on ln until ctx ends and hands each connection
// on by what it peeks.
func gatewayStandIn(t *testing.T, ctx context.Context, ln net.Listener, serve func(raw net.Conn, br *bufio.Reader, deadline time.Time)) {
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer raw.Close()
				deadline := time.Now().Add(5 * time.Second)
				raw.SetDeadline(deadline)
				if _, err := raw.Write(gatewayPrefix); err != nil {
					return
				}
				br := bufio.NewReaderSize(raw, 16<<10)
				g, err := br.Peek(GreetingSize)
				if err != nil || zmtp.Mechanism(g) != "NULL" {
					t.Errorf("gateway stand-in: greeting %q, %v", g, err)
					return
				}
				serve(raw, br, deadline)
			}()
		}
	}()
	context.AfterFunc(ctx, func() { ln.Close() })
}

func TestHandoverRequestPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs, err := NewRequestServer(RequestConfig{Handler: echo}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	var authenticated atomic.Int32
	bootstrap := make(chan string, 1)
	ln := listenLocal(t)
	gatewayStandIn(t, ctx, ln, func(raw net.Conn, br *bufio.Reader, deadline time.Time) {
		typ, err := PeekSocketType(ctx, raw, br, len(gatewayPrefix), deadline)
		if err != nil {
			t.Errorf("PeekSocketType: %v", err)
			return
		}
		switch typ {
		case "REQ":
			rs.ServeConn(ctx, Accepted{Conn: raw, Reader: br, Sent: GreetingSize, Deadline: deadline,
				Authenticated: func() { authenticated.Add(1) }})
		case "DEALER":
			zc, err := zmq4.Open(&skipConn{Conn: raw, r: br, skip: GreetingSize}, null.Security(), zmq4.Router, zmq4.SocketIdentity("brine-master"), true, nil)
			if err != nil {
				bootstrap <- "handshake: " + err.Error()
				return
			}
			bootstrap <- zc.Peer.Meta["Socket-Type"]
			msg, err := zc.RecvMsg()
			if err != nil {
				return
			}
			zc.SendMsg(msg) // echoed, as the bootstrap would answer
		default:
			t.Errorf("unexpected socket type %q", typ)
		}
	})
	addr := "tcp://" + ln.Addr().String()

	t.Run("salt REQ", func(t *testing.T) {
		req := zmq4.NewReq(ctx)
		defer req.Close()
		if err := req.Dial(addr); err != nil {
			t.Fatal(err)
		}
		for _, payload := range []string{"hello", "auth", "after"} {
			if err := req.Send(zmq4.NewMsgString(payload)); err != nil {
				t.Fatal(err)
			}
			wantFrames(t, recvWithin(t, req), "re:"+payload)
		}
		if authenticated.Load() != 1 {
			t.Fatalf("Accepted.Authenticated called %d times, want once", authenticated.Load())
		}
	})
	t.Run("brine DEALER", func(t *testing.T) {
		d := zmq4.NewDealer(ctx)
		defer d.Close()
		if err := d.Dial(addr); err != nil {
			t.Fatal(err)
		}
		select {
		case typ := <-bootstrap:
			if typ != "DEALER" {
				t.Fatalf("zmq4 after the handover: %s", typ)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no handshake")
		}
		if err := d.Send(zmq4.NewMsgFrom([]byte("corr"), []byte("master.pubkey"))); err != nil {
			t.Fatal(err)
		}
		wantFrames(t, recvWithin(t, d), "corr", "master.pubkey")
	})
}

func TestHandoverPublishPort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := NewPublisher(PublisherConfig{}, testLog(t))
	ln := listenLocal(t)
	gatewayStandIn(t, ctx, ln, func(raw net.Conn, br *bufio.Reader, deadline time.Time) {
		p.ServeConn(ctx, Accepted{Conn: raw, Reader: br, Sent: len(gatewayPrefix), Deadline: deadline})
	})
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial("tcp://" + ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, "broadcast"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the subscription", func() bool { return p.subscribedTo("broadcast") == 1 })
	p.Publish([]byte("broadcast"), []byte("load"))
	wantFrames(t, recvWithin(t, sub), "broadcast", "load")
}
