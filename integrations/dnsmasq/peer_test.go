package dnsmasq

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/mine"
)

// pipeline is the master's mine and dnsmasq parts on a real embedded bus:
// cloud events in, files and SIGHUPs out.
type pipeline struct {
	bus    *natsbus.Bus
	store  *mine.Store
	syncer *Syncer

	mu     sync.Mutex
	events []*bus.Event
}

func startPipeline(t *testing.T, cfg *Config) *pipeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("open bus: %v", err)
	}
	kv, err := b.Bucket(ctx, mine.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline{bus: b, store: mine.New(kv)}
	p.syncer, err = New(cfg, p.store, Options{Events: bus.Emitter{Publisher: b, Source: "brine://test/dnsmasq"}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := b.Subscribe(ctx, bus.SubscribeOptions{Pattern: "brine/*"}, func(ev *bus.Event) {
		p.mu.Lock()
		p.events = append(p.events, ev)
		p.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = p.store.Follow(ctx, b, "brine://test/mine", nil) }()
	go func() {
		defer wg.Done()
		if err := p.syncer.Run(ctx); err != nil {
			t.Errorf("syncer: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		sub.Stop()
		b.Close()
	})
	return p
}

// publish fires a salt-cloud event as brine's cloud does.
func (p *pipeline) publish(t *testing.T, name, task string, data map[string]any) {
	t.Helper()
	d := map[string]any{"name": name, "profile": "web", "provider": "sim:vmware", "driver": "vmware"}
	switch task {
	case "created":
		d["event"] = "created instance"
	case "destroyed":
		d["event"] = "destroyed instance"
	}
	for k, v := range data {
		d[k] = v
	}
	ev, err := bus.NewEvent("salt/cloud/"+name+"/"+task, d, bus.Origin{Source: "brine://test/cloud"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.bus.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
}

// eventsTagged returns the events seen with tag.
func (p *pipeline) eventsTagged(tag string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, ev := range p.events {
		if ev.Tag == tag {
			d, _ := ev.DataMap()
			out = append(out, d)
		}
	}
	return out
}
