package keys

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/function"
)

// clock is a settable time for the store's policy re-checks and flood bound.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a store on a real embedded bus, with the events it fires.
type env struct {
	s   *Store
	rec *bus.Recorder
	clk *clock
	bus *natsbus.Bus
}

func openBus(t *testing.T) *natsbus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// newEnv opens a store on b (a new bus when nil).
func newEnv(t *testing.T, b *natsbus.Bus, opts ...Option) *env {
	t.Helper()
	if b == nil {
		b = openBus(t)
	}
	kv, err := b.Bucket(testCtx(t), BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{rec: &bus.Recorder{}, clk: &clock{t: time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)}, bus: b}
	e.s = New(kv, bus.Emitter{Publisher: e.rec, Source: "brine://test/keys"}, opts...)
	e.s.now = e.clk.now
	return e
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// events returns "tag act id result" of the events fired since the last
// call.
func (e *env) events(seen *int) []string {
	evs := e.rec.Events()
	var out []string
	for _, ev := range evs[*seen:] {
		d, _ := ev.DataMap()
		out = append(out, fmt.Sprintf("%s %v %v %v", ev.Tag, d["act"], d["id"], d["result"]))
	}
	*seen = len(evs)
	return out
}

func (e *env) hello(t *testing.T, id, pub string, grains map[string]any) Result {
	t.Helper()
	r, err := e.s.Authenticate(testCtx(t), id, pub, grains)
	if err != nil {
		t.Fatalf("Authenticate(%s): %v", id, err)
	}
	return r
}

func (e *env) get(t *testing.T, id string) *Key {
	t.Helper()
	k, err := e.s.Get(testCtx(t), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return k
}

// TestAuthenticateTransitions walks one id through every hello outcome and
// salt-key action, checking the record, the result and the events fired
// (and not fired) at each step.
func TestAuthenticateTransitions(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	a, b, c := newPub(t), newPub(t), newPub(t)
	seen := 0
	steps := []struct {
		name      string
		do        func() (Result, error)
		act       string
		allowed   bool
		state     State // record's state after
		pub       string
		denied    []string
		events    []string
		resultSet bool
	}{
		{name: "unknown id is pending", do: hello(e, "web1", a), act: ActPend, state: Pending, pub: a,
			events: []string{"salt/auth pend web1 true"}},
		{name: "same key again: pending, repeat not fired", do: hello(e, "web1", a), act: ActPend, state: Pending, pub: a},
		{name: "another key for a pending id is denied", do: hello(e, "web1", b), act: ActDenied, state: Pending, pub: a,
			denied: []string{b}, events: []string{"salt/auth denied web1 false"}},
		{name: "accept moves pending to accepted", do: action(func() (Listing, error) { return e.s.Accept(ctx, "web*", false, false) }),
			state: Accepted, pub: a, denied: []string{b}, events: []string{"salt/key accept web1 true"}},
		{name: "accepted key says hello", do: hello(e, "web1", a), act: ActAccept, allowed: true, state: Accepted, pub: a,
			denied: []string{b}, events: []string{"salt/auth accept web1 true"}},
		{name: "accepted again: accept events are never held back", do: hello(e, "web1", a), act: ActAccept, allowed: true,
			state: Accepted, pub: a, denied: []string{b}, events: []string{"salt/auth accept web1 true"}},
		{name: "an impostor is denied; the accepted key stays", do: hello(e, "web1", c), act: ActDenied, state: Accepted, pub: a,
			denied: []string{b, c}, events: []string{"salt/auth denied web1 false"}},
		{name: "reject without include_accepted leaves it", do: action(func() (Listing, error) { return e.s.Reject(ctx, "web1", false, false) }),
			state: Accepted, pub: a, denied: []string{b, c}},
		{name: "reject with include_accepted", do: action(func() (Listing, error) { return e.s.Reject(ctx, "web1", true, false) }),
			state: Rejected, pub: a, denied: []string{b, c}, events: []string{"salt/key reject web1 true"}},
		{name: "rejected whatever key it presents", do: hello(e, "web1", b), act: ActReject, state: Rejected, pub: a,
			denied: []string{b, c}, events: []string{"salt/auth reject web1 false"}},
		{name: "accept without include_rejected leaves it", do: action(func() (Listing, error) { return e.s.Accept(ctx, "web1", false, false) }),
			state: Rejected, pub: a, denied: []string{b, c}},
		{name: "accept include_denied takes the first denied key", do: action(func() (Listing, error) { return e.s.Accept(ctx, "web1", false, true) }),
			state: Accepted, pub: b, events: []string{"salt/key accept web1 true"}},
		{name: "the old key is now another key: denied", do: hello(e, "web1", a), act: ActDenied, state: Accepted, pub: b,
			denied: []string{a}, events: []string{"salt/auth denied web1 false"}},
		{name: "delete removes every state", do: action(func() (Listing, error) { return e.s.Delete(ctx, "web1") }),
			events: []string{"salt/key delete web1 true", "salt/key delete web1 true"}},
		{name: "after delete the id starts over", do: hello(e, "web1", c), act: ActPend, state: Pending, pub: c,
			events: []string{"salt/auth pend web1 true"}},
		{name: "reject a pending key", do: action(func() (Listing, error) { return e.s.Reject(ctx, "web1", false, false) }),
			state: Rejected, pub: c, events: []string{"salt/key reject web1 true"}},
		{name: "accept include_rejected", do: action(func() (Listing, error) { return e.s.Accept(ctx, "web1", true, false) }),
			state: Accepted, pub: c, events: []string{"salt/key accept web1 true"}},
		{name: "reject include_denied with nothing denied changes nothing", do: action(func() (Listing, error) { return e.s.Reject(ctx, "web1", false, true) }),
			state: Accepted, pub: c},
	}
	for _, st := range steps {
		res, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.act != "" && (res.Act != st.act || res.Allowed != st.allowed || res.ID != "web1" || res.Reason == "") {
			t.Errorf("%s: result %+v, want act %s allowed %v", st.name, res, st.act, st.allowed)
		}
		k, err := e.s.Get(ctx, "web1")
		switch {
		case st.state == "" && !errors.Is(err, ErrNotFound):
			t.Errorf("%s: Get = %+v, %v; want ErrNotFound", st.name, k, err)
		case st.state != "" && err != nil:
			t.Fatalf("%s: %v", st.name, err)
		case st.state != "" && (k.State != st.state || k.Pub != st.pub || !reflect.DeepEqual(k.Denied, st.denied)):
			t.Errorf("%s: record %s %q denied %q; want %s %q denied %q", st.name, k.State, k.Pub[:5], k.Denied, st.state, st.pub[:5], st.denied)
		}
		if got := e.events(&seen); !reflect.DeepEqual(got, st.events) {
			t.Errorf("%s: events %q, want %q", st.name, got, st.events)
		}
	}
	if len(e.rec.Events()) > 0 {
		ev := e.rec.Events()[0]
		if d, _ := ev.DataMap(); d["pub"] != a || ev.Source != "brine://test/keys" {
			t.Errorf("salt/auth data %v from %s, want the key presented", d, ev.Source)
		}
	}
}

func hello(e *env, id, pub string) func() (Result, error) {
	return func() (Result, error) { return e.s.Authenticate(context.Background(), id, pub, nil) }
}

func action(f func() (Listing, error)) func() (Result, error) {
	return func() (Result, error) { _, err := f(); return Result{}, err }
}

func TestAuthenticateRefusesBadInput(t *testing.T) {
	e := newEnv(t, nil)
	pub := newPub(t)
	for _, tc := range []struct {
		id, pub string
		want    error
		msg     string
	}{
		{"", pub, ErrInvalidID, "empty"},
		{"web/1", pub, ErrInvalidID, `'/'`},
		{"web1", "", ErrInvalidKey, "0 characters"},
		{"web1", "HelloWorld", ErrInvalidKey, "10 characters"},
		{"web1", strings.Repeat("~", 40), ErrInvalidKey, "is not Z85"},
	} {
		_, err := e.s.Authenticate(testCtx(t), tc.id, tc.pub, nil)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Authenticate(%q, %q) = %v, want %v mentioning %q", tc.id, tc.pub, err, tc.want, tc.msg)
		}
	}
	if n := len(e.rec.Events()); n != 0 {
		t.Errorf("refused hellos fired %d events", n)
	}
	if l, _ := e.s.List(testCtx(t)); len(l[ListPending]) != 0 {
		t.Errorf("refused hellos were recorded: %v", l)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPolicies: auto_accept, autosign_file, autoreject_file and
// autosign_grains_dir decide on new and pending keys, in Salt's file
// formats; accepted-by-policy keys fire no salt/key.
func TestPolicies(t *testing.T) {
	dir := t.TempDir()
	sign, reject, grains := filepath.Join(dir, "autosign.conf"), filepath.Join(dir, "autoreject.conf"), filepath.Join(dir, "grains")
	writeFile(t, sign, "# web servers sign themselves\nweb-*\n\n  db1  \ncache[0-9]+\n# web-bad\n")
	writeFile(t, reject, "# never\nweb-bad*\nevil\n")
	if err := os.Mkdir(grains, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(grains, "uuid"), "# asset uuids\n8f7d6b9a-0000-4000-8000-000000000001\n")
	writeFile(t, filepath.Join(grains, "role"), "builder\n")

	tests := []struct {
		name   string
		policy Policy
		id     string
		grains map[string]any
		act    string
		state  State
	}{
		{"nothing set: pending", Policy{AuthEvents: true}, "web-1", nil, ActPend, Pending},
		{"auto_accept", Policy{AutoAccept: true, AuthEvents: true}, "anything", nil, ActAccept, Accepted},
		{"autosign glob", Policy{AutosignFile: sign, AuthEvents: true}, "web-1", nil, ActAccept, Accepted},
		{"autosign exact, spaces trimmed", Policy{AutosignFile: sign, AuthEvents: true}, "db1", nil, ActAccept, Accepted},
		{"autosign regular expression", Policy{AutosignFile: sign, AuthEvents: true}, "cache42", nil, ActAccept, Accepted},
		{"autosign: a comment is not an entry", Policy{AutosignFile: sign, AuthEvents: true}, "db2", nil, ActPend, Pending},
		{"autoreject wins over autosign", Policy{AutosignFile: sign, AutorejectFile: reject, AuthEvents: true}, "web-bad1", nil, ActReject, Rejected},
		{"autoreject wins over auto_accept", Policy{AutoAccept: true, AutorejectFile: reject, AuthEvents: true}, "evil", nil, ActReject, Rejected},
		{"grains dir: listed uuid", Policy{AutosignGrainsDir: grains, AuthEvents: true}, "node7",
			map[string]any{"uuid": "8f7d6b9a-0000-4000-8000-000000000001"}, ActAccept, Accepted},
		{"grains dir: other value", Policy{AutosignGrainsDir: grains, AuthEvents: true}, "node8",
			map[string]any{"uuid": "00000000-0000-4000-8000-000000000000", "role": "web"}, ActPend, Pending},
		{"grains dir: a grain without a file", Policy{AutosignGrainsDir: grains, AuthEvents: true}, "node9",
			map[string]any{"os": "builder"}, ActPend, Pending},
		{"grains dir: second grain", Policy{AutosignGrainsDir: grains, AuthEvents: true}, "node10",
			map[string]any{"role": "builder"}, ActAccept, Accepted},
		{"grains dir: values compare as strings only", Policy{AutosignGrainsDir: grains, AuthEvents: true}, "node11",
			map[string]any{"role": []any{"builder"}}, ActPend, Pending},
		{"auth_events off", Policy{AutoAccept: true}, "quiet", nil, ActAccept, Accepted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			if err := e.s.SetPolicy(tc.policy); err != nil {
				t.Fatal(err)
			}
			res := e.hello(t, tc.id, newPub(t), tc.grains)
			if res.Act != tc.act || res.State != tc.state || e.get(t, tc.id).State != tc.state {
				t.Fatalf("hello: %+v, want %s (%s)", res, tc.act, tc.state)
			}
			var want []string
			if tc.policy.AuthEvents {
				want = []string{fmt.Sprintf("salt/auth %s %s %v", tc.act, tc.id, tc.act != ActReject)}
			}
			seen := 0
			if got := e.events(&seen); !reflect.DeepEqual(got, want) {
				t.Errorf("events %q, want %q (no salt/key for a policy's decision)", got, want)
			}
		})
	}
}

// TestPolicyFilesAreReread: an edited autosign or autoreject file applies
// to pending keys at their next hello, without a restart.
func TestPolicyFilesAreReread(t *testing.T) {
	dir := t.TempDir()
	sign, reject := filepath.Join(dir, "autosign"), filepath.Join(dir, "autoreject")
	writeFile(t, sign, "# nothing yet\n")
	writeFile(t, reject, "")
	e := newEnv(t, nil)
	if err := e.s.SetPolicy(Policy{AutosignFile: sign, AutorejectFile: reject, AuthEvents: true}); err != nil {
		t.Fatal(err)
	}
	a, b := newPub(t), newPub(t)
	if r := e.hello(t, "web-asg-1", a, nil); r.Act != ActPend {
		t.Fatalf("first hello: %+v", r)
	}
	e.hello(t, "web-asg-2", b, nil)
	writeFile(t, sign, "web-asg-*\n# more to come\n")
	writeFile(t, reject, "web-asg-2\n")
	e.clk.add(2 * recheckInterval)
	if r := e.hello(t, "web-asg-1", a, nil); r.Act != ActAccept || !r.Allowed {
		t.Errorf("after autosign_file listed it: %+v, want accepted", r)
	}
	if r := e.hello(t, "web-asg-2", b, nil); r.Act != ActReject {
		t.Errorf("after autoreject_file listed it: %+v, want rejected", r)
	}
	// A file that goes away matches nothing: new keys wait.
	if err := os.Remove(sign); err != nil {
		t.Fatal(err)
	}
	e.clk.add(2 * recheckInterval)
	if r := e.hello(t, "web-asg-3", newPub(t), nil); r.Act != ActPend {
		t.Errorf("with autosign_file gone: %+v, want pending", r)
	}
}

func TestSetPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	writeFile(t, open, "web*\n")
	if err := os.Chmod(open, 0o666); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	writeFile(t, notDir, "")
	e := newEnv(t, nil)
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{AutosignFile: filepath.Join(dir, "missing")}, "autosign_file: stat " + filepath.Join(dir, "missing") + ": no such file"},
		{Policy{AutorejectFile: filepath.Join(dir, "gone")}, "autoreject_file: stat " + filepath.Join(dir, "gone")},
		{Policy{AutosignGrainsDir: filepath.Join(dir, "nodir")}, "autosign_grains_dir: stat"},
		{Policy{AutosignGrainsDir: notDir}, "is not a directory"},
		{Policy{AutosignFile: dir}, "is a directory"},
		{Policy{AutosignFile: open}, "writable by its group or by everyone (mode 0666)"},
	} {
		err := e.s.SetPolicy(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetPolicy(%+v) = %v, want %q", tc.p, err, tc.want)
		}
		if pe, ok := errors.AsType[*PolicyError](err); !ok || !strings.HasPrefix(err.Error(), pe.Key) {
			t.Errorf("SetPolicy(%+v) = %v, want a PolicyError naming the option", tc.p, err)
		}
	}
	// The policy in force stays: the default, pending.
	if r := e.hello(t, "web1", newPub(t), nil); r.Act != ActPend {
		t.Errorf("after refused policies: %+v", r)
	}
}

// TestListingsAndMatches checks the shapes of Salt's key functions.
func TestListingsAndMatches(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	pubs := map[string]string{}
	for _, id := range []string{"Web2", "web1", "db1", "db2", "cache1"} {
		pubs[id] = newPub(t)
		e.hello(t, id, pubs[id], nil)
	}
	if _, err := e.s.Accept(ctx, "web*,Web*", false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Reject(ctx, "db2", false, false); err != nil {
		t.Fatal(err)
	}
	other, other2 := newPub(t), newPub(t)
	e.hello(t, "web1", other, nil)
	e.hello(t, "web1", other2, nil)

	all, err := e.s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := Listing{ListAccepted: {"web1", "Web2"}, ListDenied: {"web1"}, ListPending: {"cache1", "db1"}, ListRejected: {"db2"}}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("List = %v, want %v", all, want)
	}
	if l, _ := e.s.List(ctx, Rejected); !reflect.DeepEqual(l, Listing{ListRejected: {"db2"}}) {
		t.Errorf("List(rejected) = %v", l)
	}
	if l, _ := e.s.NameMatch(ctx, "web1"); !reflect.DeepEqual(l, Listing{ListAccepted: {"web1"}, ListDenied: {"web1"}}) {
		t.Errorf("NameMatch(web1) = %v", l)
	}
	if l, _ := e.s.NameMatch(ctx, "nothing*"); len(l) != 0 {
		t.Errorf("NameMatch(nothing*) = %v, want empty", l)
	}
	f, err := e.s.Finger(ctx, "web1")
	if err != nil {
		t.Fatal(err)
	}
	fp := func(pub string) string { s, _ := Fingerprint(pub); return s }
	wantF := map[string]map[string]any{
		ListAccepted: {"web1": fp(pubs["web1"])},
		ListDenied:   {"web1": []string{fp(other), fp(other2)}},
	}
	if !reflect.DeepEqual(f, wantF) {
		t.Errorf("Finger = %v, want %v", f, wantF)
	}
	p, _ := e.s.Print(ctx, "db*")
	if !reflect.DeepEqual(p, map[string]map[string]any{ListPending: {"db1": pubs["db1"]}, ListRejected: {"db2": pubs["db2"]}}) {
		t.Errorf("Print = %v", p)
	}
	// The dict forms act on the lists they name only.
	got, err := e.s.DeleteDict(ctx, Listing{ListDenied: {"web1"}})
	if err != nil || !reflect.DeepEqual(got, Listing{ListAccepted: {"web1"}}) {
		t.Errorf("DeleteDict(denied web1) = %v, %v", got, err)
	}
	if k := e.get(t, "web1"); k.State != Accepted || len(k.Denied) != 0 {
		t.Errorf("after deleting the denied keys: %+v", k)
	}
	// A denied key whose id's own key is deleted is a new key, not also a denied one.
	e.hello(t, "cache1", other, nil)
	if _, err := e.s.DeleteDict(ctx, Listing{ListPending: {"cache1"}}); err != nil {
		t.Fatal(err)
	}
	if r := e.hello(t, "cache1", other, nil); r.Act != ActPend {
		t.Errorf("after deleting cache1's key: %+v", r)
	}
	if k := e.get(t, "cache1"); k.Pub != other || len(k.Denied) != 0 {
		t.Errorf("cache1: %+v, want its old denied key as its pending key", k)
	}
	got, err = e.s.AcceptDict(ctx, Listing{ListPending: {"db*"}, ListRejected: {"db2"}}, false, false)
	// Salt's dict_match: each name given, under every list it matches now.
	if err != nil || !reflect.DeepEqual(got, Listing{ListAccepted: {"db*"}, ListRejected: {"db*", "db2"}}) {
		t.Errorf("AcceptDict = %v, %v", got, err)
	}
	if _, err := e.s.AcceptDict(ctx, Listing{"minions_bogus": {"x"}}, false, false); err == nil || !strings.Contains(err.Error(), `no key list "minions_bogus"`) {
		t.Errorf("AcceptDict with a bad list = %v", err)
	}
	got, err = e.s.RejectDict(ctx, Listing{ListAccepted: {"db1"}}, true, false)
	if err != nil || !reflect.DeepEqual(got, Listing{ListRejected: {"db1"}}) {
		t.Errorf("RejectDict = %v, %v", got, err)
	}
	if _, err := e.s.Get(ctx, "bad id"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Get(bad id) = %v", err)
	}
	if _, err := e.s.List(ctx, "weird"); err == nil {
		t.Error("List(weird state) is not an error")
	}
}

func TestAcceptKeyPreseeds(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	pub := newPub(t)
	if err := e.s.AcceptKey(ctx, "web9", pub); err != nil {
		t.Fatal(err)
	}
	if r := e.hello(t, "web9", pub, nil); !r.Allowed {
		t.Errorf("preseeded key: %+v", r)
	}
	seen := 0
	if got := e.events(&seen); !reflect.DeepEqual(got, []string{"salt/auth accept web9 true"}) {
		t.Errorf("events %q: a preseeded key fires no salt/key", got)
	}
	if err := e.s.AcceptKey(ctx, "web9", "short"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("AcceptKey(bad key) = %v", err)
	}
}

// TestWatchSeesOtherStores: two masters' stores on one bucket see each
// other's changes; a watcher learns at once that a key was accepted,
// denied, rejected and deleted.
func TestWatchSeesOtherStores(t *testing.T) {
	one := newEnv(t, nil)
	two := newEnv(t, one.bus)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	changes := make(chan Change, 64)
	done := make(chan error, 1)
	go func() { done <- two.s.Watch(ctx, func(c Change) { changes <- c }) }()
	next := func(what string) Change {
		t.Helper()
		select {
		case c := <-changes:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no change seen", what)
		}
		return Change{}
	}
	if c := next("sync"); !c.Synced {
		t.Fatalf("first change %+v, want Synced", c)
	}
	pub := newPub(t)
	one.hello(t, "web1", pub, nil)
	if c := next("hello"); c.Key != "web1" || c.Value.State != Pending || c.Value.Allows(pub) {
		t.Errorf("after hello: %+v", c)
	}
	if _, err := two.s.Accept(ctx, "web1", false, false); err != nil {
		t.Fatal(err)
	}
	if c := next("accept"); !c.Value.Allows(pub) {
		t.Errorf("after accept: %+v", c.Value)
	}
	if r := one.hello(t, "web1", pub, nil); !r.Allowed {
		t.Errorf("the other master does not see the accept: %+v", r)
	}
	one.hello(t, "web1", newPub(t), nil)
	if c := next("denied"); len(c.Value.Denied) != 1 || !c.Value.Allows(pub) {
		t.Errorf("after a denied hello: %+v", c.Value)
	}
	if _, err := one.s.Reject(ctx, "web1", true, false); err != nil {
		t.Fatal(err)
	}
	if c := next("reject"); c.Value.State != Rejected || c.Value.Allows(pub) {
		t.Errorf("after reject: %+v", c.Value)
	}
	if _, err := one.s.Delete(ctx, "*"); err != nil {
		t.Fatal(err)
	}
	// Deleting the rejected key leaves the denied ones, then those go.
	for c := next("delete"); c.Value != nil; c = next("delete") {
		if c.Value.Allows(pub) {
			t.Errorf("during delete: %+v", c.Value)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch = %v", err)
	}
}

// TestConcurrentHellosLoseNothing: masters racing on one id record one
// pending key and every other key as denied.
func TestConcurrentHellosLoseNothing(t *testing.T) {
	one := newEnv(t, nil)
	two := newEnv(t, one.bus)
	const n = 8
	pubs := make([]string, n)
	for i := range pubs {
		pubs[i] = newPub(t)
	}
	var wg sync.WaitGroup
	for i, pub := range pubs {
		wg.Go(func() {
			s := one.s
			if i%2 == 1 {
				s = two.s
			}
			if _, err := s.Authenticate(context.Background(), "race", pub, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	k := one.get(t, "race")
	if k.State != Pending || len(k.Denied) != n-1 {
		t.Fatalf("record %s with %d denied, want pending with %d", k.State, len(k.Denied), n-1)
	}
	all := append([]string{k.Pub}, k.Denied...)
	for _, pub := range pubs {
		if !strings.Contains(strings.Join(all, " "), pub) {
			t.Errorf("key %s lost", pub[:5])
		}
	}
}

func TestDeniedKeysAreBounded(t *testing.T) {
	e := newEnv(t, nil)
	e.hello(t, "web1", newPub(t), nil)
	var last string
	for range maxDenied + 5 {
		last = newPub(t)
		e.hello(t, "web1", last, nil)
	}
	k := e.get(t, "web1")
	if len(k.Denied) != maxDenied || k.Denied[maxDenied-1] != last {
		t.Errorf("%d denied keys kept (newest last: %v), want %d", len(k.Denied), k.Denied[len(k.Denied)-1] == last, maxDenied)
	}
}

// TestFloodIsBounded: a pending agent's repeated hellos fire one salt/auth
// per window, and a flood of new ids fires at most the burst and rate,
// with the rest counted as suppressed.
func TestFloodIsBounded(t *testing.T) {
	e := newEnv(t, nil, WithFloodLimit(time.Minute, 1, 5))
	pub := newPub(t)
	for range 20 {
		e.hello(t, "web1", pub, nil)
		e.clk.add(time.Second)
	}
	seen := 0
	if got := e.events(&seen); !reflect.DeepEqual(got, []string{"salt/auth pend web1 true"}) {
		t.Errorf("20 hellos in 20 s fired %q, want one pend", got)
	}
	e.clk.add(time.Minute)
	e.hello(t, "web1", pub, nil)
	if got := e.events(&seen); len(got) != 1 {
		t.Errorf("a hello after the window fired %q, want one pend", got)
	}
	// 30 new ids at once: the bucket (5, all spent by then or not) bounds them.
	for i := range 30 {
		e.hello(t, fmt.Sprintf("flood%d", i), newPub(t), nil)
	}
	if got := e.events(&seen); len(got) > 5 {
		t.Errorf("a flood of 30 new ids fired %d events, want at most the burst of 5", len(got))
	}
	st := e.s.Stats()
	if st.SuppressedRepeats != 19 || st.SuppressedRate < 25 || st.Suppressed() != st.SuppressedRepeats+st.SuppressedRate {
		t.Errorf("stats %+v, want 19 repeats and at least 25 over the rate", st)
	}
	// A flood never holds back accepted agents.
	if _, err := e.s.Accept(testCtx(t), "flood1", false, false); err != nil {
		t.Fatal(err)
	}
	k := e.get(t, "flood1")
	for range 3 {
		if r := e.hello(t, "flood1", k.Pub, nil); !r.Allowed {
			t.Fatalf("%+v", r)
		}
	}
	if got := e.events(&seen); len(got) != 4 { // salt/key accept + 3 salt/auth accept
		t.Errorf("accepted hellos during a flood fired %q", got)
	}
}

// TestLimiterMemoryIsBounded: however many ids say hello, the memory of
// recent attempts stays under maxTracked.
func TestLimiterMemoryIsBounded(t *testing.T) {
	l := newLimiter(time.Minute, 1e9, 1e9)
	now := time.Now()
	for i := range maxTracked * 3 {
		if !l.allow(now, fmt.Sprint("id", i), "k", ActPend) {
			t.Fatalf("attempt %d held back with an unlimited rate", i)
		}
	}
	if len(l.last) > maxTracked {
		t.Fatalf("%d attempts remembered, want at most %d", len(l.last), maxTracked)
	}
	// Once the window passed, the table is swept and fills again.
	now = now.Add(2 * time.Minute)
	l.allow(now, "late", "k", ActPend)
	if _, ok := l.last["late"]; !ok || len(l.last) != 1 {
		t.Errorf("after the window: %d remembered, late remembered: %v", len(l.last), ok)
	}
}

// TestFuncs calls the wheel functions through a registry, as reactions and
// `brine key` do: Salt's argument names and return shapes, salt/key events
// fired through the call (so they carry its cause).
func TestFuncs(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	reg := function.New()
	if err := reg.RegisterAll(e.s.Funcs()); err != nil {
		t.Fatal(err)
	}
	for _, f := range e.s.Funcs() {
		if !reg.Wheel(f.Name) {
			t.Errorf("%s is not a wheel function", f.Name)
		}
	}
	e.hello(t, "web1", newPub(t), nil)
	e.hello(t, "web2", newPub(t), nil)
	var fired []string
	fire := func(_ context.Context, tag string, data map[string]any) error {
		fired = append(fired, fmt.Sprintf("%s %v %v", tag, data["act"], data["id"]))
		return nil
	}
	call := func(name string, args []any, kwargs map[string]any) any {
		t.Helper()
		out, err := reg.Call(ctx, name, args, kwargs, fire)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	if got := call("key.list", []any{"un"}, nil); !reflect.DeepEqual(got, Listing{ListPending: {"web1", "web2"}}) {
		t.Errorf("key.list un = %v", got)
	}
	if got := call("key.accept", nil, map[string]any{"match": "web1"}); !reflect.DeepEqual(got, Listing{ListAccepted: {"web1"}}) {
		t.Errorf("key.accept = %v", got)
	}
	if got := call("key.reject_dict", nil, map[string]any{"match": map[string]any{ListPending: []any{"web2"}}}); !reflect.DeepEqual(got, Listing{ListRejected: {"web2"}}) {
		t.Errorf("key.reject_dict = %v", got)
	}
	if got := call("key.list_all", nil, nil); !reflect.DeepEqual(got, Listing{ListAccepted: {"web1"}, ListDenied: {}, ListPending: {}, ListRejected: {"web2"}}) {
		t.Errorf("key.list_all = %v", got)
	}
	if got := call("key.name_match", []any{"web*"}, nil); !reflect.DeepEqual(got, Listing{ListAccepted: {"web1"}, ListRejected: {"web2"}}) {
		t.Errorf("key.name_match = %v", got)
	}
	if got := call("key.finger", []any{"web1"}, nil).(map[string]map[string]any); len(got[ListAccepted]["web1"].(string)) != 95 {
		t.Errorf("key.finger = %v", got)
	}
	if got := call("key.delete", []any{"web*"}, nil); !reflect.DeepEqual(got, Listing{}) {
		t.Errorf("key.delete = %v", got)
	}
	want := []string{"salt/key accept web1", "salt/key reject web2", "salt/key delete web1", "salt/key delete web2"} // accepted keys first, as salt-key lists them
	if !reflect.DeepEqual(fired, want) {
		t.Errorf("fired %q, want %q", fired, want)
	}
	for _, tc := range []struct {
		name   string
		args   []any
		kwargs map[string]any
		want   string
	}{
		{"key.list", []any{"foo"}, nil, `no key state "foo"`},
		{"key.accept", nil, nil, `argument "match": missing argument`},
		{"key.accept", nil, map[string]any{"match": "x", "include_accepted": true}, `argument "include_accepted": unexpected argument`},
		{"key.finger", []any{"*", "md5"}, nil, "agent key fingerprints are sha256"},
		{"key.delete_dict", nil, map[string]any{"match": map[string]any{"minions_x": []any{"a"}}}, `no key list "minions_x"`},
	} {
		if _, err := reg.Call(ctx, tc.name, tc.args, tc.kwargs, fire); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s(%v %v) = %v, want %q", tc.name, tc.args, tc.kwargs, err, tc.want)
		}
	}
}

func TestStatesNamed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []State
	}{
		{"pre", []State{Pending}}, {"un", []State{Pending}}, {"unaccepted", []State{Pending}},
		{"acc", []State{Accepted}}, {"accepted", []State{Accepted}}, {"rej", []State{Rejected}},
		{"rejected", []State{Rejected}}, {"den", []State{Denied}}, {"denied", []State{Denied}}, {"all", States},
	} {
		if got, err := StatesNamed(tc.in); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("StatesNamed(%q) = %v, %v", tc.in, got, err)
		}
	}
	if _, err := StatesNamed("foo-acc"); err == nil {
		t.Error("StatesNamed(foo-acc) is not an error")
	}
}

// TestChosenAndDictCall: what salt-key shows before "Proceed?" is the
// glob's keys in the states the act takes keys from, and the call that
// follows names exactly those, with the act's own include flags.
func TestChosenAndDictCall(t *testing.T) {
	found := Listing{ListAccepted: {"a1"}, ListPending: {"p1", "p2"}, ListRejected: {"r1"}, ListDenied: {"d1"}}
	for _, tc := range []struct {
		act                string
		other, denied      bool
		chosen             Listing
		fun                string
		include1, include2 string
	}{
		{act: ActAccept, chosen: Listing{ListPending: {"p1", "p2"}},
			fun: "key.accept_dict", include1: "include_rejected", include2: "include_denied"},
		{act: ActAccept, other: true, denied: true,
			chosen: Listing{ListPending: {"p1", "p2"}, ListRejected: {"r1"}, ListDenied: {"d1"}},
			fun:    "key.accept_dict", include1: "include_rejected", include2: "include_denied"},
		{act: ActReject, other: true, chosen: Listing{ListPending: {"p1", "p2"}, ListAccepted: {"a1"}},
			fun: "key.reject_dict", include1: "include_accepted", include2: "include_denied"},
		{act: ActDelete, chosen: found, fun: "key.delete_dict"},
	} {
		chosen := Chosen(found, From(tc.act, tc.other, tc.denied))
		if !reflect.DeepEqual(chosen, tc.chosen) {
			t.Errorf("%s other=%v denied=%v: chosen %v, want %v", tc.act, tc.other, tc.denied, chosen, tc.chosen)
		}
		fun, kwargs := DictCall(tc.act, chosen, tc.other, tc.denied)
		want := map[string]any{"match": chosen}
		if tc.include1 != "" {
			want[tc.include1], want[tc.include2] = tc.other, tc.denied
		}
		if fun != tc.fun || !reflect.DeepEqual(kwargs, want) {
			t.Errorf("%s: DictCall = %s %v, want %s %v", tc.act, fun, kwargs, tc.fun, want)
		}
	}
	if got := Chosen(Listing{ListAccepted: {"a1"}}, From(ActAccept, false, false)); len(got) != 0 {
		t.Errorf("an accept of accepted keys chose %v", got)
	}
}

// TestPendingKeysAreBounded: past max_pending_keys a new id's hello is
// turned away with a reason (salt/auth reject, result False) and nothing
// is stored; an id already pending or accepted, or one the policy accepts,
// still gets its answer; deleting old pending keys makes room.
func TestPendingKeysAreBounded(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.s.SetPolicy(Policy{AuthEvents: true, MaxPending: 3}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	pubs := map[string]string{}
	for _, id := range []string{"p1", "p2", "p3"} {
		pubs[id] = newPub(t)
		if r := e.hello(t, id, pubs[id], nil); r.Act != ActPend {
			t.Fatalf("%s: %+v", id, r)
		}
	}
	e.events(&seen)
	e.clk.add(time.Hour)
	_, err := e.s.Authenticate(testCtx(t), "p4", newPub(t), nil)
	if !errors.Is(err, ErrTooManyPending) || !strings.Contains(err.Error(), "max_pending_keys: 3") {
		t.Fatalf("fourth pending id: %v, want ErrTooManyPending naming max_pending_keys", err)
	}
	if k, err := e.s.Get(testCtx(t), "p4"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the turned-away id was stored: %+v, %v", k, err)
	}
	if got := e.events(&seen); len(got) != 1 || got[0] != "salt/auth reject p4 false" {
		t.Errorf("events = %v, want one salt/auth reject for p4", got)
	}
	// A pending id saying hello again is still answered.
	if r := e.hello(t, "p2", pubs["p2"], nil); r.Act != ActPend {
		t.Errorf("p2 again: %+v", r)
	}
	// Keys that waited long enough go; then there is room.
	e.clk.add(time.Hour)
	old, err := e.s.PendingOlderThan(testCtx(t), 90*time.Minute)
	if err != nil || !reflect.DeepEqual(old, Listing{ListPending: {"p1", "p2", "p3"}}) {
		t.Fatalf("PendingOlderThan(90m) = %v, %v", old, err)
	}
	if old, _ := e.s.PendingOlderThan(testCtx(t), 3*time.Hour); len(old[ListPending]) != 0 {
		t.Errorf("PendingOlderThan(3h) = %v, want none", old)
	}
	if _, err := e.s.DeleteDict(testCtx(t), Listing{ListPending: {"p1"}}); err != nil {
		t.Fatal(err)
	}
	if r := e.hello(t, "p4", newPub(t), nil); r.Act != ActPend {
		t.Errorf("p4 after a deletion: %+v", r)
	}
}
