package mine

import (
	"context"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// fakeMine records what the functions send and answers mine.get.
type fakeMine struct {
	updates int
	sent    map[string]any
	asked   [3]string
}

func (f *fakeMine) UpdateMine(context.Context) error { f.updates++; return nil }
func (f *fakeMine) SendMine(_ context.Context, name string, v any) error {
	f.sent[name] = v
	return nil
}
func (f *fakeMine) MineGet(_ context.Context, tgt, fun, tgtType string) (map[string]any, error) {
	f.asked = [3]string{tgt, fun, tgtType}
	return map[string]any{"web1": []any{"10.0.0.1"}}, nil
}
func (f *fakeMine) PushFile(context.Context, []string, int64, int64, []byte) error { return nil }
func (f *fakeMine) Progress(context.Context, string, map[string]any, int) error    { return nil }

func TestMineFunctions(t *testing.T) {
	f := &fakeMine{sent: map[string]any{}}
	env := &modules.Env{Mine: f, Master: f}
	reg, err := modules.Registry(env, Module, func(*modules.Env) []function.Func {
		return []function.Func{{Name: "network.ip_addrs", VarArgs: true, VarKwargs: true, Run: func(_ context.Context, in *function.Input) (any, error) {
			return map[string]any{"args": in.Extra, "cidr": in.ExtraKwargs["cidr"]}, nil
		}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args []any, kw map[string]any) any {
		t.Helper()
		v, err := reg.Call(context.Background(), name, args, kw, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	call("mine.update", nil, nil)
	call("mine.send", []any{"network.ip_addrs", "eth0"}, map[string]any{"cidr": "10.0.0.0/8", "__pub_jid": "1"})
	call("mine.send", []any{"internal"}, map[string]any{"mine_function": "network.ip_addrs"})
	call("mine.delete", []any{"old.fun"}, nil)
	want := map[string]any{
		"network.ip_addrs": map[string]any{"args": []any{"eth0"}, "cidr": "10.0.0.0/8"},
		"internal":         map[string]any{"args": []any(nil), "cidr": nil},
		"old.fun":          nil,
	}
	if f.updates != 1 || !reflect.DeepEqual(f.sent, want) {
		t.Errorf("updates %d, sent %#v\nwant %#v", f.updates, f.sent, want)
	}
	got := call("mine.get", []any{"web*", "network.ip_addrs"}, map[string]any{"tgt_type": "glob"})
	if !reflect.DeepEqual(got, map[string]any{"web1": []any{"10.0.0.1"}}) || f.asked != [3]string{"web*", "network.ip_addrs", "glob"} {
		t.Errorf("mine.get = %v, asked %+v", got, f.asked)
	}
}

// TestMineGetMasterless: with file_client: local, Salt 3006.6's mine.get
// answers from the minion's own mine cache without a master ({} when it
// holds nothing, as hostsfile's formula reads it); otherwise the master is
// asked.
func TestMineGetMasterless(t *testing.T) {
	for _, tc := range []struct {
		fileClient string
		want       map[string]any
		asked      bool
	}{
		{"local", map[string]any{}, false},
		{"remote", map[string]any{"web1": []any{"10.0.0.1"}}, true},
		{"", map[string]any{"web1": []any{"10.0.0.1"}}, true},
	} {
		f := &fakeMine{sent: map[string]any{}}
		opts := map[string]any{}
		if tc.fileClient != "" {
			opts["file_client"] = tc.fileClient
		}
		env := &modules.Env{Mine: f, Master: f, Opts: func() map[string]any { return opts }}
		reg, err := modules.Registry(env, Module)
		if err != nil {
			t.Fatal(err)
		}
		got, err := reg.Call(context.Background(), "mine.get", []any{"*", "network.ip_addrs"}, map[string]any{"tgt_type": "compound"}, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) || (f.asked[1] != "") != tc.asked {
			t.Errorf("file_client %q: mine.get = %v, %v (master asked: %v); want %v", tc.fileClient, got, err, f.asked[1] != "", tc.want)
		}
	}
}
