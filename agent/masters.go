package agent

// Several masters, as Salt's minion has them. A list of masters means one
// of two things (master_type):
//
//   - str, Salt's default, "hot" multi-master: the agent keeps a
//     connection to every master of the list, runs the jobs any of them
//     sends (a jid seen twice runs once) and returns each job to the master
//     it came from. Its own messages — start events, events, the mine — go
//     over one connection only, the first of the list that is up: brine's
//     masters share one event store, which would otherwise keep each
//     message once per master (a message re-sent over another connection
//     keeps its id, which the store keeps once).
//   - failover: one connection at a time, to the first master of the list
//     that answers; when it is lost, or stops answering the liveness check
//     (master_alive_interval), the agent moves on to the next, wrapping
//     round, so that the master just lost is tried last (Salt moves it to
//     the end of its list). With master_failback it returns to the first
//     master of the list as soon as that one answers again.
//
// Each connection is a link, which dials, authenticates, checks liveness
// and reconnects by itself; the agent's session (session.go) serves
// whichever links are up.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/internal/backoff"
	"github.com/brinehq/brine/wire"
)

// Salt's master_type values brine implements.
const (
	MasterTypeStr      = "str"
	MasterTypeFailover = "failover"
)

// DefaultFailoverAliveInterval is master_alive_interval's default with
// master_type failover, in seconds. Salt's 0 never notices a master that
// hangs with its connections open (a SIGSTOP, a host out of memory): its
// kernel keeps the TCP connection up. Checking every 3 s, and leaving a
// master that does not answer within 3 s, moves an agent within 10 s of the
// failure: at most 3 s until the next check, 3 s of waiting for its answer,
// and the connection to the next master.
const DefaultFailoverAliveInterval = 3

// How long the agent waits on a master.
const (
	// dialTimeout bounds a connection to a master, key exchange included,
	// when the agent has no other master to try.
	dialTimeout = 10 * time.Second
	// failoverDialTimeout bounds it when there is a next master to try: a
	// master that accepts connections but does not answer (stopped, or
	// its host overloaded) must not hold the agent for long.
	failoverDialTimeout = 4 * time.Second
	// refusedRetry bounds the wait before dialling again a master whose
	// port refused the connection: the agent gives up such a dial within a
	// second, so it finds a restarted master within seconds.
	refusedRetry = 3 * time.Second
	// helloTimeout bounds each hello, so that a master that hangs while
	// the key is pending is left too.
	helloTimeout = time.Minute
	// deliverTimeout bounds the delivery of one queued message.
	deliverTimeout = time.Minute
)

// pingMethod is what a liveness check asks. Any answer, an error reply
// included (an older master that does not know the method says so), shows
// that the master reads and answers its connections; only silence is death.
const pingMethod = wire.MethodPing

// validateMasters checks the keys of several masters and applies their
// defaults; bad reports a key's value with its file and line.
func (l *Loaded) validateMasters(bad func(key, format string, args ...any) error) error {
	c := &l.Config
	switch c.MasterType {
	case MasterTypeStr, MasterTypeFailover:
	case "func", "disable", "distributed":
		return bad("master_type", "%q is not one of str, failover (Salt's %s is not supported)", c.MasterType, c.MasterType)
	default:
		return bad("master_type", "%q is not one of str, failover", c.MasterType)
	}
	if c.RetryDNS < 0 {
		return bad("retry_dns", "%g is below 0", c.RetryDNS)
	}
	if c.RetryDNSCount != nil && *c.RetryDNSCount < 0 {
		return bad("retry_dns_count", "%d is below 0", *c.RetryDNSCount)
	}
	if c.MasterShuffle {
		l.Notes = append(l.Notes, "master_shuffle is Salt's deprecated name of random_master; use random_master")
		c.RandomMaster = true
	}
	if c.RandomMaster && len(c.Master) == 1 {
		l.Notes = append(l.Notes, "random_master is set but there is only one master; ignored")
	}
	if c.MasterType != MasterTypeFailover {
		if c.MasterFailback {
			l.Notes = append(l.Notes, "master_failback is used only with master_type: failover; ignored")
		}
		return nil
	}
	// A single master is a list of one, as Salt makes it for failover
	// (its issue 23611): it is left, and connected to again, when it stops
	// answering.
	if !l.Tree.Has("master_alive_interval") {
		c.MasterAliveInterval = DefaultFailoverAliveInterval
	}
	if c.MasterFailback && c.MasterFailbackInterval == 0 && c.MasterAliveInterval == 0 {
		return bad("master_failback", "needs master_failback_interval (or master_alive_interval) above 0: how often to check the first master")
	}
	return nil
}

// hot reports whether the agent connects to all its masters at once.
func (c *Config) hot() bool { return c.MasterType != MasterTypeFailover }

// aliveEvery is the period of the liveness check (0: none).
func (c *Config) aliveEvery() time.Duration {
	return time.Duration(c.MasterAliveInterval) * time.Second
}

// aliveTimeout is how long a liveness check waits for its answer: the
// period, but no less than 2 s (a busy master is not a dead one) and no
// more than 10 s.
func aliveTimeout(every time.Duration) time.Duration {
	return min(max(every, 2*time.Second), 10*time.Second)
}

// failbackEvery is how often a failover agent away from its first master
// checks it (0: never): master_failback_interval, or Salt's fallback,
// master_alive_interval.
func (c *Config) failbackEvery() time.Duration {
	if c.MasterType != MasterTypeFailover || !c.MasterFailback {
		return 0
	}
	if c.MasterFailbackInterval > 0 {
		return time.Duration(c.MasterFailbackInterval) * time.Second
	}
	return c.aliveEvery()
}

// retryDNSEvery is retry_dns as a duration.
func (c *Config) retryDNSEvery() time.Duration {
	return time.Duration(c.RetryDNS * float64(time.Second))
}

// connection is what makes a new connection necessary when it changes
// on reload: the masters and how they are used.
type connection struct {
	addrs                                  string
	finger, typ                            string
	random, failback                       bool
	alive, failbackInterval, retryDNSCount int
	retryDNS                               float64
}

func (c *Config) connection() connection {
	n := -1
	if c.RetryDNSCount != nil {
		n = *c.RetryDNSCount
	}
	return connection{addrs: strings.Join(c.Addrs(), " "), finger: c.MasterFinger, typ: c.MasterType,
		random: c.RandomMaster, failback: c.MasterFailback, alive: c.MasterAliveInterval,
		failbackInterval: c.MasterFailbackInterval, retryDNSCount: n, retryDNS: c.RetryDNS}
}

// masterOrder is the order in which a list of masters is used: as
// configured, or shuffled by random_master; with master_failback in
// failover mode the first stays first (it is where the agent returns to)
// and only the others are shuffled, as Salt does. shuffle is
// rand.Shuffle's signature.
func masterOrder(addrs []string, random, keepFirst bool, shuffle func(n int, swap func(i, j int))) []string {
	out := slices.Clone(addrs)
	if !random || len(out) < 2 {
		return out
	}
	tail := out
	if keepFirst {
		tail = out[1:]
	}
	shuffle(len(tail), func(i, j int) { tail[i], tail[j] = tail[j], tail[i] })
	return out
}

// nextMaster is the index of the master a failover agent tries first after
// losing the one at index lost, of n: the next, wrapping round, so that the
// lost one is tried last; after a failback, the first.
func nextMaster(n, lost int, failback bool) int {
	if failback || n == 0 {
		return 0
	}
	return (lost + 1) % n
}

// attempts lists the indexes of n masters in the order they are tried,
// from start, wrapping round.
func attempts(n, start int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = (start + k) % n
	}
	return out
}

// link is one connection to a master: in hot mode one per master of the
// list, each to its own; in failover mode one, which moves along the list.
type link struct {
	// order is the masters the link may connect to, in order.
	order []string
	// accepted is signalled when the master says the key was accepted.
	accepted chan struct{}

	mu     sync.Mutex
	cli    *gateway.Client // the accepted connection; nil while there is none
	addr   string          // the master cli is connected to
	reason string          // why the agent closed cli, when it did
}

// newLinks are the links a configuration asks for.
func newLinks(c *Config) []*link {
	addrs := c.Addrs()
	order := masterOrder(addrs, c.RandomMaster, !c.hot() && c.MasterFailback, rand.Shuffle)
	if !c.hot() {
		return []*link{{order: order, accepted: make(chan struct{}, 1)}}
	}
	links := make([]*link, len(order))
	for i, addr := range order {
		links[i] = &link{order: []string{addr}, accepted: make(chan struct{}, 1)}
	}
	return links
}

// client is the link's accepted connection and its master (nil, "" while
// there is none).
func (l *link) client() (*gateway.Client, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cli, l.addr
}

func (l *link) set(cli *gateway.Client, addr string) {
	l.mu.Lock()
	l.cli, l.addr, l.reason = cli, addr, ""
	l.mu.Unlock()
}

// fail closes cli, if it still is the link's connection, for the reason
// err: a delivery that failed, a master that stopped answering. The link
// then connects again.
func (l *link) fail(cli *gateway.Client, err error) {
	l.mu.Lock()
	if l.cli != cli || cli == nil {
		l.mu.Unlock()
		return
	}
	if l.reason == "" {
		l.reason = err.Error()
	}
	l.mu.Unlock()
	cli.Close()
}

func (l *link) why() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

func notify(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// errUnresolvable is a master whose name did not resolve within retry_dns
// and retry_dns_count.
var errUnresolvable = errors.New("the master's name does not resolve")

// keepLink keeps l connected until ctx ends, signalling changed whenever
// its connection comes up or goes; it returns an error only when the link
// must give up: a master that does not hold the trusted key, a name that
// does not resolve within retry_dns_count.
func (a *Agent) keepLink(ctx context.Context, cfg *Loaded, l *link, changed chan<- struct{}) error {
	next, lost, why := 0, "", ""
	for ctx.Err() == nil {
		if lost != "" && len(l.order) == 1 {
			// Salt's random_reauth_delay: agents that lost a master
			// together do not all return at the same instant. An agent
			// failing over to another master goes at once: it must be
			// back within seconds, and its peers spread over the list.
			if d := time.Duration(cfg.RandomReauthDelay) * time.Second; d > 0 {
				select {
				case <-time.After(rand.N(d)):
				case <-ctx.Done():
					return nil
				}
			}
		}
		cli, i, err := a.connectFrom(ctx, cfg, l, next)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		addr := l.order[i]
		if lost != "" && addr != lost {
			a.log.Warn("failing over to master", "from", lost, "to", addr, "reason", why)
		}
		failback := false
		if err := a.authenticate(ctx, cli, l); err != nil {
			why = err.Error()
		} else {
			l.set(cli, addr)
			notify(changed)
			why, failback = a.watch(ctx, cfg, l, cli, i)
			l.set(nil, "")
			notify(changed)
		}
		cli.Close()
		if ctx.Err() != nil {
			return nil
		}
		lost, next = addr, nextMaster(len(l.order), i, failback)
		if !failback {
			a.log.Warn("connection to the master lost; reconnecting", "master", addr, "err", why)
		}
	}
	return nil
}

// connectFrom connects to the first of l's masters that answers, from
// index start, wrapping round, with a growing wait between rounds; it
// returns the connection and the index of its master. A master whose name
// does not resolve is skipped when there is another to try; a lone one is
// tried again every retry_dns seconds, up to retry_dns_count times (Salt's
// resolve_dns). A master key that does not match the pinned one ends it:
// retrying would not make the master trustworthy.
func (a *Agent) connectFrom(ctx context.Context, cfg *Loaded, l *link, start int) (*gateway.Client, int, error) {
	n := len(l.order)
	timeout := dialTimeout
	if n > 1 {
		timeout = failoverDialTimeout
	}
	dnsRetries := 0
	said, saidAt := map[string]string{}, map[string]time.Time{}
	for round := 1; ; round++ {
		wait := backoff.Delay(time.Second, 30*time.Second, round)
		for _, i := range attempts(n, start) {
			addr := l.order[i]
			cli, err := a.dialLink(ctx, cfg, l, addr, timeout)
			if err == nil {
				return cli, i, nil
			}
			if errors.Is(err, ErrMasterKey) {
				a.log.Error("refusing the master", "master", addr, "err", err)
				return nil, i, err
			}
			if ctx.Err() != nil {
				return nil, i, ctx.Err()
			}
			var dns *net.DNSError
			if n == 1 && errors.As(err, &dns) {
				if cfg.RetryDNS == 0 || (cfg.RetryDNSCount != nil && dnsRetries >= *cfg.RetryDNSCount) {
					return nil, i, fmt.Errorf("%w: %s (retry_dns %g, retry_dns_count %s): %w",
						errUnresolvable, addr, cfg.RetryDNS, retryCount(cfg.RetryDNSCount), err)
				}
				dnsRetries++
				wait = cfg.retryDNSEvery()
				a.log.Error("the master's name does not resolve; retrying in retry_dns seconds", "master", addr,
					"retry_dns", cfg.RetryDNS, "attempt", dnsRetries, "err", err)
				continue
			}
			dnsRetries = 0
			if ue, ok := errors.AsType[*gateway.UnreachableError](err); ok {
				// Said at once, with the reason ("connection refused", "…
				// is the master's publish port, not its request port"),
				// rather than after a dial timeout of silence.
				level := slog.LevelWarn
				if said[addr] == ue.Reason && time.Since(saidAt[addr]) < time.Minute {
					level = slog.LevelDebug // said already: no line every few seconds
				} else {
					said[addr], saidAt[addr] = ue.Reason, time.Now()
				}
				a.log.Log(ctx, level, "master not reachable", "master", addr, "reason", ue.Reason)
				if errors.Is(err, syscall.ECONNREFUSED) {
					// Nothing listens there yet (a master restarting):
					// look again soon rather than after a long backoff.
					wait = min(wait, refusedRetry)
				}
				continue
			}
			a.log.Warn("master not reachable", "master", addr, "err", err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

func retryCount(n *int) string {
	if n == nil {
		return "unset"
	}
	return fmt.Sprint(*n)
}

// dialLink connects to the master at addr for l: what the master pushes
// on the connection is served as coming from addr.
func (a *Agent) dialLink(ctx context.Context, cfg *Loaded, l *link, addr string, timeout time.Duration) (*gateway.Client, error) {
	if err := resolve(ctx, addr); err != nil {
		return nil, err
	}
	var self atomic.Pointer[gateway.Client]
	cli, err := a.dial(ctx, cfg, addr, timeout, func(method string, body []byte) {
		a.push(l, addr, self.Load(), method, body)
	})
	if err != nil {
		return nil, err
	}
	self.Store(cli)
	return cli, nil
}

// lookupHost resolves a master's name; tests give the resolver's answer
// without asking a DNS server, whose delays are not theirs to time.
var lookupHost = net.DefaultResolver.LookupHost

// resolve looks the host of endpoint addr up, so that a name that does not
// resolve is told from a master that does not answer (a *net.DNSError).
func resolve(ctx context.Context, addr string) error {
	host, _, err := net.SplitHostPort(strings.TrimPrefix(addr, "tcp://"))
	if err != nil || net.ParseIP(host) != nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if _, err := lookupHost(rctx, host); err != nil {
		return fmt.Errorf("master %s: %w", addr, err)
	}
	return nil
}

// watch waits until cli, l's connection to its master at index cur of its
// order, ends, and says why. Every master_alive_interval it checks that the
// master answers, and leaves it when it does not; with master_failback,
// away from the first master, it checks that one every
// master_failback_interval, and leaves for it (failback) once it answers.
func (a *Agent) watch(ctx context.Context, cfg *Loaded, l *link, cli *gateway.Client, cur int) (why string, failback bool) {
	var alive, back <-chan time.Time
	every := cfg.aliveEvery()
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		alive = t.C
	}
	backEvery := cfg.failbackEvery()
	if backEvery > 0 && cur != 0 && len(l.order) > 1 {
		t := time.NewTicker(backEvery)
		defer t.Stop()
		back = t.C
	}
	// A probe of the first master runs aside, so that the liveness check
	// of the current one goes on while it waits on a dead master.
	probed := make(chan error, 1)
	probing := false
	for {
		select {
		case <-ctx.Done():
			return "the agent is stopping", false
		case <-cli.Done():
			if r := l.why(); r != "" {
				return r, false
			}
			return "connection closed by the master", false
		case <-alive:
			if err := ping(ctx, cli, aliveTimeout(every)); err != nil && ctx.Err() == nil {
				return fmt.Sprintf("the master did not answer the liveness check (master_alive_interval %d): %v",
					cfg.MasterAliveInterval, err), false
			}
		case <-back:
			if !probing {
				probing = true
				go func() { probed <- a.probe(ctx, cfg, l.order[0], aliveTimeout(backEvery)) }()
			}
		case err := <-probed:
			probing = false
			if err != nil {
				a.log.Debug("master_failback: the first master does not answer yet", "master", l.order[0], "err", err)
				continue
			}
			return "master_failback: the first master of the list answers again", true
		}
	}
}

// ping checks that the master at the other end of cli answers within
// timeout.
func ping(ctx context.Context, cli *gateway.Client, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := cli.Call(pctx, pingMethod, struct{}{}, nil)
	var re *gateway.RemoteError
	if err == nil || errors.As(err, &re) {
		return nil
	}
	return err
}

// probe checks that the master at addr accepts a connection, proves it
// holds the trusted key and answers, within timeout (Salt's
// status.ping_master).
func (a *Agent) probe(ctx context.Context, cfg *Loaded, addr string, timeout time.Duration) error {
	if err := resolve(ctx, addr); err != nil {
		return err
	}
	cli, err := a.dial(ctx, cfg, addr, timeout, nil)
	if err != nil {
		return err
	}
	defer cli.Close()
	return ping(ctx, cli, timeout)
}

// Masters are the masters the agent is connected to, accepted, in the
// order it uses them (its status: `brine agent` logs them as they change).
func (a *Agent) Masters() []string {
	p := a.links.Load()
	if p == nil {
		return nil
	}
	var out []string
	for _, l := range *p {
		if c, addr := l.client(); c != nil {
			out = append(out, addr)
		}
	}
	return out
}
