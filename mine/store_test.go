package mine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/target"
)

// openStore opens an embedded bus in a temporary directory and the mine on it.
func openStore(t *testing.T) (*Store, *natsbus.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	kv, err := b.Bucket(ctx, BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	return New(kv), b
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStorePutGetConflict(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	if _, err := s.Get(ctx, "web1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing host = %v, want ErrNotFound", err)
	}
	h := &Host{ID: "web1", IPs: []string{"10.0.0.5"}}
	if err := s.Put(ctx, h); err != nil {
		t.Fatal(err)
	}
	first := h.Revision
	if first == 0 || h.Updated.IsZero() {
		t.Fatalf("Put left revision %d, updated %v", first, h.Updated)
	}
	// A second creator loses.
	if err := s.Put(ctx, &Host{ID: "web1"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("creating an existing host = %v, want ErrConflict", err)
	}
	// Two writers read revision 1; the second write is refused.
	a, _ := s.Get(ctx, "web1")
	b, _ := s.Get(ctx, "web1")
	a.FQDN = "web1.a.test"
	b.FQDN = "web1.b.test"
	if err := s.Put(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, b); !errors.Is(err, ErrConflict) {
		t.Fatalf("write at a stale revision = %v, want ErrConflict", err)
	}
	got, err := s.Get(ctx, "web1")
	if err != nil || got.FQDN != "web1.a.test" || got.Revision != a.Revision {
		t.Fatalf("Get = %+v, %v; want the first writer's record at revision %d", got, err, a.Revision)
	}
	if _, err := s.Get(ctx, "bad id"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Get(bad id) = %v, want ErrInvalidID", err)
	}
	existed, err := s.Delete(ctx, "web1")
	if err != nil || !existed {
		t.Fatalf("Delete = %v, %v", existed, err)
	}
	if existed, _ := s.Delete(ctx, "web1"); existed {
		t.Error("second Delete reported an existing host")
	}
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List after delete = %v, %v", list, err)
	}
}

func TestUpdateConcurrentWritersLoseNothing(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("w%d.k%d", w, i)
				_, err := s.Update(ctx, Write{ID: "shared", Source: "test", Mutate: func(h *Host) error {
					return h.Set(key, int64(i))
				}})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h, err := s.Get(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Data) != writers*each {
		t.Fatalf("record holds %d values, want %d: concurrent writers clobbered each other", len(h.Data), writers*each)
	}
}

func TestUpdateOrdersEventWritesByLogPosition(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	set := func(fqdn string) func(*Host) error {
		return func(h *Host) error { h.FQDN = fqdn; return nil }
	}
	if _, err := s.Update(ctx, Write{ID: "web1", Seq: 20, Mutate: set("new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, Write{ID: "web1", Seq: 10, Mutate: set("old")}); !errors.Is(err, ErrStale) {
		t.Fatalf("write from an older event = %v, want ErrStale", err)
	}
	// The same event again (a redelivery) applies: writes are idempotent.
	if _, err := s.Update(ctx, Write{ID: "web1", Seq: 20, Mutate: set("new")}); err != nil {
		t.Fatalf("redelivered event: %v", err)
	}
	// A runner call (no log position) neither is stale nor moves the position.
	h, err := s.Update(ctx, Write{ID: "web1", Mutate: set("runner")})
	if err != nil || h.FQDN != "runner" || h.Seq != 20 {
		t.Fatalf("runner write = %+v, %v; want fqdn runner at seq 20", h, err)
	}
	if _, err := s.Update(ctx, Write{ID: "web1", Seq: 15, Mutate: set("old")}); !errors.Is(err, ErrStale) {
		t.Fatalf("older event after a runner write = %v, want ErrStale", err)
	}
	h, err = s.Update(ctx, Write{ID: "web1", Seq: 30, Mutate: set("newer")})
	if err != nil || h.FQDN != "newer" || h.Seq != 30 {
		t.Fatalf("newer event = %+v, %v", h, err)
	}
	if got, _ := s.Get(ctx, "web1"); got.Seq != 30 || got.Updated.IsZero() {
		t.Fatalf("stored record %+v, want seq 30 and an update time", got)
	}
}

func TestWatch(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	if err := s.Put(ctx, &Host{ID: "old"}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	changes := make(chan Change, 16)
	done := make(chan error, 1)
	go func() { done <- s.Watch(wctx, func(c Change) { changes <- c }) }()
	next := func() Change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(20 * time.Second):
			t.Fatal("no change from Watch")
		}
		return Change{}
	}
	if c := next(); c.ID != "old" || c.Host == nil {
		t.Fatalf("first change %+v, want the stored record", c)
	}
	if c := next(); !c.Synced {
		t.Fatalf("second change %+v, want Synced", c)
	}
	if err := s.Put(ctx, &Host{ID: "new", IPs: []string{"10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if c := next(); c.ID != "new" || c.Host == nil || c.Host.IPs[0] != "10.0.0.1" {
		t.Fatalf("change %+v, want the new record", c)
	}
	if _, err := s.Delete(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if c := next(); c.ID != "old" || c.Host != nil {
		t.Fatalf("change %+v, want the removal of old", c)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Watch returned %v after its context ended", err)
	}
}

func cloudEvent(t *testing.T, name, task string, data map[string]any) *bus.Event {
	t.Helper()
	d := map[string]any{"name": name}
	for k, v := range data {
		d[k] = v
	}
	ev, err := bus.NewEvent("salt/cloud/"+name+"/"+task, d, bus.Origin{Source: "brine://test/cloud"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestApplyCloudLifecycle(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	apply := func(ev *bus.Event) {
		t.Helper()
		if err := s.Apply(ctx, ev); err != nil {
			t.Fatalf("%s: %v", ev.Tag, err)
		}
	}
	// salt-cloud's order: creating … waiting_for_ssh (ip) … deploy_script (host) … created.
	apply(cloudEvent(t, "web1", "creating", map[string]any{"event": "starting create", "profile": "p", "provider": "aws:ec2", "driver": "ec2"}))
	if _, err := s.Get(ctx, "web1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("creating added the host: %v", err)
	}
	apply(cloudEvent(t, "web1", "waiting_for_ssh", map[string]any{"event": "waiting for ssh", "ip_address": "10.1.0.5"}))
	apply(cloudEvent(t, "web1", "deploy_script", map[string]any{"event": "web1 has been deployed at 10.1.0.5", "host": "10.1.0.5"}))
	apply(cloudEvent(t, "web1", "created", map[string]any{
		"event": "created instance", "profile": "web", "provider": "aws:ec2", "driver": "ec2",
		"instance_id": "i-0abc", "ip_address": "10.1.0.5", "private_ips": []any{"10.1.0.5"},
		"public_ips": []any{"198.51.100.7"}, "macs": []any{"0A:00:00:00:00:01"}, "fqdn": "web1.cloud.test",
	}))
	h, err := s.Get(ctx, "web1")
	if err != nil {
		t.Fatal(err)
	}
	want := &Host{ID: "web1", FQDN: "web1.cloud.test", IPs: []string{"10.1.0.5", "198.51.100.7"},
		MACs: []string{"0a:00:00:00:00:01"}, Provider: "aws:ec2", Driver: "ec2", InstanceID: "i-0abc",
		Grains: map[string]any{"salt-cloud": map[string]any{"driver": "ec2", "profile": "web", "provider": "aws:ec2"}},
		Source: "salt/cloud/web1/created", Updated: h.Updated, Revision: h.Revision}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("record\n%+v\nwant\n%+v", h, want)
	}
	// A created event without addresses (most salt-cloud drivers) keeps those known.
	apply(cloudEvent(t, "db1", "waiting_for_ssh", map[string]any{"ip_address": "10.1.0.9"}))
	apply(cloudEvent(t, "db1", "created", map[string]any{"event": "created instance", "provider": "vc:vmware"}))
	if h, _ := s.Get(ctx, "db1"); h == nil || !reflect.DeepEqual(h.IPs, []string{"10.1.0.9"}) {
		t.Fatalf("db1 = %+v, want the address from waiting_for_ssh", h)
	}
	// A network created by a driver is not a host.
	apply(cloudEvent(t, "net", "created", map[string]any{"event": "created network"}))
	if _, err := s.Get(ctx, "net"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a network became a host: %v", err)
	}

	// Events carry their log position when read from the bus: an older
	// created event redelivered after a newer one changes nothing.
	newer := cloudEvent(t, "web1", "created", map[string]any{"event": "created instance", "ip_address": "10.1.0.6"})
	newer.Seq = 50
	apply(newer)
	older := cloudEvent(t, "web1", "created", map[string]any{"event": "created instance", "private_ips": []any{"10.1.0.99"}})
	older.Seq = 40
	if err := s.Apply(ctx, older); !errors.Is(err, ErrStale) {
		t.Fatalf("older created after a newer one = %v, want ErrStale", err)
	}
	if h, _ := s.Get(ctx, "web1"); h == nil || slices.Contains(h.IPs, "10.1.0.99") || !slices.Contains(h.IPs, "10.1.0.6") || h.Seq != 50 {
		t.Fatalf("web1 = %+v after a stale event", h)
	}
	apply(cloudEvent(t, "web1", "destroyed", map[string]any{"event": "destroyed instance"}))
	if _, err := s.Get(ctx, "web1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("destroyed host still in the mine: %v", err)
	}
	// Destroying an unknown host is not an error.
	apply(cloudEvent(t, "ghost", "destroyed", map[string]any{"event": "destroyed instance"}))
}

func TestApplyBadEvents(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		tag  string
		data map[string]any
		want string
	}{
		{"salt/cloud/web1/created", map[string]any{"name": "web1", "private_ips": 7}, `field "private_ips"`},
		{"salt/cloud/web1/created", map[string]any{"name": 7}, `field "name"`},
		{"salt/cloud/x/created", map[string]any{"name": "bad name"}, `field "name"`},
		{"salt/cloud/web1/created", map[string]any{"name": "web1", "grains": "x"}, `field "grains"`},
		{UpdateTag, map[string]any{"fqdn": "x"}, `field "id" is required`},
		{UpdateTag, map[string]any{"id": "web1", "colour": "red"}, `unknown field "colour"`},
		{UpdateTag, map[string]any{"id": "web1", "ips": 5}, `field "ips"`},
		{DeleteTag, map[string]any{}, `field "id" is required`},
	} {
		ev, err := bus.NewEvent(tc.tag, tc.data, bus.Origin{})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Apply(ctx, ev)
		if !errors.Is(err, ErrBadEvent) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want ErrBadEvent naming %s", tc.tag, tc.data, err, tc.want)
		}
	}
}

func TestFollowKeepsMineCurrent(t *testing.T) {
	s, b := openStore(t)
	ctx := testCtx(t)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Follow(fctx, b, "brine://test/mine", nil) }()
	defer func() { stop(); <-done }()

	var errEvents []*bus.Event
	var mu sync.Mutex
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: ErrorTag}, func(ev *bus.Event) {
		mu.Lock()
		errEvents = append(errEvents, ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()

	publish := func(ev *bus.Event) {
		t.Helper()
		if err := b.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	publish(cloudEvent(t, "web1", "created", map[string]any{"event": "created instance", "private_ips": []any{"10.1.0.5"}}))
	upd, _ := bus.NewEvent(UpdateTag, map[string]any{"id": "agent7", "ips": []any{"10.1.0.7"}, "grains": map[string]any{"role": "db"}}, bus.Origin{})
	publish(upd)
	bad := cloudEvent(t, "web2", "created", map[string]any{"event": "created instance", "macs": 12})
	publish(bad)

	waitFor(t, func() bool {
		h1, err1 := s.Get(ctx, "web1")
		h2, err2 := s.Get(ctx, "agent7")
		return err1 == nil && err2 == nil && h1.IPs[0] == "10.1.0.5" && h2.Grains["role"] == "db"
	})
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(errEvents) == 1 })
	mu.Lock()
	rep := errEvents[0]
	mu.Unlock()
	data, _ := rep.DataMap()
	if rep.Cause != bad.ID || data["tag"] != bad.Tag || !strings.Contains(fmt.Sprint(data["error"]), `field "macs"`) {
		t.Fatalf("error event %s %s, want one caused by %s naming field macs", rep.Cause, rep.Data, bad.ID)
	}

	publish(cloudEvent(t, "web1", "destroyed", map[string]any{"event": "destroyed instance"}))
	del, _ := bus.NewEvent(DeleteTag, map[string]any{"id": "agent7"}, bus.Origin{})
	publish(del)
	waitFor(t, func() bool {
		_, err1 := s.Get(ctx, "web1")
		_, err2 := s.Get(ctx, "agent7")
		return errors.Is(err1, ErrNotFound) && errors.Is(err2, ErrNotFound)
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunnerFunctions(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	reg := function.NewWithBuiltins()
	if err := reg.RegisterAll(s.Funcs()); err != nil {
		t.Fatal(err)
	}
	if !reg.ReadOnly("mine.get") || reg.ReadOnly("mine.update") {
		t.Fatal("mine.get must be read-only (callable from templates) and mine.update not")
	}
	call := func(name string, kwargs map[string]any) any {
		t.Helper()
		out, err := reg.Call(ctx, name, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s(%v): %v", name, kwargs, err)
		}
		return out
	}
	call("mine.update", map[string]any{"id": "web1", "ips": []any{"10.0.0.1", "fd00::1"}, "macs": "00:50:56:aa:bb:01", "grains": map[string]any{"role": "web"}})
	call("mine.update", map[string]any{"id": "web2", "ips": "10.0.0.2", "grains": map[string]any{"role": "web"}})
	call("mine.update", map[string]any{"id": "db1", "ips": []any{"10.0.0.3"}, "grains": map[string]any{"role": "db"}})
	call("mine.send", map[string]any{"id": "db1", "fun": "disk.usage", "value": map[string]any{"/": int64(42)}})

	for _, tc := range []struct {
		kwargs map[string]any
		want   map[string]any
	}{
		{map[string]any{"tgt": "web*", "fun": "network.ip_addrs"},
			map[string]any{"web1": []string{"10.0.0.1"}, "web2": []string{"10.0.0.2"}}},
		{map[string]any{"tgt": "*", "fun": "network.ip_addrs6"},
			map[string]any{"web1": []string{"fd00::1"}}},
		{map[string]any{"tgt": "web1", "fun": "network.ip_addrs"}, // a glob naming one host
			map[string]any{"web1": []string{"10.0.0.1"}}},
		{map[string]any{"tgt": "web1,web1,no such", "fun": "network.ip_addrs", "tgt_type": "list"},
			map[string]any{"web1": []string{"10.0.0.1"}}},
		{map[string]any{"tgt": "db1,web2", "fun": "network.ip_addrs", "tgt_type": "list"},
			map[string]any{"db1": []string{"10.0.0.3"}, "web2": []string{"10.0.0.2"}}},
		{map[string]any{"tgt": "role:db", "fun": "disk.usage", "expr_form": "grain"},
			map[string]any{"db1": map[string]any{"/": int64(42)}}},
		{map[string]any{"tgt": `web[12]$`, "fun": "network.hw_addr", "tgt_type": "pcre"},
			map[string]any{"web1": "00:50:56:aa:bb:01"}},
		{map[string]any{"tgt": "web1", "fun": "network.ip_addrs,macs"},
			map[string]any{"network.ip_addrs": map[string]any{"web1": []string{"10.0.0.1"}}, "macs": map[string]any{"web1": []string{"00:50:56:aa:bb:01"}}}},
	} {
		got := call("mine.get", tc.kwargs)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("mine.get(%v) = %#v\nwant %#v", tc.kwargs, got, tc.want)
		}
	}
	if _, err := reg.Call(ctx, "mine.get", nil, map[string]any{"tgt": "x", "tgt_type": "range"}, nil); !errors.Is(err, target.ErrTarget) {
		t.Errorf("range target: %v, want ErrTarget", err)
	}
	if _, err := reg.Call(ctx, "mine.update", nil, map[string]any{"id": "web1", "ips": 5}, nil); err == nil || !strings.Contains(err.Error(), `field "ips"`) {
		t.Errorf("mine.update with ips=5: %v, want an error naming ips", err)
	}
	if _, err := reg.Call(ctx, "mine.send", nil, map[string]any{"id": "web1", "fun": "id", "value": "x"}, nil); !errors.Is(err, ErrReadOnlyField) {
		t.Errorf("mine.send to id: %v, want ErrReadOnlyField", err)
	}
	if got := call("mine.delete", map[string]any{"id": "db1", "fun": "disk.usage"}); got != true {
		t.Errorf("mine.delete of a function = %v", got)
	}
	if got := call("mine.get", map[string]any{"tgt": "db1", "fun": "disk.usage"}); len(got.(map[string]any)) != 0 {
		t.Errorf("disk.usage still there: %v", got)
	}
	if got := call("mine.delete", map[string]any{"id": "db1"}); got != true {
		t.Errorf("mine.delete = %v", got)
	}
	if got := call("mine.delete", map[string]any{"id": "db1", "fun": "disk.usage"}); got != false {
		t.Errorf("mine.delete of a function of a removed host = %v, want false", got)
	}
	if _, err := s.Get(ctx, "db1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("db1 after mine.delete: %v", err)
	}
	clr := call("mine.update", map[string]any{"id": "web1", "clear": true, "fqdn": "web1.x.test"}).(*Host)
	if clr.FQDN != "web1.x.test" || len(clr.IPs) != 0 || clr.Grains != nil {
		t.Errorf("clear=True kept old fields: %+v", clr)
	}
}

// stoppedWatcher is a mine whose watch ends at once, with err.
type stoppedWatcher struct{ err error }

func (w stoppedWatcher) Watch(context.Context, func(Change)) error { return w.err }

func TestFeedReportsOnlyAWatchThatStoppedEarly(t *testing.T) {
	_, failed := Feed(context.Background(), stoppedWatcher{errors.New("connection closed")})
	select {
	case err := <-failed:
		if err == nil || err.Error() != "connection closed" {
			t.Errorf("early stop reported as %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a watch that stopped early was not reported")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, failed = Feed(ctx, stoppedWatcher{})
	select {
	case err := <-failed:
		t.Errorf("a watch ended by its context was reported: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestApplyRefusesAgentsEvents: salt-cloud's events and the mine's own
// tags change the mine only when the master or an operator fired them. One
// an agent sent (its source says so, whatever the tag) is ErrBadEvent, and
// no host moves or disappears.
func TestApplyRefusesAgentsEvents(t *testing.T) {
	s, _ := openStore(t)
	ctx := testCtx(t)
	if err := s.Apply(ctx, cloudEvent(t, "a2", "created", map[string]any{"event": "created instance", "private_ips": []any{"10.1.0.2"}})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tag  string
		data map[string]any
	}{
		{"salt/cloud/a2/destroyed", map[string]any{"name": "a2", "event": "destroyed instance"}},
		{"salt/cloud/a2/created", map[string]any{"name": "a2", "event": "created instance", "private_ips": []any{"6.6.6.6"}}},
		{"salt/cloud/ghost/created", map[string]any{"name": "ghost", "event": "created instance", "private_ips": []any{"6.6.6.7"}}},
		{UpdateTag, map[string]any{"id": "a2", "ips": []any{"6.6.6.6"}}},
		{DeleteTag, map[string]any{"id": "a2"}},
	} {
		ev, err := bus.NewEvent(tc.tag, tc.data, bus.Origin{Source: bus.AgentSource("a1")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, ev); !errors.Is(err, ErrBadEvent) || !strings.Contains(err.Error(), "agent a1") {
			t.Errorf("%s from agent a1: err %v, want ErrBadEvent naming the agent", tc.tag, err)
		}
	}
	h, err := s.Get(ctx, "a2")
	if err != nil || !slices.Equal(h.IPs, []string{"10.1.0.2"}) {
		t.Errorf("a2 after agent a1's events = %+v, %v; want it unchanged at 10.1.0.2", h, err)
	}
	if _, err := s.Get(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an agent's created event made a host: %v", err)
	}
}
