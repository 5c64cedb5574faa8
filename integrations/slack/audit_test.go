package slack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/jobs"
)

func run(t *testing.T, b bus.Bus, fun string, args []any, kwargs map[string]any, user string) jobs.Result {
	t.Helper()
	res, _ := jobs.Call(context.Background(), function.NewWithBuiltins(), b, fun, args, kwargs, user, bus.Origin{Source: "brine://test/run"})
	if res.JID == "" {
		t.Fatal("no job")
	}
	return res
}

func TestJobsPresetThreadsResults(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	startAudit(t, b, testConfig(t, f, nil))

	ok := run(t, b, "test.arg", []any{"hello"}, nil, "alice")
	bad := run(t, b, "test.exception", nil, map[string]any{"message": "disk full"}, "bob")
	jid := jobs.NewJID()
	publish(t, b, "salt/job/"+jid+"/new", map[string]any{"jid": jid, "tgt": "roles:nginx", "tgt_type": "grain", "fun": "cmd.run",
		"arg": []any{"nginx restart"}, "minions": []any{"web1", "web2"}, "user": "carol"})
	publish(t, b, "salt/job/"+jid+"/ret/web1", map[string]any{"cmd": "_return", "id": "web1", "jid": jid, "fun": "cmd.run",
		"fun_args": []any{"nginx restart"}, "return": "restarted", "retcode": 0, "success": true})
	publish(t, b, "salt/job/"+jid+"/ret/web2", map[string]any{"cmd": "_return", "id": "web2", "jid": jid, "fun": "cmd.run",
		"fun_args": []any{"nginx restart"}, "return": "nginx: [emerg] bad config", "retcode": 1, "success": false})

	msgs := f.waitMessages(t, 8, 90*time.Second)
	want := []struct {
		text, color, detail string
		parent              int // index of the thread parent, -1 for none
	}{
		{"`salt-run test.arg hello` by *alice* (jid " + ok.JID + ")", "", "", -1},
		{":white_check_mark: succeeded in", "good", "hello", 0},
		{"`salt-run test.exception message=&apos;disk full&apos;` by *bob*", "", "", -1},
		{":x: failed in", "danger", "Exception occurred in runner test.exception: disk full", 2},
		{"`salt -G roles:nginx cmd.run 'nginx restart'` by *carol* (jid " + jid + ")", "", "", -1},
		{":white_check_mark: *web1* succeeded in", "good", "restarted", 4},
		{":x: *web2* failed in", "danger", "nginx: [emerg] bad config", 4},
		// The job's last return closes its thread with a summary.
		{":checkered_flag: all 2 agents returned, 1 failed: web2", "danger", "", 4},
	}
	want[2].text = "`salt-run test.exception message='disk full'` by *bob* (jid " + bad.JID + ")"
	for i, w := range want {
		m := msgs[i]
		if !strings.HasPrefix(m.Text, w.text) || m.Color != w.color || !strings.Contains(m.Detail, w.detail) || m.Channel != "#audit" {
			t.Errorf("message %d:\n got %q color %q detail %q\nwant %q color %q detail ~%q", i, m.Text, m.Color, m.Detail, w.text, w.color, w.detail)
		}
		wantThread := ""
		if w.parent >= 0 {
			wantThread = msgs[w.parent].TS
		}
		if m.ThreadTS != wantThread {
			t.Errorf("message %d: thread %q, want %q\n%s", i, m.ThreadTS, wantThread, dump(msgs))
		}
	}
	if strings.Contains(msgs[6].Text, "retcode 1") == false {
		t.Errorf("minion failure shows no retcode: %q", msgs[6].Text)
	}
}

func TestLongCommandLineIsCut(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	startAudit(t, b, testConfig(t, f, nil))
	run(t, b, "test.arg", []any{strings.Repeat("x", 50000)}, nil, "alice")
	msgs := f.waitMessages(t, 2, 90*time.Second)
	if n := len([]rune(msgs[0].Text)); n > 600 || !strings.Contains(msgs[0].Text, "…") {
		t.Errorf("headline of %d characters", n)
	}
	if n := len([]rune(msgs[1].Detail)); n > DefaultExcerpt+20 {
		t.Errorf("excerpt of %d characters", n)
	}
}

func TestCloudPresetOneThreadPerLifecycle(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	startAudit(t, b, testConfig(t, f, func(c *Config) { c.Audit = []Rule{{Preset: PresetCloud, Channel: "#cloud"}} }))

	publish(t, b, "salt/cloud/web1/creating", map[string]any{"name": "web1", "profile": "web", "provider": "aws:ec2", "driver": "aws:ec2", "event": "starting create"})
	for _, task := range []string{"requesting", "querying", "waiting_for_ssh", "deploying"} {
		publish(t, b, "salt/cloud/web1/"+task, map[string]any{"event": task + " instance"})
	}
	publish(t, b, "salt/cloud/web1/created", map[string]any{"name": "web1", "instance_id": "i-0abc", "ip_address": "192.0.2.10",
		"event": "created instance", "password": "vm-root-pw"})
	publish(t, b, "salt/cloud/db1/creating", map[string]any{"name": "db1", "profile": "db"})
	publish(t, b, "salt/cloud/db1/requesting/failed", map[string]any{"name": "db1", "error": "quota exceeded"})
	publish(t, b, "salt/job/"+jobs.NewJID()+"/new", map[string]any{"fun": "test.ping"}) // not the cloud preset's

	msgs := f.waitMessages(t, 10, 90*time.Second)
	parent := msgs[0]
	if parent.Method != "chat.postMessage" || parent.ThreadTS != "" || !strings.Contains(parent.Text, "*web1*: creating (profile web, provider aws, driver ec2)") {
		t.Fatalf("parent %+v", parent)
	}
	for i := 1; i <= 5; i++ {
		if msgs[i].ThreadTS != parent.TS || msgs[i].Channel != "#cloud" {
			t.Errorf("step %d not in the thread: %+v", i, msgs[i])
		}
	}
	if !strings.Contains(msgs[1].Text, "`requesting` requesting instance") || msgs[5].Color != "good" {
		t.Errorf("steps:\n%s", dump(msgs))
	}
	upd := msgs[6]
	if upd.Method != "chat.update" || upd.TS != parent.TS || upd.Color != "good" ||
		!strings.Contains(upd.Text, "*web1*: created :white_check_mark: (ip_address 192.0.2.10, instance_id i-0abc") {
		t.Errorf("final state not edited into the parent: %+v", upd)
	}
	dbParent := msgs[7]
	if dbParent.ThreadTS != "" || msgs[8].ThreadTS != dbParent.TS || msgs[8].Color != "danger" ||
		!strings.Contains(msgs[8].Text, "failed at requesting: quota exceeded") {
		t.Errorf("failure:\n%s", dump(msgs))
	}
	if msgs[9].Method != "chat.update" || msgs[9].TS != dbParent.TS || msgs[9].Color != "danger" {
		t.Errorf("failure not edited into the parent: %+v", msgs[9])
	}
	for _, m := range msgs {
		if strings.Contains(m.Raw, "vm-root-pw") {
			t.Errorf("secret in %s", m.Raw)
		}
	}
}

func TestRuleConditions(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	startAudit(t, b, testConfig(t, f, func(c *Config) {
		c.Audit = []Rule{
			{Preset: PresetJobs, Fun: Strings{"state.*", "cmd.run"}, TgtNot: Strings{"saltmaster"}},
			{Tag: Strings{"myco/deploy/*"}, Text: "deployed {app} v{version} by {data[who][name]} ({tag}) {nope}", Color: "good", Channel: "#deploys"},
		}
	}))
	newJob := func(fun, tgt string) string {
		jid := jobs.NewJID()
		publish(t, b, "salt/job/"+jid+"/new", map[string]any{"jid": jid, "tgt": tgt, "tgt_type": "glob", "fun": fun, "arg": []any{}, "minions": []any{tgt}, "user": "root"})
		publish(t, b, "salt/job/"+jid+"/ret/"+tgt, map[string]any{"id": tgt, "jid": jid, "fun": fun, "return": true, "retcode": 0, "success": true})
		return jid
	}
	newJob("cmd.run", "saltmaster") // excluded by tgt_not
	newJob("test.ping", "web1")     // not selected by fun
	keep := newJob("state.apply", "web1")
	run(t, b, "test.arg", nil, nil, "alice") // runner job: fun runner.test.arg, not selected
	publish(t, b, "myco/deploy/web", map[string]any{"app": "web", "version": 42, "who": map[string]any{"name": "dana"}})

	f.waitMessages(t, 3, 90*time.Second)
	time.Sleep(500 * time.Millisecond)
	msgs := f.messages()
	if len(msgs) != 3 {
		t.Fatalf("want 3 messages (state.apply job + result, deploy):\n%s", dump(msgs))
	}
	if !strings.Contains(msgs[0].Text, "state.apply") || !strings.Contains(msgs[0].Text, keep) || msgs[1].ThreadTS != msgs[0].TS {
		t.Errorf("job messages:\n%s", dump(msgs))
	}
	if msgs[2].Text != "deployed web v42 by dana (myco/deploy/web) {nope}" || msgs[2].Channel != "#deploys" || msgs[2].Color != "good" {
		t.Errorf("rule message %+v", msgs[2])
	}
}

func TestRateLimitStormLosesNothingInOrder(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	var storm atomic.Bool
	storm.Store(true)
	started := time.Now()
	// 429 with Retry-After: 1 for every request during the first 1.5 s.
	f.setFail(func(int) (int, string, string) {
		if storm.Load() && time.Since(started) < 1500*time.Millisecond {
			return http.StatusTooManyRequests, "1", ""
		}
		return 0, "", ""
	})
	a, _ := startAudit(t, b, testConfig(t, f, nil))
	const n = 20
	var jids []string
	for i := range n {
		jids = append(jids, run(t, b, "test.arg", []any{i}, nil, "alice").JID)
	}
	msgs := f.waitMessages(t, 2*n, 90*time.Second)
	checkJobOrder(t, msgs, jids)
	if a.Stats().RateLimited.Load() == 0 {
		t.Error("no 429 was seen")
	}
	if since := time.Since(started); since < time.Second {
		t.Errorf("all posted after %s: Retry-After was not honoured", since)
	}
}

// checkJobOrder asserts every job has its parent then its result, threaded,
// with parents in job order.
func checkJobOrder(t *testing.T, msgs []posted, jids []string) {
	t.Helper()
	if len(msgs) != 2*len(jids) {
		t.Fatalf("%d messages for %d jobs (duplicates or losses):\n%s", len(msgs), len(jids), dump(msgs))
	}
	parents := map[string]string{} // ts -> jid
	next := 0
	for i, m := range msgs {
		if m.ThreadTS == "" {
			if next >= len(jids) || !strings.Contains(m.Text, jids[next]) {
				t.Fatalf("message %d: parent out of order, want job %d:\n%s", i, next, dump(msgs))
			}
			parents[m.TS] = jids[next]
			next++
			continue
		}
		if _, ok := parents[m.ThreadTS]; !ok {
			t.Fatalf("message %d: reply before its parent:\n%s", i, dump(msgs))
		}
	}
	if next != len(jids) {
		t.Fatalf("%d parents, want %d", next, len(jids))
	}
}

func TestOutageThenRecoveryLosesNothing(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	var down atomic.Bool
	down.Store(true)
	f.setFail(func(int) (int, string, string) {
		if down.Load() {
			return http.StatusServiceUnavailable, "", ""
		}
		return 0, "", ""
	})
	a, _ := startAudit(t, b, testConfig(t, f, nil))
	var jids []string
	for i := range 5 {
		jids = append(jids, run(t, b, "test.arg", []any{i}, nil, "alice").JID)
	}
	deadline := time.Now().Add(60 * time.Second)
	for a.Stats().Retries.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no retries during the outage")
		}
		time.Sleep(20 * time.Millisecond)
	}
	down.Store(false)
	msgs := f.waitMessages(t, 10, 90*time.Second)
	checkJobOrder(t, msgs, jids)
}

func TestPermanentErrorReportedOnceThenDelivered(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	var revoked atomic.Bool
	revoked.Store(true)
	f.setFail(func(int) (int, string, string) {
		if revoked.Load() {
			return 0, "", "invalid_auth"
		}
		return 0, "", ""
	})
	var errs atomic.Int32
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Pattern: ErrorTag}, func(ev *bus.Event) {
		errs.Add(1)
		if strings.Contains(string(ev.Data), "secrettokenvalue") {
			t.Errorf("token in error event: %s", ev.Data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	a, _ := startAudit(t, b, testConfig(t, f, nil))
	var jids []string
	for i := range 3 {
		jids = append(jids, run(t, b, "test.arg", []any{i}, nil, "alice").JID)
	}
	deadline := time.Now().Add(60 * time.Second)
	for a.Stats().Held.Load() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("held %d times", a.Stats().Held.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := errs.Load(); got != 1 {
		t.Errorf("%d brine/slack/error events for one revoked token, want 1", got)
	}
	revoked.Store(false)
	msgs := f.waitMessages(t, 6, 90*time.Second)
	checkJobOrder(t, msgs, jids)
}

func TestRestartMidThread(t *testing.T) {
	f := newFakeSlack(t)
	dir := t.TempDir()
	b := openBus(t, dir)
	cfg := testConfig(t, f, nil)
	_, stop := startAudit(t, b, cfg)
	r := jobs.NewRun("test.sleep", nil, nil, "alice", bus.Origin{Source: "brine://test"})
	if err := r.Begin(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	parent := f.waitMessages(t, 1, 90*time.Second)[0]
	stop()
	if err := r.End(context.Background(), b, true, nil, nil); err != nil {
		t.Fatal(err)
	}
	// A new audit (as after a master restart) on the same consumer.
	startAudit(t, b, cfg)
	msgs := f.waitMessages(t, 2, 90*time.Second)
	if msgs[1].ThreadTS != parent.TS || !strings.Contains(msgs[1].Text, "succeeded") {
		t.Errorf("result after restart not in the thread:\n%s", dump(msgs))
	}
}

func TestWebhookModeHasNoThreads(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	startAudit(t, b, testConfig(t, f, func(c *Config) { c.Token, c.WebhookURL, c.Channel = "", f.hookURL(), "" }))
	res := run(t, b, "test.arg", []any{"hi"}, nil, "alice")
	publish(t, b, "salt/cloud/web1/creating", map[string]any{"name": "web1"})
	publish(t, b, "salt/cloud/web1/created", map[string]any{"name": "web1"})
	msgs := f.waitMessages(t, 5, 90*time.Second)
	for _, m := range msgs {
		if m.Method != "webhook" || m.ThreadTS != "" {
			t.Errorf("not a plain webhook post: %+v", m)
		}
	}
	if !strings.Contains(msgs[0].Text, res.JID) || !strings.Contains(msgs[1].Text, "succeeded") || !strings.Contains(msgs[4].Text, "created") {
		t.Errorf("webhook messages:\n%s", dump(msgs))
	}
}

func TestRedactsEverySecret(t *testing.T) {
	f := newFakeSlack(t)
	b := openBus(t, t.TempDir())
	cfg := testConfig(t, f, func(c *Config) {
		c.Redact = []string{`sekrit\d+`}
		c.RedactKeys = []string{`^pin$`}
		c.Audit = []Rule{{Preset: PresetJobs}, {Tag: Strings{"myco/*"}, Text: "note {note} {token}"}}
	})
	startAudit(t, b, cfg)
	secrets := []string{"hunter2", "xoxb-9999-8888-leakedtoken", "AKIAIOSFODNN7EXAMPLE", "sekrit42", "1234pin",
		"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "s3cr3tpw", "secrettokenvalue", "bearertok123", "urlpass"}
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
	run(t, b, "test.arg", []any{"xoxb-9999-8888-leakedtoken", "mysql -u root --password=s3cr3tpw", "see sekrit42",
		"curl -H 'Authorization: Bearer bearertok123' https://admin:urlpass@example.com/"},
		map[string]any{"password": "hunter2", "aws_key": "AKIAIOSFODNN7EXAMPLE", "pin": "1234pin", "ssh_private_key": pem,
			"nested": map[string]any{"db_password": "hunter2", "list": []any{"xoxb-1111-2222-secrettokenvalue"}}}, "alice")
	jid := jobs.NewJID()
	publish(t, b, "salt/job/"+jid+"/new", map[string]any{"jid": jid, "tgt": "db1", "tgt_type": "glob", "fun": "user.add",
		"arg": []any{"bob", map[string]any{"__kwarg__": true, "password": "hunter2"}}, "minions": []any{"db1"}, "user": "root"})
	publish(t, b, "salt/job/"+jid+"/ret/db1", map[string]any{"id": "db1", "jid": jid, "fun": "user.add", "retcode": 0, "success": true,
		"return": map[string]any{"password": "hunter2", "key": pem, "out": "created with token=sekrit42"}})
	publish(t, b, "myco/note", map[string]any{"note": "AKIAIOSFODNN7EXAMPLE", "token": "hunter2"})
	msgs := f.waitMessages(t, 5, 90*time.Second)
	for _, m := range msgs {
		for _, s := range secrets {
			if strings.Contains(m.Raw, s) || strings.Contains(m.Text, s) || strings.Contains(m.Detail, s) {
				t.Errorf("secret %q reached Slack in %s", s, m.Raw)
			}
		}
	}
	if !strings.Contains(msgs[0].Text, "password=***") || !strings.Contains(msgs[3].Detail, "password: '***'") && !strings.Contains(msgs[3].Detail, "password: \"***\"") {
		t.Errorf("redacted values not shown as ***:\n%s", dump(msgs))
	}
}

func TestReloadReleasesHeldMessages(t *testing.T) {
	f := newFakeSlack(t)
	f.token = "xoxb-the-new-token"
	b := openBus(t, t.TempDir())
	a, _ := startAudit(t, b, testConfig(t, f, nil))
	var jids []string
	for i := range 2 {
		jids = append(jids, run(t, b, "test.arg", []any{i}, nil, "alice").JID)
	}
	deadline := time.Now().Add(60 * time.Second)
	for a.Stats().Held.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the bad token was not held")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.Reload(testConfig(t, f, func(c *Config) { c.Token = "xoxb-the-new-token"; c.Channel = "#new" }))
	msgs := f.waitMessages(t, 4, 90*time.Second)
	checkJobOrder(t, msgs, jids)
	if msgs[0].Channel != "#new" {
		t.Errorf("reloaded channel not used: %+v", msgs[0])
	}
}

// TestThreadParentIsSyncedBeforeItIsRemembered checks that the audit's one
// write, a thread parent, returns only after a sync round of its bucket
// covered it, and so before the event it came from is acknowledged: a
// SIGKILL cannot tell (the page cache survives it), the round counter can.
func TestThreadParentIsSyncedBeforeItIsRemembered(t *testing.T) {
	_, kv, a := bareAudit(t)
	ctx := context.Background()
	before := kv.SyncRounds()
	if err := a.remember(ctx, "job/20261124000000000001", thread{Channel: "#audit", TS: "1.2", Event: "e1"}); err != nil {
		t.Fatal(err)
	}
	if kv.SyncRounds() <= before {
		t.Error("the thread parent was remembered before a sync round covered it")
	}
	got, err := a.thread(ctx, "job/20261124000000000001")
	if err != nil || got == nil || got.TS != "1.2" {
		t.Errorf("remembered thread %+v, %v", got, err)
	}
}

// TestResultRenderedBeforeItsParentIsPosted: in a cluster another master
// may post a job's parent between the moment a result is rendered (no
// parent yet) and the moment it is sent. The result then goes into the
// thread as any other (without the command line a lone result carries)
// and counts toward the thread's summary; a result whose parent is still
// missing when sent goes out on its own, with the command line.
func TestResultRenderedBeforeItsParentIsPosted(t *testing.T) {
	f, _, a := bareAudit(t)
	ctx := context.Background()
	st := a.cur()
	result := func(jid, id string) []message {
		t.Helper()
		ev, err := bus.NewEvent("salt/job/"+jid+"/ret/"+id, map[string]any{"cmd": "_return", "id": id, "jid": jid,
			"fun": "cmd.run", "fun_args": []any{"uptime"}, "return": "up", "retcode": 0, "success": true}, bus.Origin{Source: "brine://test"})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := st.render(ev, func(string) *thread { return nil })
		if err != nil || len(msgs) == 0 {
			t.Fatalf("render: %v %v", msgs, err)
		}
		return msgs
	}
	threaded, alone := jobs.NewJID(), jobs.NewJID()
	msgs := result(threaded, "web1")
	// Meanwhile another master posts the parent, for one agent.
	parent, err := st.post.post(ctx, "#audit", "", message{Text: "`salt web1 cmd.run uptime` by *alice* (jid " + threaded + ")"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.remember(ctx, "r0.job."+threaded, thread{Channel: "#audit", TS: parent, Event: "e", Minions: []string{"web1"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range append(msgs, result(alone, "web2")...) {
		if err := a.deliver(ctx, st, m); err != nil {
			t.Fatal(err)
		}
	}
	got := f.waitMessages(t, 4, 30*time.Second)
	if got[1].ThreadTS != parent || !strings.HasPrefix(got[1].Text, ":white_check_mark: *web1* succeeded") {
		t.Errorf("the result whose parent was posted meanwhile:\n%s", dump(got))
	}
	if got[2].ThreadTS != parent || !strings.HasPrefix(got[2].Text, ":checkered_flag: all 1 agents returned") {
		t.Errorf("its thread's summary:\n%s", dump(got))
	}
	if got[3].ThreadTS != "" || !strings.Contains(got[3].Text, "(jid "+alone+")\n:white_check_mark: *web2* succeeded") {
		t.Errorf("the result without a parent:\n%s", dump(got))
	}
}

// TestConcurrentTalliesLoseNoResult: the masters of a cluster tally one
// job's results at once; none is lost (each write names the revision it
// read), so the thread gets its summary, once.
func TestConcurrentTalliesLoseNoResult(t *testing.T) {
	_, kv, a := bareAudit(t)
	ctx := context.Background()
	masters := []*Audit{a, New(a.cur().cfg, kv, a.events.Publisher, WithLogger(quietLog()))}
	var minions []string
	for i := range 20 {
		minions = append(minions, fmt.Sprintf("web%02d", i))
	}
	key := "r0.job." + jobs.NewJID()
	if err := masters[0].remember(ctx, key, thread{Channel: "#audit", TS: "1700000000.000001", Event: "e", Minions: minions}); err != nil {
		t.Fatal(err)
	}
	sums := make(chan *message, len(minions))
	var wg sync.WaitGroup
	for i, id := range minions {
		wg.Go(func() {
			sum, err := masters[i%2].tally(ctx, message{Op: opTally, Channel: "#audit", Thread: key, Minion: id, OK: i != 7})
			if err != nil {
				t.Error(err)
			}
			if sum != nil {
				sums <- sum
			}
		})
	}
	wg.Wait()
	close(sums)
	if len(sums) != 1 {
		th, _ := masters[0].thread(ctx, key)
		t.Fatalf("%d summaries, want 1; results tallied: %d of %d", len(sums), len(th.Results), len(minions))
	}
	if sum := <-sums; sum.Text != ":checkered_flag: all 20 agents returned, 1 failed: web07" {
		t.Fatalf("summary %q", sum.Text)
	}
}
