package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
	"github.com/brinehq/brine/internal/syncbuf"
	"github.com/brinehq/brine/internal/testenv"
)

// acceptASG is the seed's reaction: accept the web servers of an
// autoscaling group as they come up.
const acceptASG = `{% if data['act'] == 'pend' and data['id'].startswith('web-asg-') %}
accept_minion:
  wheel.key.accept:
    - match: {{ data['id'] }}
{% endif %}
`

// Log lines of `brine agent` the tests wait for.
const (
	logAccepted = `msg="accepted by the master; agent started"`
	logWaiting  = `msg="the master has not accepted this agent's key yet; waiting`
	logLost     = `msg="connection to the master lost; reconnecting"`
	logRefused  = `msg="the master refuses this agent's key"`
)

// testAgent is a `brine agent` process with its own configuration
// directory (key pair in pki/, outbox in cache/), optionally in a network
// namespace.
type testAgent struct {
	t      *testing.T
	id     string
	dir    string
	netns  string
	env    []string // added to the agent process's environment
	cmd    *exec.Cmd
	log    *syncbuf.Buffer
	exited chan struct{}
	err    error
}

// newTestAgent writes the agent's minion file: master host and m's request
// port, short waits, extra appended (more minion keys).
func newTestAgent(t *testing.T, m *testMaster, id, host, extra string) *testAgent {
	t.Helper()
	_, port, err := net.SplitHostPort(m.reqAddr)
	if err != nil {
		t.Fatal(err)
	}
	a := &testAgent{t: t, id: id, dir: t.TempDir()}
	conf := fmt.Sprintf("master: %s\nmaster_port: %s\nid: %s\npki_dir: pki\ncachedir: cache\n"+
		"acceptance_wait_time: 1\nacceptance_wait_time_max: 2\nrandom_reauth_delay: 1\nlog_level: debug\n%s", host, port, id, extra)
	if err := os.WriteFile(filepath.Join(a.dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return a
}

// command is brine ARGS… as this agent's machine runs it.
func (a *testAgent) command(args ...string) *exec.Cmd {
	if a.netns != "" {
		return tied(exec.Command("ip", append([]string{"netns", "exec", a.netns, brineBin}, args...)...))
	}
	return tied(exec.Command(brineBin, args...))
}

// start runs `brine agent` until stop or the end of the test.
func (a *testAgent) start() *testAgent {
	a.t.Helper()
	a.log = new(syncbuf.Buffer)
	a.cmd = a.command("agent", "-c", a.dir)
	if a.env != nil {
		a.cmd.Env = append(os.Environ(), a.env...)
	}
	a.cmd.Stdout, a.cmd.Stderr = a.log, a.log
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.exited = make(chan struct{})
	go func() { a.err = a.cmd.Wait(); close(a.exited) }()
	a.t.Cleanup(func() {
		a.stop()
		if a.t.Failed() {
			a.t.Logf("agent %s (%s) log:\n%s", a.id, a.dir, a.log)
		}
	})
	return a
}

func (a *testAgent) stop() {
	if a.cmd == nil {
		return
	}
	select {
	case <-a.exited:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.exited
		a.t.Errorf("agent %s did not stop within 10s of SIGTERM", a.id)
	}
}

// waitLog waits until the agent's log holds s at least n times.
func (a *testAgent) waitLog(s string, n int) {
	a.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(a.log.String(), s) < n {
		select {
		case <-a.exited:
			a.t.Fatalf("agent %s exited (%v) before logging %q %d time(s):\n%s", a.id, a.err, s, n, a.log)
		default:
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("agent %s: %q not logged %d time(s) within 30s:\n%s", a.id, s, n, a.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call runs `brine call -c DIR ARGS…` and returns stdout, stderr and the
// exit code.
func (a *testAgent) call(args ...string) (string, string, int) {
	a.t.Helper()
	return runCmd(a.t, a.command(append([]string{"call", "-c", a.dir}, args...)...))
}

// queued counts the messages in the agent's outbox.
func (a *testAgent) queued() int {
	a.t.Helper()
	names, err := filepath.Glob(filepath.Join(a.dir, "cache", "outbox", "*.json"))
	if err != nil {
		a.t.Fatal(err)
	}
	return len(names)
}

// publicKey is the agent's public key as the master lists it.
func (a *testAgent) publicKey() string {
	a.t.Helper()
	kp, err := curve.LoadKeyPair(filepath.Join(a.dir, "pki"), "minion")
	if err != nil {
		a.t.Fatal(err)
	}
	return kp.Public.String()
}

// eventLog follows a master's events from a point in time, as `brine event
// watch --since` does, and keeps them for the test to search.
type eventLog struct {
	m    *testMaster
	mu   sync.Mutex
	evs  []*bus.Event
	err  error
	stop func()
}

func watchEvents(t *testing.T, m *testMaster, since time.Time) *eventLog {
	t.Helper()
	c := m.client()
	ctx, cancel := context.WithCancel(context.Background())
	l := &eventLog{m: m}
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := c.Watch(ctx, m.pubAddr, "", bus.Since{Time: since}, func(ev *bus.Event) error {
			l.mu.Lock()
			l.evs = append(l.evs, ev)
			l.mu.Unlock()
			return nil
		})
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
	}()
	var once sync.Once
	l.stop = func() { once.Do(func() { cancel(); <-done; c.Close() }) }
	t.Cleanup(l.stop)
	return l
}

// eventMatch tells whether an event (with its data decoded) is the one
// looked for.
type eventMatch func(ev *bus.Event, data map[string]any) bool

func tagIs(tag string, fields map[string]any) eventMatch {
	return func(ev *bus.Event, d map[string]any) bool {
		if ev.Tag != tag {
			return false
		}
		for k, v := range fields {
			if !reflect.DeepEqual(d[k], v) {
				return false
			}
		}
		return true
	}
}

func (l *eventLog) all(match eventMatch) ([]*bus.Event, []map[string]any) {
	l.mu.Lock()
	evs := slices.Clone(l.evs)
	l.mu.Unlock()
	var out []*bus.Event
	var datas []map[string]any
	for _, ev := range evs {
		d, err := ev.DataMap()
		if err != nil {
			d = map[string]any{}
		}
		if match(ev, d) {
			out = append(out, ev)
			datas = append(datas, d)
		}
	}
	return out, datas
}

func (l *eventLog) tags() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, ev := range l.evs {
		fmt.Fprintf(&b, "  %s %s\n", ev.Tag, ev.Data)
	}
	if l.err != nil {
		fmt.Fprintf(&b, "  (watch ended: %v)\n", l.err)
	}
	return b.String()
}

// wait returns the first event match accepts, waiting up to 30s.
func (l *eventLog) wait(t *testing.T, what string, match eventMatch) (*bus.Event, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if evs, ds := l.all(match); len(evs) > 0 {
			return evs[0], ds[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event %s within 30s; events seen:\n%s", what, l.tags())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sync publishes a marker event and waits for it: every event stored
// before this call is then in the log.
func (l *eventLog) sync(t *testing.T) {
	t.Helper()
	c := l.m.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := c.Publish(ctx, "test/agent/sync", nil)
	if err != nil {
		t.Fatalf("publishing the marker: %v", err)
	}
	l.wait(t, "test/agent/sync "+id, func(ev *bus.Event, _ map[string]any) bool { return ev.ID == id })
}

// keyList is `brine key -L --json`.
func keyList(t *testing.T, m *testMaster) map[string][]string {
	t.Helper()
	out, errs, code := m.run(nil, "key", "-L", "--json")
	var l map[string][]string
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
		t.Fatalf("brine key -L --json: exit %d: %s%s", code, out, errs)
	}
	return l
}

// manageUp is `brine run manage.up`'s return.
func manageUp(t *testing.T, m *testMaster) []string {
	t.Helper()
	out, errs, code := m.run(nil, "run", "manage.up", "--json")
	var res struct {
		Return []string `json:"return"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("brine run manage.up --json: exit %d: %s%s", code, out, errs)
	}
	return res.Return
}

var jidPattern = regexp.MustCompile(`^\d{20}$`)

// TestAgentKeysAndEvents runs a real master and real agents on loopback:
// acceptance by the seed's salt/auth reaction, salt-call's events in Salt's
// shape, reserved tags, an impostor denied, reject and delete cutting an
// agent off, master_finger and the recorded master key, and a master
// restart with events queued while it was down.
func TestAgentKeysAndEvents(t *testing.T) {
	m := newTestMaster(t)
	sls := filepath.Join(m.confDir, "accept_asg.sls")
	if err := os.WriteFile(sls, []byte(acceptASG), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("reactor:\n  - 'salt/auth':\n    - %s\n", sls)
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "agents.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)

	web1 := newTestAgent(t, m, "web-asg-1", "127.0.0.1", "").start()
	web2 := newTestAgent(t, m, "web-asg-2", "127.0.0.1", "").start()
	db1 := newTestAgent(t, m, "db-1", "127.0.0.1", "").start()

	ok := t.Run("reaction accepts web-asg agents, db-1 stays pending", func(t *testing.T) {
		for _, a := range []*testAgent{web1, web2} {
			a.waitLog(`msg="agent starting"`, 1)
			pub := a.publicKey()
			evs.wait(t, "salt/auth pend "+a.id, tagIs("salt/auth", map[string]any{"act": "pend", "id": a.id, "pub": pub, "result": true}))
			_, ret := evs.wait(t, "wheel.key.accept of "+a.id, func(ev *bus.Event, d map[string]any) bool {
				return strings.HasPrefix(ev.Tag, "salt/wheel/") && strings.HasSuffix(ev.Tag, "/ret") &&
					d["fun"] == "wheel.key.accept" && fmt.Sprint(d["fun_args"]) == "[map[match:"+a.id+"]]"
			})
			if ret["success"] != true || fmt.Sprint(ret["return"]) != "map[minions:["+a.id+"]]" {
				t.Errorf("the reaction's wheel.key.accept for %s returned %v", a.id, ret)
			}
			ev, d := evs.wait(t, "salt/minion/"+a.id+"/start", tagIs("salt/minion/"+a.id+"/start", nil))
			if d["cmd"] != "_minion_event" || d["id"] != a.id || !strings.HasPrefix(fmt.Sprint(d["data"]), "Minion "+a.id+" started at ") ||
				ev.Source != "agent://"+a.id {
				t.Errorf("start event of %s: source %q data %v", a.id, ev.Source, d)
			}
			evs.wait(t, "minion_start of "+a.id, tagIs("minion_start", map[string]any{"id": a.id}))
			// Accepted while connected: the same process, told at once.
			a.waitLog(logAccepted, 1)
			if l := a.log.String(); !strings.Contains(l, logWaiting) || strings.Contains(l, logLost) {
				t.Errorf("%s was not accepted on the connection it waited on:\n%s", a.id, l)
			}
		}
		evs.wait(t, "salt/auth pend db-1", tagIs("salt/auth", map[string]any{"act": "pend", "id": "db-1", "result": true}))
		db1.waitLog(logWaiting, 1)
		// db-1 says hello every 1-2s; give it two more.
		time.Sleep(2500 * time.Millisecond)
		l := keyList(t, m)
		if !slices.Equal(l["minions"], []string{"web-asg-1", "web-asg-2"}) || !slices.Equal(l["minions_pre"], []string{"db-1"}) {
			t.Errorf("brine key -L --json = %v; want web-asg-1 and web-asg-2 accepted, db-1 pending", l)
		}
		if started, _ := evs.all(tagIs("salt/minion/db-1/start", nil)); len(started) > 0 || strings.Contains(db1.log.String(), logAccepted) {
			t.Errorf("db-1 was accepted:\n%s", db1.log)
		}
		if up := manageUp(t, m); !slices.Equal(up, []string{"web-asg-1", "web-asg-2"}) {
			t.Errorf("manage.up = %v", up)
		}
	})
	if !ok {
		return
	}

	t.Run("salt-call event.send in Salt's shape", func(t *testing.T) {
		out, errs, code := web1.call("event.send", "instar/custom/event", `{"what": "something happened", "is it serious": true}`)
		if code != 0 || out != "local:\n    True\n" {
			t.Fatalf("brine call event.send: exit %d\n%s%s", code, out, errs)
		}
		if n := web1.queued(); n != 0 {
			t.Errorf("%d message(s) still queued after a delivered call", n)
		}
		ev, d := evs.wait(t, "instar/custom/event", tagIs("instar/custom/event", nil))
		if ev.Source != "agent://web-asg-1" || d["cmd"] != "_minion_event" || d["id"] != "web-asg-1" || d["tag"] != "instar/custom/event" {
			t.Errorf("event: source %q data %v", ev.Source, d)
		}
		data, _ := d["data"].(map[string]any)
		jid, _ := data["__pub_jid"].(string)
		pid, _ := data["__pub_pid"].(int64)
		if data["__pub_fun"] != "event.send" || !jidPattern.MatchString(jid) || pid <= 0 ||
			data["__pub_tgt"] != "salt-call" || data["what"] != "something happened" || data["is it serious"] != true || len(data) != 6 {
			t.Errorf("event data = %v; want __pub_fun, __pub_jid (20 digits), __pub_pid, __pub_tgt and the payload", data)
		}
		if jid == "" {
			t.FailNow()
		}
		// As Salt's master does with salt-call's return (jid "req"), the
		// master stores it under a jid of its own, with tgt and tgt_type.
		rev, r := evs.wait(t, "the return of web-asg-1's call", func(ev *bus.Event, d map[string]any) bool {
			return strings.HasSuffix(ev.Tag, "/ret/web-asg-1") && d["fun"] == "event.send"
		})
		wantArgs := []any{"instar/custom/event", map[string]any{"what": "something happened", "is it serious": true}}
		rjid, _ := r["jid"].(string)
		if r["cmd"] != "_return" || r["id"] != "web-asg-1" || !jidPattern.MatchString(rjid) || rev.Tag != "salt/job/"+rjid+"/ret/web-asg-1" ||
			r["tgt"] != "web-asg-1" || r["tgt_type"] != "glob" || !reflect.DeepEqual(r["arg"], wantArgs) ||
			!reflect.DeepEqual(r["fun_args"], wantArgs) || r["retcode"] != int64(0) || r["return"] != true || r["success"] != true {
			t.Errorf("return = %s %v", rev.Tag, r)
		}
	})

	t.Run("reserved tags are refused", func(t *testing.T) {
		for _, tag := range []string{"salt/job/123/ret/x", "salt/minion/other/start"} {
			args := []string{"event.send", tag}
			if strings.HasPrefix(tag, "salt/job/") {
				args = append(args, "{}")
			}
			out, errs, code := web1.call(args...)
			if code == 0 || !strings.Contains(errs, tag) ||
				!regexp.MustCompile(`(?i)reserved|only the master|another agent|refus`).MatchString(errs) {
				t.Errorf("brine call event.send %s: exit %d, stdout %q, stderr %q; want a failure naming the tag and the refusal", tag, code, out, errs)
			}
		}
		evs.sync(t)
		for _, tag := range []string{"salt/job/123/ret/x", "salt/minion/other/start"} {
			if found, _ := evs.all(tagIs(tag, nil)); len(found) > 0 {
				t.Errorf("%s reached the bus: %s", tag, found[0].Data)
			}
		}
		if n := web1.queued(); n != 0 {
			t.Errorf("%d refused message(s) left in the outbox", n)
		}
	})

	t.Run("an impostor with the same id is denied", func(t *testing.T) {
		imp := newTestAgent(t, m, "web-asg-1", "127.0.0.1", "").start()
		imp.waitLog(logRefused, 1)
		pub := imp.publicKey()
		if pub == web1.publicKey() {
			t.Fatal("the impostor has the same key")
		}
		evs.wait(t, "salt/auth denied", tagIs("salt/auth", map[string]any{"act": "denied", "id": "web-asg-1", "pub": pub, "result": false}))
		if !strings.Contains(imp.log.String(), "state=denied") {
			t.Errorf("the impostor's log does not say denied:\n%s", imp.log)
		}
		if l := keyList(t, m); !slices.Contains(l["minions"], "web-asg-1") || !slices.Equal(l["minions_denied"], []string{"web-asg-1"}) {
			t.Errorf("brine key -L --json = %v", l)
		}
		imp.stop()
		// The master applies key changes as it reads them back from the
		// bucket: give a wrongful cut-off time to happen.
		time.Sleep(time.Second)
		if up := manageUp(t, m); !slices.Contains(up, "web-asg-1") {
			t.Errorf("manage.up = %v: the legitimate web-asg-1 was cut off", up)
		}
		if l := web1.log.String(); strings.Contains(l, logLost) || strings.Count(l, logAccepted) != 1 {
			t.Errorf("the legitimate web-asg-1 lost its connection:\n%s", l)
		}
		if found, _ := evs.all(tagIs("salt/minion/web-asg-1/start", nil)); len(found) != 1 {
			t.Errorf("%d start events of web-asg-1, want 1", len(found))
		}
	})

	t.Run("accept, reject and delete", func(t *testing.T) {
		out, errs, code := m.run(nil, "key", "-a", "db-1", "-y")
		if code != 0 || !strings.Contains(out, "Key for minion db-1 accepted.") {
			t.Fatalf("brine key -a db-1 -y: exit %d\n%s%s", code, out, errs)
		}
		evs.wait(t, "salt/minion/db-1/start", tagIs("salt/minion/db-1/start", map[string]any{"id": "db-1"}))
		db1.waitLog(logAccepted, 1)
		if strings.Contains(db1.log.String(), logLost) {
			t.Errorf("db-1 reconnected to be accepted:\n%s", db1.log)
		}
		if up := manageUp(t, m); !slices.Contains(up, "db-1") {
			t.Errorf("manage.up = %v, want db-1", up)
		}

		out, errs, code = m.run(nil, "key", "-r", "db-1", "-y", "--include-accepted")
		rejected := time.Now()
		if code != 0 || !strings.Contains(out, "Key for minion db-1 rejected.") {
			t.Fatalf("brine key -r db-1 -y --include-accepted: exit %d\n%s%s", code, out, errs)
		}
		db1.waitLog(logLost, 1)
		if d := time.Since(rejected); d > 3*time.Second {
			t.Errorf("db-1 was cut off %v after its key was rejected", d)
		}
		db1.waitLog(logRefused, 1)
		if !strings.Contains(db1.log.String(), "state=rejected") {
			t.Errorf("db-1's log does not say rejected:\n%s", db1.log)
		}
		evs.wait(t, "salt/auth reject db-1", tagIs("salt/auth", map[string]any{"act": "reject", "id": "db-1", "result": false}))
		if up := manageUp(t, m); slices.Contains(up, "db-1") {
			t.Errorf("manage.up = %v still lists the rejected db-1", up)
		}

		deleted := time.Now()
		out, errs, code = m.run(nil, "key", "-d", "db-1", "-y")
		if code != 0 || !strings.Contains(out, "Key for minion db-1 deleted.") {
			t.Fatalf("brine key -d db-1 -y: exit %d\n%s%s", code, out, errs)
		}
		dnsmasqtest.WaitFor(t, "db-1 pending again after -d", func() (bool, string) {
			l := keyList(t, m)
			return slices.Equal(l["minions_pre"], []string{"db-1"}) && !slices.Contains(l["minions_rejected"], "db-1"), fmt.Sprint(l)
		})
		evs.wait(t, "salt/auth pend db-1 after the delete", func(ev *bus.Event, d map[string]any) bool {
			return ev.Tag == "salt/auth" && d["act"] == "pend" && d["id"] == "db-1" && !ev.Time.Before(deleted)
		})
		select {
		case <-db1.exited:
			t.Errorf("db-1 exited: %v", db1.err)
		default:
		}
	})

	t.Run("master_finger and the recorded master key", func(t *testing.T) {
		finger := curve.Fingerprint(gateway.MasterKeys(m.key()).Public)
		wrong := strings.Repeat("ab:", 31) + "ab"
		// The right fingerprint is a control: that agent gets as far as
		// pending.
		good := newTestAgent(t, m, "finger-ok", "127.0.0.1", "master_finger: '"+strings.ToUpper(finger)+"'\n").start()
		good.waitLog(logWaiting, 1)

		bad := newTestAgent(t, m, "finger-bad", "127.0.0.1", "master_finger: '"+wrong+"'\n")
		recorded := newTestAgent(t, m, "recorded-bad", "127.0.0.1", "")
		other, err := curve.GenerateKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(recorded.dir, "pki"), 0o700); err != nil {
			t.Fatal(err)
		}
		recordedFile := filepath.Join(recorded.dir, "pki", "minion_master.pub")
		if err := os.WriteFile(recordedFile, []byte(other.Public.String()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			a    *testAgent
			want []string
		}{
			{bad, []string{"master key mismatch", "fingerprint " + finger, "not master_finger " + wrong}},
			{recorded, []string{"master key mismatch", "does not hold the key recorded in", "minion_master.pub"}},
		} {
			start := time.Now()
			tc.a.start()
			select {
			case <-tc.a.exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("agent %s still running 20s after start:\n%s", tc.a.id, tc.a.log)
			}
			var ee *exec.ExitError
			if !errors.As(tc.a.err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("agent %s: exit %v after %v, want exit 1", tc.a.id, tc.a.err, time.Since(start))
			}
			l := tc.a.log.String()
			for _, w := range tc.want {
				if !strings.Contains(l, w) {
					t.Errorf("agent %s's output does not say %q:\n%s", tc.a.id, w, l)
				}
			}
			if strings.Contains(l, logWaiting) || strings.Contains(l, logAccepted) {
				t.Errorf("agent %s talked to the master:\n%s", tc.a.id, l)
			}
		}
		if b, _ := os.ReadFile(recordedFile); string(b) != other.Public.String()+"\n" {
			t.Errorf("the recorded master key was replaced: %q", b)
		}
		evs.sync(t)
		for _, id := range []string{"finger-bad", "recorded-bad"} {
			if found, _ := evs.all(tagIs("salt/auth", map[string]any{"id": id})); len(found) > 0 {
				t.Errorf("%s said hello: %s", id, found[0].Data)
			}
		}
		good.stop()
	})

	t.Run("events queued while the master is down are stored once", func(t *testing.T) {
		evs.stop()
		m.stop(syscall.SIGTERM)
		if !m.cmd.ProcessState.Success() {
			t.Errorf("master exited with %v after SIGTERM", m.cmd.ProcessState)
		}
		type sent struct {
			a *testAgent
			n int
		}
		var all []sent
		for i, a := range []*testAgent{web1, web1, web1, web2, web2} {
			n := i + 1
			out, errs, code := a.call("event.send", "app/x", fmt.Sprintf(`{"n": %d}`, n), "--timeout", "1s")
			if code != 0 || out != "local:\n    True\n" || !strings.Contains(errs, "not delivered yet") || !strings.Contains(errs, "queued") {
				t.Fatalf("brine call on %s while the master is down: exit %d\n%s%s", a.id, code, out, errs)
			}
			all = append(all, sent{a, n})
		}
		if q1, q2 := web1.queued(), web2.queued(); q1 != 6 || q2 != 4 {
			t.Errorf("queued: web-asg-1 %d, web-asg-2 %d; want 6 and 4 (events and returns)", q1, q2)
		}

		m.start()
		evs2 := watchEvents(t, m, t0)
		for _, a := range []*testAgent{web1, web2} {
			a.waitLog(logAccepted, 2)
		}
		dnsmasqtest.WaitFor(t, "outboxes delivered", func() (bool, string) {
			q1, q2 := web1.queued(), web2.queued()
			return q1 == 0 && q2 == 0, fmt.Sprintf("web-asg-1 %d, web-asg-2 %d queued", q1, q2)
		})
		evs2.sync(t)
		for _, s := range all {
			got, _ := evs2.all(func(ev *bus.Event, d map[string]any) bool {
				data, _ := d["data"].(map[string]any)
				return ev.Tag == "app/x" && d["id"] == s.a.id && data["n"] == int64(s.n)
			})
			if len(got) != 1 {
				t.Errorf("app/x n=%d from %s stored %d times, want once", s.n, s.a.id, len(got))
			}
			rets, _ := evs2.all(func(ev *bus.Event, d map[string]any) bool {
				args, _ := d["fun_args"].([]any)
				return strings.HasPrefix(ev.Tag, "salt/job/") && strings.HasSuffix(ev.Tag, "/ret/"+s.a.id) && len(args) == 2 &&
					args[0] == "app/x" && reflect.DeepEqual(args[1], map[string]any{"n": int64(s.n)})
			})
			if len(rets) != 1 {
				t.Errorf("return of event.send app/x n=%d from %s stored %d times, want once", s.n, s.a.id, len(rets))
			}
		}
		for _, id := range []string{"web-asg-1", "web-asg-2"} {
			if got, _ := evs2.all(tagIs("salt/minion/"+id+"/start", nil)); len(got) != 2 {
				t.Errorf("%d start events of %s, want 2 (before and after the restart)", len(got), id)
			}
		}
		if up := manageUp(t, m); !slices.Equal(up, []string{"web-asg-1", "web-asg-2"}) {
			t.Errorf("manage.up after the restart = %v", up)
		}
	})
}

// agentNet is a bridge in this namespace holding the master's address and
// one network namespace per agent, each joined to it by a veth pair.
type agentNet struct {
	hub   string   // the master's address
	ns    []string // the agents' namespaces
	addrs []string // their addresses
	links []string // their interfaces (inside the namespace)
}

func newAgentNet(t *testing.T, n int) *agentNet {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip not found: this test needs the Debian package iproute2 (make deps installs it)")
	}
	testenv.NeedRoot(t, "this test creates network namespaces and veth pairs and needs root (make test runs as root in CI)")
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id := hex.EncodeToString(b)
	// A /24 of 10.77.0.0/16 no interface here uses yet.
	have, err := exec.Command("ip", "-4", "-o", "addr").CombinedOutput()
	if err != nil {
		t.Fatalf("ip -4 addr: %v: %s", err, have)
	}
	octet := int(b[0])
	for strings.Contains(string(have), fmt.Sprintf(" 10.77.%d.", octet)) {
		octet = (octet + 1) % 256
	}
	bridge := "bab" + id
	an := &agentNet{hub: fmt.Sprintf("10.77.%d.1", octet)}
	var hostLinks []string
	t.Cleanup(func() {
		for _, ns := range an.ns {
			_ = exec.Command("ip", "netns", "del", ns).Run()
		}
		for _, l := range append(hostLinks, bridge) {
			_ = exec.Command("ip", "link", "del", l).Run()
		}
	})
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("link", "add", bridge, "type", "bridge")
	ip("addr", "add", an.hub+"/24", "dev", bridge)
	ip("link", "set", bridge, "up")
	for i := range n {
		ns := fmt.Sprintf("brine-agent-%s-%d", id, i+1)
		host, peer := fmt.Sprintf("bah%s%d", id, i+1), fmt.Sprintf("baa%s%d", id, i+1)
		addr := fmt.Sprintf("10.77.%d.%d", octet, i+2)
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("the kernel refuses network namespaces: ip netns add: %v: %s", err, out)
		}
		an.ns = append(an.ns, ns)
		ip("link", "add", host, "type", "veth", "peer", "name", peer)
		hostLinks = append(hostLinks, host)
		ip("link", "set", peer, "netns", ns)
		ip("link", "set", host, "master", bridge)
		ip("link", "set", host, "up")
		ip("-n", ns, "addr", "add", addr+"/24", "dev", peer)
		ip("-n", ns, "link", "set", peer, "up")
		ip("-n", ns, "link", "set", "lo", "up")
		an.addrs = append(an.addrs, addr)
		an.links = append(an.links, peer)
	}
	return an
}

// mac is the hardware address of the agent's interface i.
func (n *agentNet) mac(t *testing.T, i int) string {
	t.Helper()
	out, err := exec.Command("ip", "-n", n.ns[i], "-j", "link", "show", "dev", n.links[i]).Output()
	if err != nil {
		t.Fatalf("ip link show: %v", err)
	}
	var links []struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -j link show: %v: %s", err, out)
	}
	return links[0].Address
}

// TestAgentNetworkNamespaces runs two agents, each in its own network
// namespace with its own address, against a master listening on every
// interface here: they are accepted (auto_accept) and the mine holds each
// one's own address, grains and MAC.
func TestAgentNetworkNamespaces(t *testing.T) {
	n := newAgentNet(t, 2)
	m := newTestMaster(t)
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "agents.conf"), []byte("interface: 0.0.0.0\nauto_accept: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Second)
	m.start()
	evs := watchEvents(t, m, t0)
	var agents []*testAgent
	for i, ns := range n.ns {
		a := newTestAgent(t, m, fmt.Sprintf("ns-agent-%d", i+1), n.hub, "")
		a.netns = ns
		agents = append(agents, a.start())
	}
	want := map[string][]string{}
	for i, a := range agents {
		a.waitLog(logAccepted, 1)
		evs.wait(t, "salt/minion/"+a.id+"/start", tagIs("salt/minion/"+a.id+"/start", map[string]any{"id": a.id}))
		want[a.id] = []string{n.addrs[i]}
	}
	var got map[string][]string
	dnsmasqtest.WaitFor(t, "the mine holds both agents' addresses", func() (bool, string) {
		out, errs, code := m.run(nil, "mine", "get", "*", "network.ip_addrs", "--json")
		got = nil
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			return false, fmt.Sprintf("exit %d: %s%s", code, out, errs)
		}
		return len(got) == len(want), out
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("brine mine get '*' network.ip_addrs = %v, want %v", got, want)
	}
	for i, a := range agents {
		out, errs, code := m.run(nil, "mine", "get", a.id, "grains.items", "--json")
		var g map[string]struct {
			ID   string   `json:"id"`
			IPv4 []string `json:"ipv4"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &g) != nil {
			t.Fatalf("brine mine get %s grains.items: exit %d: %s%s", a.id, code, out, errs)
		}
		gr := g[a.id]
		slices.Sort(gr.IPv4)
		if wantIPv4 := []string{n.addrs[i], "127.0.0.1"}; gr.ID != a.id || !slices.Equal(gr.IPv4, wantIPv4) {
			t.Errorf("grains of %s: id %q ipv4 %v; want its own namespace's addresses 127.0.0.1 and %s", a.id, gr.ID, gr.IPv4, n.addrs[i])
		}
		mac := n.mac(t, i)
		out, errs, code = m.run(nil, "mine", "get", a.id, "macs", "--json")
		if code != 0 || strings.TrimSpace(out) != fmt.Sprintf(`{%q:[%q]}`, a.id, mac) {
			t.Errorf("brine mine get %s macs: exit %d: %s%s; want [%s]", a.id, code, out, errs, mac)
		}
		// salt-call in the namespace answers from that machine, too.
		out, errs, code = a.call("network.ip_addrs", "--json", "--local")
		if code != 0 || strings.TrimSpace(out) != fmt.Sprintf(`{"local":[%q]}`, n.addrs[i]) {
			t.Errorf("brine call network.ip_addrs in %s: exit %d: %s%s", a.where(), code, out, errs)
		}
	}
	if up := manageUp(t, m); !slices.Equal(up, []string{"ns-agent-1", "ns-agent-2"}) {
		t.Errorf("manage.up = %v", up)
	}
	// A job targeted by address reaches the agent on that network only,
	// and runs in its namespace.
	out, errs, code := m.run(nil, "exec", "-S", n.addrs[1]+"/32", "network.ip_addrs", "--json")
	if code != 0 || strings.TrimSpace(out) != fmt.Sprintf("{\n    %q: [\n        %q\n    ]\n}", "ns-agent-2", n.addrs[1]) {
		t.Errorf("brine exec -S %s/32 network.ip_addrs: exit %d\n%s%s", n.addrs[1], code, out, errs)
	}
}

func (a *testAgent) where() string {
	if a.netns == "" {
		return "this namespace"
	}
	return "namespace " + a.netns
}
