package saltzmq

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/go-zeromq/zmq4"
)

func startPublisher(t *testing.T, cfg PublisherConfig) (*Publisher, string) {
	t.Helper()
	p := NewPublisher(cfg, testLog(t))
	return p, serve(t, p.Serve)
}

// recvWithin reads the next message of a zmq4 socket, failing after 5 s.
func recvWithin(t *testing.T, s zmq4.Socket) [][]byte {
	t.Helper()
	type result struct {
		msg zmq4.Msg
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := s.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("recv: %v", r.err)
		}
		return r.msg.Frames
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5 s")
		return nil
	}
}

func wantFrames(t *testing.T, got [][]byte, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// TestPublisherZMQ4 is SUB sockets of another ZMTP implementation
// (go-zeromq): everything to b"", prefixes matched on the first frame.
func TestPublisherZMQ4(t *testing.T) {
	p, addr := startPublisher(t, PublisherConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, topic := zmq4.NewSub(ctx), zmq4.NewSub(ctx)
	defer all.Close()
	defer topic.Close()
	for s, sub := range map[zmq4.Socket]string{all: "", topic: "abc"} {
		if err := s.Dial("tcp://" + addr); err != nil {
			t.Fatal(err)
		}
		if err := s.SetOption(zmq4.OptionSubscribe, sub); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both subscriptions", func() bool { return p.subscribedTo("") == 1 && p.subscribedTo("abc") == 1 })
	if n := p.Publish([]byte("hello")); n != 1 {
		t.Fatalf("Publish(hello) reached %d subscribers, want 1", n)
	}
	if n := p.Publish([]byte("abcd"), []byte("x")); n != 2 {
		t.Fatalf("Publish(abcd) reached %d subscribers, want 2", n)
	}
	if n := p.Publish([]byte("zzz"), []byte("y")); n != 1 {
		t.Fatalf("Publish(zzz) reached %d subscribers, want 1", n)
	}
	p.Publish([]byte("abc-end"))
	wantFrames(t, recvWithin(t, all), "hello")
	wantFrames(t, recvWithin(t, all), "abcd", "x")
	wantFrames(t, recvWithin(t, all), "zzz", "y")
	wantFrames(t, recvWithin(t, all), "abc-end")
	wantFrames(t, recvWithin(t, topic), "abcd", "x")
	wantFrames(t, recvWithin(t, topic), "abc-end")
}

// TestPublisherSubscriptions: ZMTP 3.1 SUBSCRIBE and CANCEL commands,
// 3.0 subscription messages, and PING.
func TestPublisherSubscriptions(t *testing.T) {
	p, addr := startPublisher(t, PublisherConfig{})
	s := dialRaw(t, addr, "SUB", 1)
	s.write(zmtp.EncodeCommand("SUBSCRIBE", []byte("t1")))
	eventually(t, "the SUBSCRIBE command", func() bool { return p.subscribedTo("t1") == 1 })
	if n := p.Publish([]byte("t1x"), []byte("a")); n != 1 {
		t.Fatalf("Publish reached %d", n)
	}
	got, _ := s.recv()
	wantFrames(t, got, "t1x", "a")

	s.write(zmtp.EncodeCommand("CANCEL", []byte("t1")))
	eventually(t, "the CANCEL command", func() bool { return p.subscribedTo("t1") == 0 })
	if n := p.Publish([]byte("t1x"), []byte("b")); n != 0 {
		t.Fatalf("Publish after CANCEL reached %d", n)
	}

	s.send([]byte("\x01t2"))
	eventually(t, "the subscription message", func() bool { return p.subscribedTo("t2") == 1 })
	s.send([]byte("\x00t2"))
	eventually(t, "the cancel message", func() bool { return p.subscribedTo("t2") == 0 })

	s.write(zmtp.EncodeCommand("PING", []byte{0, 5, 'p'}))
	got, cmd := s.recv()
	if !cmd {
		t.Fatalf("got message %q, want PONG", got)
	}
	wantFrames(t, got, "\x04PONGp")
	if p.Subscribers() != 1 {
		t.Fatalf("%d subscribers", p.Subscribers())
	}
}

// TestPublisherDropsSlow: a subscriber that does not read is disconnected
// once its queue is full; the others go on.
func TestPublisherDropsSlow(t *testing.T) {
	dropped := make(chan string, 1)
	p, addr := startPublisher(t, PublisherConfig{
		Queue: 8, QueueBytes: 256 << 10, WriteTimeout: time.Minute,
		OnDrop: func(remote, reason string) { dropped <- reason },
	})
	slow := dialRaw(t, addr, "SUB", 0)
	slow.send([]byte("\x01"))
	eventually(t, "the subscription", func() bool { return p.subscribedTo("") == 1 })
	big := make([]byte, 64<<10)
	deadline := time.After(20 * time.Second)
loop:
	for {
		p.Publish(big)
		select {
		case reason := <-dropped:
			t.Logf("dropped: %s", reason)
			break loop
		case <-deadline:
			t.Fatal("a subscriber that does not read was not dropped")
		default:
		}
	}
	eventually(t, "the subscriber to be gone", func() bool { return p.Subscribers() == 0 })
	if !slow.closedWithin(10 * time.Second) {
		t.Fatal("the dropped subscriber's connection is open")
	}
	fast := dialRaw(t, addr, "SUB", 0)
	fast.send([]byte("\x01"))
	eventually(t, "a new subscription", func() bool { return p.subscribedTo("") == 1 })
	p.Publish([]byte("after"))
	got, _ := fast.recv()
	wantFrames(t, got, "after")
}

func TestPublisherRefusals(t *testing.T) {
	p, addr := startPublisher(t, PublisherConfig{MaxSubscriptions: 2, MaxSubscribersPerAddr: 1})
	t.Run("REQ socket", func(t *testing.T) {
		c := dialOnly(t, addr)
		g := greeting(0)
		c.write(append(g[:], zmtp.EncodeCommand("READY", zmtp.Properties("Socket-Type", "REQ"))...))
		if !c.closedWithin(5 * time.Second) {
			t.Fatal("a REQ was served as a subscriber")
		}
	})
	t.Run("too many subscriptions", func(t *testing.T) {
		s := dialRaw(t, addr, "SUB", 0)
		for i := range 3 {
			s.send(fmt.Appendf([]byte{1}, "t%d", i))
		}
		if !s.closedWithin(5 * time.Second) {
			t.Fatal("a third subscription was taken")
		}
	})
	t.Run("too many from one address", func(t *testing.T) {
		eventually(t, "no subscribers", func() bool { return p.subLim.count() == 0 })
		first := dialRaw(t, addr, "SUB", 0)
		eventually(t, "the first subscriber", func() bool { return p.Subscribers() == 1 })
		second := dialRaw(t, addr, "SUB", 0)
		if !second.closedWithin(5 * time.Second) {
			t.Fatal("a second subscriber from one address was served")
		}
		first.send([]byte("\x01"))
		eventually(t, "the first one's subscription", func() bool { return p.subscribedTo("") == 1 })
	})
}
