// Command cluster measures the event store of several masters: events/s
// acknowledged by an R3 JetStream cluster of three embedded servers on
// this machine (every member fsyncs before it acknowledges), with a lone
// embedded server's figure from the same run beside it, and how long the
// cluster takes to accept writes again after a member is killed.
//
// The three servers run in this process, as three masters' would in
// theirs; their routes go over loopback TCP and their stores are separate
// directories on the same disk.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinehq/brine/bench/report"
	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/internal/loopback"
)

type throughput struct {
	Name         string  `json:"name"`
	Events       int     `json:"events"`
	Publishers   int     `json:"publishers"`
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_sec"`
	Errors       int64   `json:"errors"`
}

func main() {
	out := flag.String("out", "bench/results/cluster.json", "where to write the JSON report")
	n := flag.Int("events", 60000, "events per scenario")
	conc := flag.Int("publishers", 192, "concurrent publishers (spread over the masters)")
	flag.Parse()
	report.Main("bench/cluster", "", func(ctx context.Context) error { return run(ctx, *out, *n, *conc) })
}

func run(ctx context.Context, out string, n, conc int) error {
	rep := report.New("cluster")
	rep.Setup["events"], rep.Setup["publishers"] = fmt.Sprint(n), fmt.Sprint(conc)
	rep.Setup["load_avg_before"] = report.LoadAvg()
	quiet := slog.New(slog.DiscardHandler)
	dir, err := os.MkdirTemp("", "brine-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if fs, err := report.ProbeFsync(dir, 200); err == nil {
		rep.Setup["fsync"] = fs
	}

	// One master alone (group commit), then the R3 cluster.
	single, err := natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, "single"), Logger: quiet})
	if err != nil {
		return err
	}
	one := measure(ctx, "single embedded server", []*natsbus.Bus{single}, n, conc)
	single.Close()

	buses, err := cluster(ctx, dir, quiet)
	if err != nil {
		return err
	}
	three := measure(ctx, "R3 cluster of three masters", buses, n, conc)
	res := map[string]any{"throughput": []throughput{one, three}}
	rep.Results = res
	rep.Check("R3 cluster of three masters", "events_per_sec", ">=", 20000, three.EventsPerSec)
	if one.Errors+three.Errors > 0 {
		rep.Fail(fmt.Sprintf("%d publish errors", one.Errors+three.Errors))
	}

	// Shut the stream's leader down: how long until a write is acknowledged
	// again (it steps down first; a crashed leader waits for an election).
	st, err := buses[0].ClusterState(ctx)
	if err != nil {
		return err
	}
	leader := 0
	for i, b := range buses {
		if s, _ := b.ClusterState(ctx); s.Server == st.Leader {
			leader = i
		}
	}
	buses[leader].Close()
	other := buses[(leader+1)%3]
	start := time.Now()
	for {
		ev, _ := bus.NewEvent("bench/after", nil, bus.Origin{Source: "bench"})
		if err := other.Publish(ctx, ev); err == nil {
			break
		} else if !errors.Is(err, bus.ErrNotStored) {
			return err
		}
	}
	reelect := time.Since(start)
	res["writes_after_leader_killed_ms"] = report.Round(float64(reelect)/float64(time.Millisecond), 1)
	rep.Check("leader killed", "writes_again_ms", "<=", 5000, report.Round(float64(reelect)/float64(time.Millisecond), 1))
	for i, b := range buses {
		if i != leader {
			b.Close()
		}
	}
	rep.Setup["load_avg_after"] = report.LoadAvg()
	rep.Notes = append(rep.Notes,
		"events/s: acknowledged Publish calls (each event its own message, so that the cluster's duplicate window catches an event re-sent to another master); single: the lone embedded server's group commit and batching",
		"the three servers share this machine's 2 cores and one disk; in production each master has its own",
		"writes_after_leader_killed_ms: the leader's server is shut down (it steps down, so the election is immediate); a SIGKILLed or hung leader is replaced after the Raft election timeout, seconds (TestMasterCluster: its failover agent was accepted 5.7 s after its master's SIGKILL in one run)")
	return rep.Write(out)
}

// cluster opens three embedded servers routed to each other.
func cluster(ctx context.Context, dir string, log *slog.Logger) ([]*natsbus.Bus, error) {
	var routes []string
	for range 3 {
		p, err := loopback.Port()
		if err != nil {
			return nil, err
		}
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
	}
	buses := make([]*natsbus.Bus, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			buses[i], errs[i] = natsbus.Open(ctx, natsbus.Config{Dir: filepath.Join(dir, fmt.Sprint("m", i)), ServerName: fmt.Sprint("m", i+1),
				Logger: log, Cluster: &natsbus.Cluster{Name: "bench", Listen: routes[i], Routes: routes}})
		})
	}
	wg.Wait()
	return buses, errors.Join(errs...)
}

// measure publishes n events from conc publishers spread over buses.
func measure(ctx context.Context, name string, buses []*natsbus.Bus, n, conc int) throughput {
	var next, errs atomic.Int64
	pad := string(make([]byte, 200))
	start := time.Now()
	var wg sync.WaitGroup
	for w := range conc {
		b := buses[w%len(buses)]
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				ev, err := bus.NewEvent("bench/cluster/event", map[string]any{"pad": pad}, bus.Origin{Source: "bench"})
				if err == nil {
					err = b.Publish(ctx, ev)
				}
				if err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "%s: %d events in %.2fs (%.0f/s), %d errors\n", name, n, secs, float64(n)/secs, errs.Load())
	return throughput{Name: name, Events: n, Publishers: conc, Seconds: report.Round(secs, 3),
		EventsPerSec: report.Round(float64(n)/secs, 0), Errors: errs.Load()}
}
