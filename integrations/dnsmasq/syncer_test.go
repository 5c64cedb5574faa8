package dnsmasq

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/dnsmasq/dnsmasqtest"
	"github.com/brinehq/brine/mine"
)

func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// TestBurstCoalescesIntoOneWriteAndOneReload: 1,000 changes to the real
// mine, made faster than the debounce time, give one regeneration (each
// file written once) and one reload.
func TestBurstCoalescesIntoOneWriteAndOneReload(t *testing.T) {
	dir := t.TempDir()
	reloads := filepath.Join(dir, "reloads")
	cfg := &Config{
		HostsFile:     filepath.Join(dir, "dhcp-hosts"),
		AddnHosts:     filepath.Join(dir, "addn-hosts"),
		Domain:        "cloud.test",
		ReloadCommand: []string{"/bin/sh", "-c", "echo hup >> " + reloads},
		// Generous: the burst below must not pause this long on a busy machine.
		Debounce: 2 * time.Second,
	}
	p := startPipeline(t, cfg)
	dnsmasqtest.WaitFor(t, "initial regeneration", func() (bool, string) {
		st := p.syncer.Stats()
		return st.Writes == 2 && st.Reloads == 1, fmt.Sprint(st)
	})
	base := p.syncer.Stats()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 1000 {
		id := fmt.Sprintf("host%04d", i)
		ip := fmt.Sprintf("10.30.%d.%d", i/250, i%250+1)
		if _, err := p.store.Update(ctx, mine.Write{ID: id, Source: "test", Mutate: func(h *mine.Host) error {
			h.SetIPs(ip)
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("1000 mine writes in %s", time.Since(start))
	dnsmasqtest.WaitFor(t, "the burst is written", func() (bool, string) {
		n := lineCount(cfg.AddnHosts)
		return n == 1001, fmt.Sprintf("%d lines", n) // header + 1000
	})
	time.Sleep(2 * cfg.Debounce) // nothing more may follow
	st := p.syncer.Stats()
	if w := st.Writes - base.Writes; w != 2 {
		t.Errorf("%d file writes for a burst of 1000 changes, want 2 (each file once)", w)
	}
	if r := st.Reloads - base.Reloads; r != 1 {
		t.Errorf("%d reloads for one burst, want 1", r)
	}
	if n := lineCount(reloads); n != 2 {
		t.Errorf("reload_command ran %d times in all, want 2 (start, burst)", n)
	}
	if n := lineCount(cfg.HostsFile); n != 1001 {
		t.Errorf("dhcp-hostsfile has %d lines, want 1001", n)
	}
}

// TestRefreshRunner: dnsmasq.refresh, as a reaction calls it, regenerates
// from the stored mine, reloads when forced, and fires its events through
// the caller (so that they carry the reaction's cause).
func TestRefreshRunner(t *testing.T) {
	dir := t.TempDir()
	reloads := filepath.Join(dir, "reloads")
	cfg := &Config{
		AddnHosts:     filepath.Join(dir, "addn-hosts"),
		ReloadCommand: []string{"/bin/sh", "-c", "echo hup >> " + reloads},
		Debounce:      time.Hour, // only the runner regenerates in this test
	}
	p := startPipeline(t, cfg)
	reg := function.New()
	if err := reg.RegisterAll(p.syncer.Funcs()); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterAll(p.store.Funcs()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var fired []string
	fire := func(_ context.Context, tag string, data map[string]any) error {
		fired = append(fired, fmt.Sprintf("%s %v", tag, data["reload"]))
		return nil
	}
	if _, err := reg.Call(ctx, "mine.update", nil, map[string]any{"id": "web1", "ips": "10.0.0.1"}, fire); err != nil {
		t.Fatal(err)
	}
	out, err := reg.Call(ctx, "dnsmasq.refresh", nil, nil, fire)
	if err != nil {
		t.Fatal(err)
	}
	rep := out.(*Report)
	if rep.Hosts != 1 || rep.AddnHosts != 1 || len(rep.Written) != 1 || rep.Reload != "command" {
		t.Fatalf("refresh report %+v", rep)
	}
	if b, _ := os.ReadFile(cfg.AddnHosts); !strings.HasSuffix(string(b), "10.0.0.1 web1\n") {
		t.Fatalf("addn-hosts:\n%s", b)
	}
	// Unchanged: no write, no reload, unless forced.
	out, _ = reg.Call(ctx, "dnsmasq.refresh", nil, nil, fire)
	if rep := out.(*Report); len(rep.Written) != 0 || rep.Reload != "" {
		t.Fatalf("refresh of an unchanged mine wrote or reloaded: %+v", rep)
	}
	out, _ = reg.Call(ctx, "dnsmasq.refresh", nil, map[string]any{"force": true}, fire)
	if rep := out.(*Report); rep.Reload != "command" {
		t.Fatalf("forced refresh did not reload: %+v", rep)
	}
	if n := lineCount(reloads); n != 2 {
		t.Errorf("reload_command ran %d times, want 2", n)
	}
	if want := []string{ReloadedTag + " command", ReloadedTag + " command"}; fmt.Sprint(fired) != fmt.Sprint(want) {
		t.Errorf("events fired through the caller: %v, want %v", fired, want)
	}
	if _, err := reg.Call(ctx, "dnsmasq.refresh", nil, map[string]any{"force": "maybe"}, fire); err == nil {
		t.Error("force=maybe accepted")
	}

	// A failing reload is reported and retried by the next regeneration.
	bad := *cfg
	bad.ReloadCommand = []string{"/bin/sh", "-c", "exit 7"}
	if err := p.syncer.SetConfig(&bad); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Call(ctx, "mine.update", nil, map[string]any{"id": "web2", "ips": "10.0.0.2"}, fire); err != nil {
		t.Fatal(err)
	}
	fired = nil
	if _, err := reg.Call(ctx, "dnsmasq.refresh", nil, nil, fire); err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("refresh with a failing reload: %v", err)
	}
	if len(fired) != 1 || !strings.HasPrefix(fired[0], ErrorTag) {
		t.Fatalf("events: %v, want one %s", fired, ErrorTag)
	}
	if err := p.syncer.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	out, err = reg.Call(ctx, "dnsmasq.refresh", nil, nil, fire)
	if err != nil || out.(*Report).Reload != "command" {
		t.Fatalf("after a failed reload the next refresh must reload even with the files unchanged: %+v, %v", out, err)
	}
}
