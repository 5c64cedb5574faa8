package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/saltzmq"
)

// TestSaltMinionsBesideBrine: with saltzmq's servers set, a Salt REQ and
// SUB share the request and publish ports with brine's key bootstrap, its
// operators and its watchers, each told apart by what it sends.
func TestSaltMinionsBesideBrine(t *testing.T) {
	b := openBus(t)
	reqs, err := saltzmq.NewRequestServer(saltzmq.RequestConfig{Handler: func(ctx context.Context, remote string, p []byte) ([]byte, error) {
		saltzmq.Authenticate(ctx)
		return append([]byte("salt:"), p...), nil
	}}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	pub := saltzmq.NewPublisher(saltzmq.PublisherConfig{}, quiet)
	srv := startServer(t, b, func(c *Config) { c.SaltRequests, c.SaltPublisher = reqs, pub })
	ctx := testContext(t)

	// brine's bootstrap (NULL DEALER) still gets the master's key.
	k, err := MasterKey(ctx, srv.RequestAddr())
	if err != nil {
		t.Fatalf("MasterKey: %v", err)
	}
	if k != srv.cfg.Keys.Public {
		t.Fatal("MasterKey returned another key")
	}

	// A Salt minion's REQ (NULL REQ) reaches the Salt handler.
	req := zmq4.NewReq(ctx)
	defer req.Close()
	if err := req.Dial("tcp://" + srv.RequestAddr()); err != nil {
		t.Fatal(err)
	}
	if err := req.Send(zmq4.NewMsgString("load")); err != nil {
		t.Fatal(err)
	}
	rep, err := req.Recv()
	if err != nil || string(rep.Frames[0]) != "salt:load" {
		t.Fatalf("Salt reply %q, %v", rep.Frames, err)
	}

	// An operator (CURVE DEALER) still publishes, and a CURVE watcher on
	// the publish port still sees it.
	c := dialClient(t, srv.RequestAddr(), testKey)
	got := make(chan string, 1)
	go c.Watch(ctx, srv.PublishAddr(), "test/*", bus.Since{}, func(ev *bus.Event) error {
		got <- ev.Tag
		return nil
	})
	waitWatchers(t, srv.Server, 1)
	if _, err := c.Publish(ctx, "test/salt", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case tag := <-got:
		if tag != "test/salt" {
			t.Fatalf("watcher got %q", tag)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher saw nothing")
	}

	// A Salt minion's SUB (NULL) goes to the Salt publisher.
	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial("tcp://" + srv.PublishAddr()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pub.Publish([]byte("job")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the Salt subscriber never subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	msg, err := sub.Recv()
	if err != nil || string(msg.Frames[0]) != "job" {
		t.Fatalf("Salt subscriber got %q, %v", msg.Frames, err)
	}
}
