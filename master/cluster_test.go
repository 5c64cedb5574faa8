package master

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/lease"
	"github.com/brinehq/brine/wire"
)

// localFleet is one master's jobs as the others reach them, recorded.
type localFleet struct {
	mu       sync.Mutex
	here     []string // agents connected to this master
	relayed  []string // origin/jid/id
	returns  []string // id/jid
	findAsks []string
}

func (l *localFleet) relay(origin string, job wire.Job, _ json.RawMessage, _ *bus.Event, ids []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sent []string
	for _, id := range ids {
		if slices.Contains(l.here, id) {
			l.relayed = append(l.relayed, origin+"/"+job.JID+"/"+id)
			sent = append(sent, id)
		}
	}
	return sent
}

func (l *localFleet) returned(id string, r wire.Return) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.returns = append(l.returns, id+"/"+r.JID)
}

func (l *localFleet) findLocal(_ context.Context, jid string, ids []string) map[string]wire.JobState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]wire.JobState{}
	for _, id := range ids {
		l.findAsks = append(l.findAsks, id)
		if slices.Contains(l.here, id) {
			out[id] = wire.JobState{JID: jid, Running: true}
		}
	}
	return out
}

func (l *localFleet) connected() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.here))
}

// twoMasters are two masters' cluster parts on one real bus, each
// knowing the other as live.
func twoMasters(t *testing.T) (m1, m2 *cluster, f1, f2 *localFleet) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f1, f2 = &localFleet{here: []string{"a1"}}, &localFleet{here: []string{"a2", "a3"}}
	m1 = newCluster("m1", b, log, f1.connected, nil)
	m2 = newCluster("m2", b, log, f2.connected, nil)
	m1.jobs, m2.jobs = f1, f2
	for _, c := range []*cluster{m1, m2} {
		c.ctx = ctx
		if err := c.serve(ctx); err != nil {
			t.Fatal(err)
		}
	}
	m1.peers, m2.peers = map[string]lease.Holder{"m2": {}}, map[string]lease.Holder{"m1": {}}
	return m1, m2, f1, f2
}

// What a master asks the others, and what they answer, over the bus.
func TestClusterReachesTheOtherMastersAgents(t *testing.T) {
	m1, m2, f1, f2 := twoMasters(t)
	ctx := context.Background()

	if got := m1.locate(ctx, []string{"a2", "a3", "a9"}); !maps.Equal(got, map[string]string{"a2": "m2", "a3": "m2"}) {
		t.Errorf("locate = %v", got)
	}
	if got := m1.locate(ctx, nil); got != nil {
		t.Errorf("locate of nobody = %v", got)
	}
	job, _ := json.Marshal(wire.Job{JID: "20261128000000000001", Fun: "test.ping"})
	if sent := m1.push(ctx, "m2", job, nil, []string{"a2", "a9"}); !slices.Equal(sent, []string{"a2"}) {
		t.Errorf("push reached %v", sent)
	}
	if want := []string{"m1/20261128000000000001/a2"}; !slices.Equal(f2.relayed, want) {
		t.Errorf("m2 relayed %v, want %v", f2.relayed, want)
	}
	if got := m1.find(ctx, "20261128000000000001", []string{"a2"}); !got["a2"].Running {
		t.Errorf("find = %v", got)
	}
	// A return that reached m2 goes to m1, which published the job.
	m2.forwardReturn("m1", "a2", wire.Return{JID: "20261128000000000001"})
	waitFor(t, func() bool {
		f1.mu.Lock()
		defer f1.mu.Unlock()
		return slices.Equal(f1.returns, []string{"a2/20261128000000000001"})
	})
	// A master that is not live is not asked.
	m1.peers = map[string]lease.Holder{}
	if got := m1.locate(ctx, []string{"a2"}); len(got) != 0 {
		t.Errorf("locate with no live peer = %v", got)
	}
	if !m1.alive("m1") || m1.alive("m2") {
		t.Error("alive: want m1 (itself) and not m2")
	}
}

// A master whose key is not the bus's refuses to start; its own key,
// replaced, is taken.
func TestClusterKeyCheck(t *testing.T) {
	ctx := context.Background()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kv, err := b.Bucket(ctx, bus.BucketConfig{Name: clusterBucket})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k1, k2 := filepath.Join(dir, "k1"), filepath.Join(dir, "k2")
	if err := checkKey(ctx, kv, k1, "m1"); err != nil {
		t.Fatalf("the first master: %v", err)
	}
	if err := checkKey(ctx, kv, k1, "m2"); err != nil {
		t.Fatalf("a second master with the same key: %v", err)
	}
	if err := checkKey(ctx, kv, k2, "m3"); err == nil || !strings.Contains(err.Error(), "copy that master's key_file here") {
		t.Fatalf("a master with another key: %v", err)
	}
	// m1 replaced its key on purpose: recorded; m2's old one is refused.
	if err := os.Remove(k1); err != nil {
		t.Fatal(err)
	}
	if err := checkKey(ctx, kv, k1, "m1"); err != nil {
		t.Fatalf("m1 with a new key: %v", err)
	}
	if err := checkKey(ctx, kv, k2, "m2"); err == nil {
		t.Error("m2 with a key that is not the bus's started")
	}
}

// waitFor waits up to 10 s for ok to hold.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
