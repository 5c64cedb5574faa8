package gateway

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/zmtp"
	"github.com/brinehq/brine/bus/natsbus"
)

func publishN(t testing.TB, ctx context.Context, b bus.Bus, n int, tag func(i int) string, data map[string]any) []*bus.Event {
	t.Helper()
	evs := make([]*bus.Event, n)
	for i := range n {
		d := map[string]any{"i": i}
		for k, v := range data {
			d[k] = v
		}
		ev, err := bus.NewEvent(tag(i), d, bus.Origin{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		evs[i] = ev
	}
	return evs
}

// checkInOrder verifies that got holds exactly want's ids, in order, each
// once, with increasing log positions.
func checkInOrder(t testing.TB, got []*bus.Event, want []string) {
	t.Helper()
	var prev uint64
	for i, ev := range got {
		if ev.Seq <= prev {
			t.Fatalf("event %d (%s) at position %d after position %d: duplicate or out of order", i, ev.Tag, ev.Seq, prev)
		}
		prev = ev.Seq
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("event %d is %s (%s), want %s", i, got[i].ID, got[i].Tag, want[i])
		}
	}
}

func TestSlowWatcherDroppedFastOneUnaffected(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	// A queue deep enough that the fast watcher rides out scheduling stalls
	// under -race, small enough that the slow one overflows it soon.
	srv := startServer(t, b, func(c *Config) { c.WatcherQueue = 256 })
	c := dialClient(t, srv.RequestAddr(), testKey)

	fast := newCollector()
	startWatch(t, c, srv.PublishAddr(), "", bus.Since{}, fast)
	// The slow watcher subscribes and never reads: its socket buffers fill,
	// then its queue at the master.
	if _, err := rawSub(t, srv.PublishAddr(), testKey, "app/"); err != nil {
		t.Fatal(err)
	}
	waitWatchers(t, srv.Server, 2)

	// Twice what the slow peer's kernel buffers and queue can hold.
	const n = 1000
	blob := strings.Repeat("x", 16<<10)
	var wantIDs []string
	published := make(chan error, 1)
	go func() {
		for i := range n {
			ev, err := bus.NewEvent(fmt.Sprintf("app/bulk/%d", i), map[string]any{"blob": blob}, bus.Origin{Source: "test"})
			if err == nil {
				err = b.Publish(ctx, ev)
			}
			if err != nil {
				published <- err
				return
			}
			wantIDs = append(wantIDs, ev.ID)
		}
		published <- nil
	}()
	if err := <-published; err != nil {
		t.Fatal(err)
	}

	// The fast watcher gets every bulk event, and the dropped event.
	evs := fast.waitFor(t, 90*time.Second, "all bulk events and the dropped event", func(evs []*bus.Event) bool {
		bulk, dropped := 0, false
		for _, ev := range evs {
			bulk += btoi(strings.HasPrefix(ev.Tag, "app/bulk/"))
			dropped = dropped || ev.Tag == DroppedTag
		}
		return bulk == n && dropped
	})
	var bulk []*bus.Event
	var slowDropped map[string]any
	for _, ev := range evs {
		switch {
		case strings.HasPrefix(ev.Tag, "app/bulk/"):
			bulk = append(bulk, ev)
		case ev.Tag == DroppedTag:
			data, err := ev.DataMap()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(data["subscriptions"]) == "[app/]" {
				slowDropped = data
			}
		}
	}
	checkInOrder(t, bulk, wantIDs)
	if slowDropped == nil {
		t.Fatal("no dropped event names the slow watcher (subscribed to app/)")
	}
	if !strings.HasPrefix(fmt.Sprint(slowDropped["remote"]), "127.0.0.1:") || !strings.Contains(fmt.Sprint(slowDropped["reason"]), "not reading") {
		t.Fatalf("dropped event data = %v", slowDropped)
	}
	srv.wmu.RLock()
	defer srv.wmu.RUnlock()
	for w := range srv.watchers {
		if w.wants("app/bulk/0") && !w.wants("other") {
			t.Fatal("the slow watcher is still connected")
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWatchSinceReplaysThenFollowsLive(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)

	tag := func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf("other/%d", i)
		}
		return fmt.Sprintf("test/ev/%d", i)
	}
	// Stored before the watch starts; the watch resumes after the 30th.
	before := publishN(t, ctx, b, 300, tag, nil)
	since := bus.Since{AfterID: before[29].ID}

	// Publishing goes on while the watch replays and switches to live.
	var (
		mu    sync.Mutex
		after []*bus.Event
	)
	done := make(chan error, 1)
	start := make(chan struct{})
	go func() {
		<-start
		for i := 300; i < 900; i++ {
			ev, err := bus.NewEvent(tag(i), map[string]any{"i": i}, bus.Origin{Source: "test"})
			if err == nil {
				err = b.Publish(ctx, ev)
			}
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			after = append(after, ev)
			mu.Unlock()
		}
		done <- nil
	}()
	col := newCollector()
	close(start)
	startWatch(t, c, srv.PublishAddr(), "test/*", since, col)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	var want []string
	for _, ev := range append(before[30:], after...) {
		if strings.HasPrefix(ev.Tag, "test/") {
			want = append(want, ev.ID)
		}
	}
	got := col.waitFor(t, 60*time.Second, "every matching event", atLeast(len(want)))
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive now
	checkInOrder(t, col.snapshot(), want)
	if got[0].ID != before[31].ID {
		t.Fatalf("first replayed event %s, want the first match after the since id", got[0].Tag)
	}
}

func TestReplayPages(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)
	evs := publishN(t, ctx, b, 25, func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("app/%d/a", i)
		}
		return fmt.Sprintf("app/%d/b", i)
	}, nil)

	var rep ReplayReply
	if err := c.Call(ctx, "replay", ReplayRequest{Pattern: "app/*/a", AfterSeq: natsbus.Position(2, 0), Limit: 4}, &rep); err != nil {
		t.Fatal(err)
	}
	// Messages 3..25 hold i = 2..24; "a" is even i: messages 3, 5, 7, 9.
	if len(rep.Events) != 4 || rep.Events[0].Seq != natsbus.Position(3, 0) || rep.Events[3].Seq != natsbus.Position(9, 0) || rep.LastSeq != natsbus.Position(9, 0) || rep.Done || rep.Head != natsbus.Position(25, 0) {
		t.Fatalf("page 1: %+v", rep)
	}
	if rep.Events[0].Event.ID != evs[2].ID {
		t.Fatalf("page 1 starts with %s, want %s", rep.Events[0].Event.ID, evs[2].ID)
	}
	if err := c.Call(ctx, "replay", ReplayRequest{Pattern: "app/*/a", AfterSeq: rep.LastSeq, UntilSeq: natsbus.Position(14, 0)}, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Events) != 2 || rep.Events[0].Seq != natsbus.Position(11, 0) || rep.Events[1].Seq != natsbus.Position(13, 0) || rep.LastSeq != natsbus.Position(14, 0) || !rep.Done {
		t.Fatalf("page 2: %+v", rep)
	}
	// Past the head there is nothing, at once.
	if err := c.Call(ctx, "replay", ReplayRequest{AfterSeq: natsbus.Position(25, 0)}, &rep); err != nil || len(rep.Events) != 0 || !rep.Done {
		t.Fatalf("past the head: %v %+v", err, rep)
	}
	// A time after every event: nothing, and done.
	if err := c.Call(ctx, "replay", ReplayRequest{SinceTime: time.Now().Add(time.Hour)}, &rep); err != nil || len(rep.Events) != 0 || !rep.Done || rep.LastSeq != 0 {
		t.Fatalf("future time: %v %+v", err, rep)
	}
	err := c.Call(ctx, "replay", ReplayRequest{AfterID: "0193a000-0000-7000-8000-000000000000"}, &rep)
	if err == nil || !strings.Contains(err.Error(), "not in the log") {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	srv := startServer(t, b, nil)
	pubAddr, reqAddr := srv.PublishAddr(), srv.RequestAddr()
	c := dialClient(t, reqAddr, testKey)
	col := newCollector()
	startWatch(t, c, pubAddr, "app/*", bus.Since{}, col)
	waitWatchers(t, srv.Server, 1)

	id1, err := c.Publish(ctx, "app/one", nil)
	if err != nil {
		t.Fatal(err)
	}
	col.waitFor(t, 10*time.Second, "app/one", atLeast(1))

	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	// While the gateway is down the bus goes on.
	down := publishN(t, ctx, b, 1, func(int) string { return "app/while-down" }, nil)

	srv2 := startServer(t, b, func(cfg *Config) {
		cfg.PublishEndpoint = "tcp://" + pubAddr
		cfg.RequestEndpoint = "tcp://" + reqAddr
	})
	// The client reconnects by itself; the publish waits for it.
	id3, err := c.Publish(ctx, "app/three", nil)
	if err != nil {
		t.Fatal(err)
	}
	waitWatchers(t, srv2.Server, 1)
	evs := col.waitFor(t, 20*time.Second, "the events after the restart", atLeast(3))
	checkInOrder(t, evs, []string{id1, down[0].ID, id3})
}

func TestNoGoroutineLeftAfterRun(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	// Let the bus settle before counting.
	time.Sleep(100 * time.Millisecond)
	before := ownGoroutines()

	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)
	col := newCollector()
	stopWatch := startWatch(t, c, srv.PublishAddr(), "", bus.Since{AfterSeq: 0, Time: time.Unix(0, 0)}, col)
	raw, err := rawSub(t, srv.PublishAddr(), testKey, "app/")
	if err != nil {
		t.Fatal(err)
	}
	waitWatchers(t, srv.Server, 2)
	for i := range 50 {
		if _, err := c.Publish(ctx, "app/x", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	col.waitFor(t, 10*time.Second, "50 events", atLeast(50))
	// A connection that never completes its handshake.
	idle, err := net.Dial("tcp", srv.RequestAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	if err := stopWatch(); err != nil {
		t.Fatal(err)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	raw.Close()

	deadline := time.Now().Add(10 * time.Second)
	for {
		after := ownGoroutines()
		if after <= before {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines before, %d after Run returned:\n%s", before, after, buf[:n])
		}
		time.Sleep(50 * time.Millisecond)
	}
	// And none of those left is the gateway's.
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	if s := gatewayStacks(string(buf[:n])); s != "" {
		t.Fatalf("gateway goroutines left after Run returned:\n%s", s)
	}
}

// ownGoroutines counts the goroutines outside NATS: the bus's server keeps
// consumer goroutines for a while after a subscription stops, which is the
// bus's business, not the gateway's.
func ownGoroutines() int {
	buf := make([]byte, 4<<20)
	n := runtime.Stack(buf, true)
	count := 0
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !strings.Contains(g, "nats-io/") {
			count++
		}
	}
	return count
}

// gatewayStacks keeps the goroutine stacks that run server code of this
// package (not the test's own).
func gatewayStacks(all string) string {
	var keep []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "bus/gateway.(*Server)") || strings.Contains(g, "bus/gateway.(*peerConn)") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}

func TestIPCStaleSocketRemoved(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	dir, err := os.MkdirTemp("", "brine-ipc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pubPath, reqPath := filepath.Join(dir, "pub.ipc"), filepath.Join(dir, "req.ipc")
	// A crashed master leaves its socket files behind.
	for _, p := range []string{pubPath, reqPath} {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("stale socket not left behind: %v", err)
		}
	}
	srv := startServer(t, b, func(c *Config) {
		c.PublishEndpoint = "ipc://" + pubPath
		c.RequestEndpoint = "ipc://" + reqPath
	})
	if srv.RequestAddr() != "ipc://"+reqPath {
		t.Fatalf("RequestAddr = %q", srv.RequestAddr())
	}
	c := dialClient(t, srv.RequestAddr(), testKey)
	col := newCollector()
	startWatch(t, c, srv.PublishAddr(), "", bus.Since{}, col)
	waitWatchers(t, srv.Server, 1)
	id, err := c.Publish(ctx, "app/ipc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if evs := col.waitFor(t, 10*time.Second, "app/ipc", atLeast(1)); evs[0].ID != id {
		t.Fatalf("watched %s, want %s", evs[0].ID, id)
	}

	// A socket someone is listening on is not taken over.
	other, err := New(Config{Key: testKey, PublishEndpoint: "ipc://" + pubPath, RequestEndpoint: "ipc://" + filepath.Join(dir, "other.ipc")}, b, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Listen(); err == nil || !strings.Contains(err.Error(), "another process is listening") {
		t.Fatalf("Listen on a live socket: %v", err)
	}
}

func TestHandshakeLimits(t *testing.T) {
	b := openBus(t)
	srv := startServer(t, b, func(c *Config) { c.HandshakeTimeout = 300 * time.Millisecond })

	// A frame header announcing an exabyte is refused before allocation.
	conn, err := net.Dial("tcp", srv.PublishAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	greeting := make([]byte, zmtp.GreetingSize)
	greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
	copy(greeting[12:], "CURVE")
	hdr := []byte{zmtp.FlagLong | zmtp.FlagCommand}
	hdr = binary.BigEndian.AppendUint64(hdr, 1<<60)
	if _, err := conn.Write(append(greeting, hdr...)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, bufio.NewReader(conn)); err != nil {
		t.Fatalf("connection not closed by the master: %v", err)
	}

	// A peer that says nothing is dropped after HandshakeTimeout, and does
	// not hold up others meanwhile.
	silent, err := net.Dial("tcp", srv.RequestAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	c := dialClient(t, srv.RequestAddr(), testKey)
	if err := c.Call(testContext(t), "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, silent)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("silent connection still open after the handshake timeout")
	}
}

func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "master.key")
	key, err := EnsureKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 2*KeySize {
		t.Fatalf("key of %d characters, want %d hex digits", len(key), 2*KeySize)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := EnsureKey(path)
	if err != nil || string(again) != string(key) {
		t.Fatalf("EnsureKey on an existing file: %q %v, want the same key", again, err)
	}
	if err := os.WriteFile(path, []byte("  s3cret \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := LoadKey(path); err != nil || string(k) != "s3cret" {
		t.Fatalf("LoadKey = %q, %v", k, err)
	}
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("LoadKey of an empty file: %v", err)
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("LoadKey of a missing file succeeded")
	}
}

func TestSlowWatchHandlerLosesNothing(t *testing.T) {
	ctx := testContext(t)
	b := openBus(t)
	// The byte bound, not the count, cuts this watcher off.
	srv := startServer(t, b, func(c *Config) { c.WatcherQueue, c.QueueBytes = 1<<20, 256<<10 })
	c := dialClient(t, srv.RequestAddr(), testKey)
	saved := liveBuffer
	liveBuffer = 16
	t.Cleanup(func() { liveBuffer = saved })

	dropped := make(chan struct{})
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: DroppedTag}, func(*bus.Event) {
		select {
		case <-dropped:
		default:
			close(dropped)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()

	// The handler stalls on the first event until the master has dropped
	// this watcher, then takes everything at full speed.
	col := newCollector()
	stalled := false
	startWatchFunc(t, c, srv.PublishAddr(), "app/*", func(ev *bus.Event) error {
		if !stalled {
			stalled = true
			select {
			case <-dropped:
			case <-ctx.Done():
			}
		}
		return col.add(ev)
	})
	waitWatchers(t, srv.Server, 1)

	const n = 1200
	blob := strings.Repeat("y", 16<<10)
	evs := publishN(t, ctx, b, n, func(i int) string { return fmt.Sprintf("app/%d", i) }, map[string]any{"blob": blob})
	select {
	case <-dropped:
	case <-ctx.Done():
		t.Fatal("the stalled watcher was never dropped")
	}
	want := make([]string, n)
	for i, ev := range evs {
		want[i] = ev.ID
	}
	col.waitFor(t, 90*time.Second, "every event after the drop", atLeast(n))
	time.Sleep(100 * time.Millisecond)
	checkInOrder(t, col.snapshot(), want)
}

// startWatchFunc runs c.Watch with fn until the test ends.
func startWatchFunc(t testing.TB, c *Client, pubAddr, pattern string, fn func(*bus.Event) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Watch(ctx, pubAddr, pattern, bus.Since{}, fn) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("watch: %v", err)
		}
	})
}

func TestWatchFollowsAMasterWithANewLog(t *testing.T) {
	ctx := testContext(t)
	old := openBus(t)
	srv := startServer(t, old, nil)
	pubAddr, reqAddr := srv.PublishAddr(), srv.RequestAddr()
	c := dialClient(t, reqAddr, testKey)
	col := newCollector()
	startWatch(t, c, pubAddr, "app/*", bus.Since{}, col)
	waitWatchers(t, srv.Server, 1)
	if n := srv.Watchers(); n != 1 {
		t.Errorf("Watchers() = %d with one watch running", n)
	}
	publishN(t, ctx, old, 5, func(i int) string { return fmt.Sprintf("app/old/%d", i) }, nil)
	col.waitFor(t, 10*time.Second, "the old log's events", atLeast(5))
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	// The master comes back with an empty data directory: positions
	// restart at 1.
	fresh := openBus(t)
	srv2 := startServer(t, fresh, func(cfg *Config) {
		cfg.PublishEndpoint = "tcp://" + pubAddr
		cfg.RequestEndpoint = "tcp://" + reqAddr
	})
	waitWatchers(t, srv2.Server, 1)
	evs := publishN(t, ctx, fresh, 2, func(i int) string { return fmt.Sprintf("app/new/%d", i) }, nil)
	got := col.waitFor(t, 20*time.Second, "the new log's events", atLeast(7))
	if got[5].ID != evs[0].ID || got[6].ID != evs[1].ID || got[5].Seq != natsbus.Position(1, 0) {
		t.Fatalf("after the new log: %s@%d, %s@%d; want %s first and %s", got[5].Tag, got[5].Seq, got[6].Tag, got[6].Seq, evs[0].Tag, evs[1].Tag)
	}
}

// TestWatchCatchesUpWhatItsSubscriptionMissed: an event stored after a
// watch's catch-up but before the master registered its subscription is in
// neither; the watch catches up once more when the subscription has surely
// arrived, instead of waiting for a next live event that may never come.
func TestWatchCatchesUpWhatItsSubscriptionMissed(t *testing.T) {
	ctx := testContext(t)
	registerDelay = 800 * time.Millisecond
	t.Cleanup(func() { registerDelay = 0 })
	b := openBus(t)
	srv := startServer(t, b, nil)
	c := dialClient(t, srv.RequestAddr(), testKey)
	col := newCollector()
	startWatch(t, c, srv.PublishAddr(), "late/*", bus.Since{Time: time.Now()}, col)
	time.Sleep(300 * time.Millisecond) // the catch-up is over, the subscription not yet registered
	evs := publishN(t, ctx, b, 1, func(int) string { return "late/only" }, nil)
	got := col.waitFor(t, 5*time.Second, "the only event", atLeast(1))
	if got[0].ID != evs[0].ID {
		t.Fatalf("watched %s, want %s", got[0].ID, evs[0].ID)
	}
}
