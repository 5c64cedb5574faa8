package dnsmasq

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/mine"
)

// requireBinary fails the test when a Debian package it needs is missing.
func requireBinary(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: this test needs the Debian package %s (run `make deps` as root)", name, pkg)
	}
	return p
}

// sharedDir is a temporary directory dnsmasq can read after dropping to
// the nobody user (t.TempDir() and its parent are private).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

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
	kv, err := b.KeyValue(ctx, mine.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline{bus: b, store: mine.New(kv)}
	p.syncer, err = New(cfg, p.store, Options{Publisher: b, Source: "brine://test/dnsmasq"})
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

// waitFor polls cond for up to 30 s; what describes the state on failure.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s; last state: %s", what, state)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// dnsmasqProc is a dnsmasq the test started.
type dnsmasqProc struct {
	cmd *exec.Cmd
	log *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDnsmasq runs argv (dnsmasq in the foreground, possibly under `ip
// netns exec`) until the test ends, and waits for its pid file.
func startDnsmasq(t *testing.T, pidfile string, argv ...string) *dnsmasqProc {
	t.Helper()
	d := &dnsmasqProc{log: &syncBuffer{}}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting dnsmasq: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = d.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("dnsmasq output:\n%s", d.log.String())
		}
	})
	waitFor(t, "dnsmasq writes its pid file", func() (bool, string) {
		select {
		case <-exited:
			t.Fatalf("dnsmasq exited: %s", d.log.String())
		default:
		}
		b, err := os.ReadFile(pidfile)
		return err == nil && len(bytes.TrimSpace(b)) > 0, d.log.String()
	})
	return d
}

// runCmd runs a command to completion and returns its combined output.
func runCmd(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// dnsmasqDNSConf is DEPENDENCIES.md's DNS-only dnsmasq on loopback: no
// upstream, authoritative for the local domain.
func dnsmasqDNSConf(dir string, port int, domain string) string {
	return strings.Join([]string{
		fmt.Sprintf("port=%d", port),
		"listen-address=127.0.0.1",
		"bind-interfaces",
		"no-resolv",
		"no-hosts",
		"domain=" + domain,
		"local=/" + domain + "/",
		"addn-hosts=" + filepath.Join(dir, "addn-hosts"),
		"dhcp-hostsfile=" + filepath.Join(dir, "dhcp-hosts"),
		"pid-file=" + filepath.Join(dir, "dnsmasq.pid"),
		"log-facility=-",
		"",
	}, "\n")
}
