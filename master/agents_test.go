package master

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/mine"
	"github.com/brinehq/brine/wire"
)

// events records the master's events whose tag matches a glob.
type events struct {
	mu  sync.Mutex
	evs []*bus.Event
}

func record(t *testing.T, m *Master, pattern string) *events {
	t.Helper()
	r := &events{}
	sub, err := m.bus.Subscribe(context.Background(), bus.SubscribeOptions{Pattern: pattern}, func(ev *bus.Event) {
		r.mu.Lock()
		r.evs = append(r.evs, ev)
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return r
}

// wait returns the data of the first recorded event with tag for which ok
// holds, failing the test after 15 s.
func (r *events) wait(t *testing.T, tag string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		evs := slices.Clone(r.evs)
		r.mu.Unlock()
		for _, ev := range evs {
			if ev.Tag != tag {
				continue
			}
			d, err := ev.DataMap()
			if err == nil && ok(d) {
				return d
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event as expected", tag)
	return nil
}

func TestAgentPresenceAndMine(t *testing.T) {
	cfg := testConfig(t, "auto_accept: true\npresence_events: true\nloop_interval: 1\n")
	m, mt := startWith(t, cfg)
	presence := record(t, m, "salt/presence/*")
	web := mt.dial("key-web01")
	hello(t, web, "web01")
	if err := web.call(wire.MethodMine, wire.Mine{Grains: map[string]any{"id": "web01", "roles": []any{"web"}}}, nil); err != nil {
		t.Fatal(err)
	}

	presence.wait(t, "salt/presence/change", func(d map[string]any) bool {
		return fmt.Sprint(d["new"]) == "[web01]" && fmt.Sprint(d["lost"]) == "[]"
	})
	presence.wait(t, "salt/presence/present", func(d map[string]any) bool { return fmt.Sprint(d["present"]) == "[web01]" })
	ctx := context.Background()
	for fun, want := range map[string]string{"manage.up": "[web01]", "manage.down": "[]", "manage.present": "[web01]",
		"manage.status": "map[down:[] up:[web01]]"} {
		got, err := m.funcs.Call(ctx, fun, nil, nil, nil)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("%s = %v, %v; want %s", fun, got, err, want)
		}
	}

	// The agent's mine record: its grains, with its own addresses.
	var h *mine.Host
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got, err := m.mine.Get(ctx, "web01"); err == nil && len(got.Grains) > 0 {
			h = got
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h == nil {
		t.Fatal("no mine record for web01")
	}
	if h.Source != "agent" || fmt.Sprint(h.Grains["roles"]) != "[web]" || h.Grains["id"] != "web01" {
		t.Errorf("mine record = %+v", h)
	}

	web.Close()
	presence.wait(t, "salt/presence/change", func(d map[string]any) bool { return fmt.Sprint(d["lost"]) == "[web01]" })
	if got, _ := m.funcs.Call(ctx, "manage.down", nil, map[string]any{"removekeys": true}, nil); fmt.Sprint(got) != "[web01]" {
		t.Errorf("manage.down removekeys=True = %v", got)
	}
	if _, err := m.keys.Get(ctx, "web01"); err == nil {
		t.Error("manage.down removekeys=True kept the key")
	}
	// With its key, the agent's mine record goes (Salt's check_minion_cache).
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := m.mine.Get(ctx, "web01"); errors.Is(err, mine.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the mine record outlived its key")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
