package reactor_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/reactor"
)

// acceptASG is the seed's reaction: accept the pending keys of the
// autoscaling group's web servers.
const acceptASG = `{% if data['act'] == 'pend' and data['id'].startswith('web-asg-') %}
accept_minion:
  wheel.key.accept:
    - match: {{ data['id'] }}
{% endif %}
`

// TestWheelReactionAcceptsPendingKey: a pending agent's salt/auth runs the
// wheel.key.accept reaction against the real key store; the job is
// announced as Salt's wheel client does (salt/wheel/<jid>/new and ret), and
// salt/key is caused by the salt/auth event. An id the reaction does not
// select stays pending.
func TestWheelReactionAcceptsPendingKey(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	rec := record(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := b.Bucket(ctx, keys.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	store := keys.New(kv, bus.Emitter{Publisher: b, Source: "brine://test/keys"})
	reg := function.NewWithBuiltins()
	if err := reg.RegisterAll(store.Funcs()); err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "accept.sls", acceptASG)
	r := reactor.New(reactor.Config{Mapping: []reactor.MapEntry{{Glob: "salt/auth", Files: []string{file}}}}, reg)
	start(t, r, b, nil)

	const pub = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
	other := strings.Replace(pub, "rq", "Rq", 1)
	if res, err := store.Authenticate(ctx, "db-1", other, nil); err != nil || res.Act != keys.ActPend {
		t.Fatalf("db-1 hello: %+v, %v", res, err)
	}
	res, err := store.Authenticate(ctx, "web-asg-0042", pub, nil)
	if err != nil || res.Act != keys.ActPend || res.Allowed {
		t.Fatalf("first hello: %+v, %v", res, err)
	}
	keyEv := rec.waitFor(t, "salt/key", 1)[0]
	if d := data(t, keyEv); d["act"] != "accept" || d["id"] != "web-asg-0042" || d["result"] != true {
		t.Errorf("salt/key %v", d)
	}
	auth := rec.matching("salt/auth")
	if len(auth) != 2 || keyEv.Cause != auth[1].ID || keyEv.Depth != auth[1].Depth+1 {
		t.Errorf("salt/key caused by %q at depth %d, want the salt/auth event %s", keyEv.Cause, keyEv.Depth, auth[1].ID)
	}
	ret := rec.waitFor(t, "salt/wheel/*/ret", 1)[0]
	news := rec.matching("salt/wheel/*/new")
	d := data(t, ret)
	if len(news) != 1 || d["fun"] != "wheel.key.accept" || d["success"] != true || d["user"] != "Reactor" ||
		!reflect.DeepEqual(d["return"], map[string]any{"minions": []any{"web-asg-0042"}}) ||
		ret.Tag != reactor.WheelTag(d["jid"].(string), "ret") || news[0].Tag != reactor.WheelTag(d["jid"].(string), "new") {
		t.Errorf("wheel job: new %d, ret %s %v", len(news), ret.Tag, d)
	}
	if d := data(t, news[0]); d["fun"] != "wheel.key.accept" || !reflect.DeepEqual(d["fun_args"], []any{map[string]any{"match": "web-asg-0042"}}) {
		t.Errorf("wheel job new: %v", d)
	}
	if runs := rec.matching("salt/run/*"); len(runs) != 0 {
		t.Errorf("a wheel reaction fired runner job events: %v", runs[0].Tag)
	}
	res, err = store.Authenticate(ctx, "web-asg-0042", pub, nil)
	if err != nil || !res.Allowed {
		t.Errorf("hello after the reaction: %+v, %v", res, err)
	}
	if k, err := store.Get(ctx, "db-1"); err != nil || k.State != keys.Pending {
		t.Errorf("db-1 is %+v, %v; want still pending", k, err)
	}
}

// TestRunnableWheel: wheel reactions run only wheel functions, with their
// arguments checked before anything runs; other kinds keep ErrNoExecutor.
func TestRunnableWheel(t *testing.T) {
	reg := function.NewWithBuiltins()
	if err := reg.RegisterAll(keys.New(nil, bus.Emitter{}).Funcs()); err != nil {
		t.Fatal(err)
	}
	r := reactor.New(reactor.Config{}, reg)
	for _, tc := range []struct {
		re   reactor.Reaction
		want string // "" runnable
		is   error
	}{
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "key.accept", Kwargs: map[string]any{"match": "web*"}}},
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "key.list_all", Kwargs: map[string]any{}}},
		{re: reactor.Reaction{Kind: reactor.Runner, Fun: "key.list_all"}},
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "test.arg"}, want: "wheel.test.arg: test.arg is not a wheel function (call it as runner.test.arg)"},
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "config.values"}, want: "no wheel function config.values"},
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "key.accept", Kwargs: map[string]any{"name": "x", "match": "y"}},
			want: `wheel.key.accept: key.accept: argument "name": unexpected argument`},
		{re: reactor.Reaction{Kind: reactor.Wheel, Fun: "key.accept"}, want: `argument "match": missing argument`, is: function.ErrMissingArgument},
		{re: reactor.Reaction{Kind: reactor.Local, Fun: "cmd.run", Tgt: "*"}, want: "needs agents", is: reactor.ErrNoExecutor},
		{re: reactor.Reaction{Kind: reactor.Caller, Fun: "file.touch"}, is: reactor.ErrNoExecutor},
	} {
		err := r.Runnable(&tc.re)
		switch {
		case tc.want == "" && tc.is == nil && err != nil:
			t.Errorf("%s: %v, want runnable", tc.re.Call(), err)
		case (tc.want != "" || tc.is != nil) && err == nil:
			t.Errorf("%s: runnable, want %q", tc.re.Call(), tc.want)
		case err != nil && (!strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is)):
			t.Errorf("%s: %v, want %q (%v)", tc.re.Call(), err, tc.want, tc.is)
		}
	}
}
