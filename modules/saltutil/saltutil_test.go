package saltutil

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/brinehq/brine/modules"
)

// fakeJobs is an agent running two jobs.
type fakeJobs struct{ signalled map[string]bool }

func (f *fakeJobs) Running() []map[string]any {
	return []map[string]any{{"jid": "1", "fun": "cmd.run"}, {"jid": "2", "fun": "saltutil.running"}}
}

func (f *fakeJobs) Signal(jid string, kill bool) bool {
	if jid != "1" {
		return false
	}
	f.signalled[jid] = kill
	return true
}

func TestSaltutil(t *testing.T) {
	jobs := &fakeJobs{signalled: map[string]bool{}}
	reg, err := modules.Registry(&modules.Env{ID: "web1", Jobs: jobs}, Module)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args []any, kw map[string]any) (any, error) {
		return reg.Call(context.Background(), name, args, kw, nil)
	}
	// The job asking (jid 2) is left out, as Salt.
	if got, _ := call("saltutil.running", nil, map[string]any{"__pub_jid": "2"}); !reflect.DeepEqual(got, []any{map[string]any{"jid": "1", "fun": "cmd.run"}}) {
		t.Errorf("running = %v", got)
	}
	if got, _ := call("saltutil.find_job", []any{"1"}, nil); got.(map[string]any)["fun"] != "cmd.run" {
		t.Errorf("find_job 1 = %v", got)
	}
	if got, _ := call("saltutil.find_job", []any{"9"}, nil); len(got.(map[string]any)) != 0 {
		t.Errorf("find_job of no job = %v, want {}", got)
	}
	if got, _ := call("saltutil.is_running", []any{"cmd.*"}, nil); len(got.([]any)) != 1 {
		t.Errorf("is_running cmd.* = %v", got)
	}
	if got, err := call("saltutil.term_job", []any{"1"}, nil); err != nil || got != "Signal 15 sent to job 1" || jobs.signalled["1"] {
		t.Errorf("term_job = %v, %v (kill %v)", got, err, jobs.signalled["1"])
	}
	if _, err := call("saltutil.signal_job", []any{"1", int64(9)}, nil); err != nil || !jobs.signalled["1"] {
		t.Errorf("signal_job 9: %v (kill %v)", err, jobs.signalled["1"])
	}
	for _, args := range [][]any{{"9"}, {"1", int64(1)}} {
		name := "saltutil.kill_job"
		if len(args) == 2 {
			name = "saltutil.signal_job"
		}
		if _, err := call(name, args, nil); err == nil {
			t.Errorf("%s %v: no error", name, args)
		}
	}
}

// TestRefreshGrains: saltutil.refresh_grains gathers the grains again and
// asks for the pillar unless refresh_pillar=False; True either way, as
// Salt's, even when the pillar cannot be had.
func TestRefreshGrains(t *testing.T) {
	var regrained, refreshed int
	pillarErr := error(nil)
	env := &modules.Env{ID: "web1",
		RefreshGrains: func(context.Context) bool { regrained++; return true },
		Pillar: func(_ context.Context, refresh bool) (map[string]any, error) {
			if refresh {
				refreshed++
			}
			return map[string]any{}, pillarErr
		}}
	reg, err := modules.Registry(env, Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kw            map[string]any
		pillarErr     error
		wantRefreshed int
	}{
		{nil, nil, 1},
		{map[string]any{"refresh_pillar": false}, nil, 0},
		{nil, errors.New("not connected to the master"), 1},
	} {
		regrained, refreshed, pillarErr = 0, 0, tc.pillarErr
		got, err := reg.Call(context.Background(), "saltutil.refresh_grains", nil, tc.kw, nil)
		if err != nil || got != true || regrained != 1 || refreshed != tc.wantRefreshed {
			t.Errorf("refresh_grains %v (pillar error %v) = %v, %v; grains gathered %d times, pillar asked %d times, want 1 and %d",
				tc.kw, tc.pillarErr, got, err, regrained, refreshed, tc.wantRefreshed)
		}
	}
}
