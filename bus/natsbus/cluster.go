package natsbus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cluster joins the embedded server to other masters' embedded servers:
// nats-server's own clustering, so that three masters are one JetStream
// cluster with no other software. Every stream and bucket is then
// replicated (Config.Replicas) and acknowledged only once a quorum of the
// servers stored it, each fsyncing before it answers (sync_always).
type Cluster struct {
	// Name of the cluster; every master of it must say the same.
	Name string
	// Listen is host:port where this server accepts the others' routes.
	Listen string
	// Advertise is the host:port the others reach this one at, when it
	// is not Listen (behind NAT); empty advertises Listen.
	Advertise string
	// Routes are the other masters' route addresses (host:port or
	// nats-route:// URLs); this master's own may be listed too, so that
	// every master can share one list.
	Routes []string
	// User and Password, when set, are required of every route and used
	// on this server's own (a route URL with its own user wins).
	User, Password string
	// TLS secures the routes (both ways); nil is plain TCP.
	TLS *TLSFiles
}

// TLSFiles name PEM files for TLS: the CA that signs the peers' (or the
// server's) certificate, and this side's certificate and key.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

// serverTLS is the TLS configuration of the cluster's routes: each side
// presents its certificate and verifies the other's.
func (t *TLSFiles) serverTLS() (*tls.Config, error) {
	c, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.CertFile, KeyFile: t.KeyFile, CaFile: t.CAFile, Verify: t.CAFile != ""})
	if err != nil {
		return nil, fmt.Errorf("cluster tls: %w", err)
	}
	return c, nil
}

// routeURLs parses the routes, filling in the cluster's credentials.
func (c *Cluster) routeURLs() ([]*url.URL, error) {
	var out []*url.URL
	for _, r := range c.Routes {
		raw := r
		if !strings.Contains(raw, "://") {
			raw = "nats-route://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Port() == "" {
			return nil, fmt.Errorf("cluster route %q: want host:port or nats-route://host:port", r)
		}
		if u.User == nil && c.User != "" {
			u.User = url.UserPassword(c.User, c.Password)
		}
		out = append(out, u)
	}
	return out, nil
}

// clusterOptions sets the embedded server's options for cfg.Cluster.
func clusterOptions(opts *server.Options, cfg Config) error {
	c := cfg.Cluster
	if c.Name == "" {
		return errors.New("natsbus: a cluster needs a name")
	}
	if cfg.ServerName == "" {
		return errors.New("natsbus: a cluster member needs a server name (the master's id)")
	}
	host, port, err := splitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("natsbus: cluster listen %q: %w", c.Listen, err)
	}
	routes, err := c.routeURLs()
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	opts.ServerName = cfg.ServerName
	if opts.DontListen {
		// nats-server starts its routes only once its client listener is
		// up: a member listens on a loopback port of the system's choice.
		opts.DontListen = false
		opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	}
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: port, Advertise: c.Advertise,
		Username: c.User, Password: c.Password, ConnectRetries: -1,
		// A peer that stopped answering (a SIGSTOPped master, a cut
		// link) is noticed within seconds, not the default two minutes.
		PingInterval: 2 * time.Second, MaxPingsOut: 3}
	opts.Routes = routes
	if c.TLS != nil {
		if opts.Cluster.TLSConfig, err = c.TLS.serverTLS(); err != nil {
			return fmt.Errorf("natsbus: %w", err)
		}
		opts.Cluster.TLSTimeout = 5
	}
	// Every member fsyncs a write before it counts towards the quorum that
	// acknowledges it: with the default (a sync every two minutes) a
	// cluster that loses power everywhere at once loses acknowledged
	// events (Jepsen's NATS 2.10.22 analysis, 2025).
	opts.SyncAlways = true
	return nil
}

// clientOptions are the connection options for an external server: TLS,
// a credentials file, or a user and password.
func clientOptions(cfg Config) []nats.Option {
	var out []nats.Option
	if t := cfg.TLS; t != nil {
		if t.CAFile != "" {
			out = append(out, nats.RootCAs(t.CAFile))
		}
		if t.CertFile != "" {
			out = append(out, nats.ClientCert(t.CertFile, t.KeyFile))
		}
	}
	if cfg.Credentials != "" {
		out = append(out, nats.UserCredentials(cfg.Credentials))
	}
	if cfg.User != "" {
		out = append(out, nats.UserInfo(cfg.User, cfg.Password))
	}
	return out
}

// clusterLog remembers what the embedded server says that makes a cluster
// impossible, for Open to report instead of waiting for ever.
type clusterLog struct {
	mu      sync.Mutex
	refusal string
}

func (c *clusterLog) note(msg string) {
	var refusal string
	switch {
	case strings.Contains(msg, "cluster name") && strings.Contains(msg, "does not match"):
		refusal = "the other masters refuse this one: " + msg + " (bus.cluster.name must be the same on every master)"
	case strings.Contains(msg, "has a duplicate name"):
		_, name, _ := strings.Cut(msg, "duplicate name: ")
		refusal = fmt.Sprintf("another master with id %s is running in the cluster: every master needs its own id", name)
	default:
		return
	}
	c.mu.Lock()
	c.refusal = refusal
	c.mu.Unlock()
}

func (c *clusterLog) refused() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusal
}

// quorumWait is how often Open says it is still waiting for the cluster.
const quorumWait = 5 * time.Second

// awaitCluster returns once the JetStream cluster answers API requests (a
// meta leader is elected: a quorum of the masters is up), logging while it
// waits; a refusal by the peers (another cluster name) ends the wait with
// an error naming it.
func (b *Bus) awaitCluster(ctx context.Context) error {
	if b.cfg.Cluster == nil {
		return nil
	}
	start := time.Now()
	next := start.Add(quorumWait)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		if r := b.clog.refused(); r != "" {
			return fmt.Errorf("natsbus: %s", r)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("natsbus: waiting for a quorum of the cluster %q: %w", b.cfg.Cluster.Name, ctx.Err())
		}
		if time.Now().After(next) {
			b.cfg.Logger.Warn("waiting for a quorum of the cluster's masters", "cluster", b.cfg.Cluster.Name,
				"routes", b.ns.NumRoutes(), "waited", time.Since(start).Round(time.Second), "err", err)
			next = time.Now().Add(quorumWait)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkReplicas refuses a stream or bucket whose replicas differ from
// what this master is configured with: two masters disagreeing would
// otherwise rescale it back and forth at each start.
func (b *Bus) checkReplicas(kind, name string, have int) error {
	if have == 0 || have == b.cfg.Replicas {
		return nil
	}
	return fmt.Errorf("natsbus: %s %s has %d replica(s) but bus.replicas is %d here: every master must set the same "+
		"bus.replicas (to change it, stop the masters and use `nats stream edit %s --replicas N`)", kind, name, have, b.cfg.Replicas, name)
}

// streamReplicas returns the replicas of an existing stream (0 if none).
func (b *Bus) streamReplicas(ctx context.Context, name string) (replicas int, err error) {
	err = b.admin(ctx, func(ctx context.Context) error {
		s, err := b.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			replicas = 0
			return nil
		}
		if err != nil {
			return err
		}
		replicas = s.CachedInfo().Config.Replicas
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("natsbus: stream %s: %w", name, err)
	}
	return replicas, nil
}

// adminAttempt bounds the first try of a JetStream API call of Open's
// (later ones wait twice as long, up to adminAttemptMax): while several
// masters create the same stream at once, the cluster answers one of them
// and may leave the others without an answer, so they ask again.
const (
	adminAttempt    = time.Second
	adminAttemptMax = 8 * time.Second
)

// errAgain asks admin for another try.
var errAgain = errors.New("try again")

// admin runs a JetStream API call, again while the cluster does not answer
// or says it is busy, until ctx ends.
func (b *Bus) admin(ctx context.Context, call func(context.Context) error) error {
	wait := adminAttempt
	warned := false
	for {
		actx, cancel := context.WithTimeout(ctx, wait)
		err := call(actx)
		cancel()
		retry := unanswered(err) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, errAgain) || isNoPeers(err)
		if err == nil || !retry || ctx.Err() != nil {
			return err
		}
		if r := b.clog.refused(); r != "" {
			return errors.New(r)
		}
		if isNoPeers(err) && !warned {
			// A start that waits for it says why: every replica needs a
			// member of the cluster up.
			b.cfg.Logger.Warn("natsbus: waiting for enough masters of the cluster to place the replicas", "replicas", b.cfg.Replicas, "err", err)
			warned = true
		}
		b.cfg.Logger.Debug("natsbus: the cluster did not answer; asking again", "err", err)
		wait = min(2*wait, adminAttemptMax)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// isNoPeers: JetStream's "no suitable peers for placement", a replicated
// stream or bucket asked for before the meta leader has heard from enough
// peers, as when the masters of a cluster start together. Asked again
// until the caller's deadline, it is the error a cluster with too few
// members ends with.
func isNoPeers(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeNoPeers
}

// errCodeNoPeers is JetStream's error code for "no suitable peers for
// placement" (nats.go names no constant for it).
const errCodeNoPeers jetstream.ErrorCode = 10005

// ClusterState is what health checks and metrics say of the cluster.
type ClusterState struct {
	// Clustered is false for a single embedded server.
	Clustered bool `json:"clustered"`
	// Name of the cluster, and this server's name in it.
	Name   string `json:"name,omitempty"`
	Server string `json:"server,omitempty"`
	// MetaLeader is the server that places streams (embedded only).
	MetaLeader string `json:"meta_leader,omitempty"`
	// Leader of the event stream, which orders and acknowledges writes.
	Leader string `json:"leader,omitempty"`
	// Peers are the event stream's replicas (the leader excluded).
	Peers []Peer `json:"peers,omitempty"`
	// Routes is how many cluster routes this server has up.
	Routes int `json:"routes"`
	// Quorum is whether the event stream has a leader, i.e. accepts writes.
	Quorum bool `json:"quorum"`
}

// Peer is one replica of the event stream.
type Peer struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Active  time.Duration `json:"active_ns"`
	// Lag is how many operations it is behind the leader.
	Lag uint64 `json:"lag"`
}

// ClusterState reports the cluster as this master sees it.
func (b *Bus) ClusterState(ctx context.Context) (ClusterState, error) {
	st := ClusterState{Clustered: b.cfg.Cluster != nil || b.cfg.URL != ""}
	if b.ns != nil {
		st.Server = b.ns.Name()
		st.Routes = b.ns.NumRoutes()
		if b.cfg.Cluster != nil {
			st.Name = b.cfg.Cluster.Name
			if jsz, err := b.ns.Jsz(&server.JSzOptions{}); err == nil && jsz.Meta != nil {
				st.MetaLeader = jsz.Meta.Leader
			}
		}
	}
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	info, err := b.stream.Info(ictx)
	if err != nil {
		return st, fmt.Errorf("event stream: %w", err)
	}
	if c := info.Cluster; c != nil {
		if st.Name == "" {
			st.Name = c.Name
		}
		st.Leader = c.Leader
		st.Quorum = c.Leader != ""
		for _, p := range c.Replicas {
			st.Peers = append(st.Peers, Peer{Name: p.Name, Current: p.Current, Offline: p.Offline, Active: p.Active, Lag: p.Lag})
		}
		slices.SortFunc(st.Peers, func(a, b Peer) int { return strings.Compare(a.Name, b.Name) })
	} else {
		st.Quorum = true
	}
	return st, nil
}

// clusterSubjects is the prefix of the masters' messages to each other,
// outside the event stream: they are requests between live masters (a job
// for an agent connected to another master, its return), not events.
const clusterSubjects = "brine.cluster."

// Handle answers the requests sent to subject (under the cluster prefix)
// with what h returns; a nil answer sends none. It stops with ctx.
func (b *Bus) Handle(ctx context.Context, subject string, h func(data []byte) []byte) error {
	sub, err := b.nc.Subscribe(clusterSubjects+subject, func(m *nats.Msg) {
		if out := h(m.Data); out != nil && m.Reply != "" {
			_ = m.Respond(out)
		}
	})
	if err != nil {
		return fmt.Errorf("natsbus: handle %s: %w", subject, err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nil
}

// Request sends data to the master handling subject and returns its
// answer; ErrNoResponders when none handles it.
func (b *Bus) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	m, err := b.nc.RequestWithContext(ctx, clusterSubjects+subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, fmt.Errorf("%w: %s", ErrNoResponders, subject)
	}
	if err != nil {
		return nil, fmt.Errorf("natsbus: request %s: %w", subject, err)
	}
	return m.Data, nil
}

// Send sends data to whoever handles subject, without an answer.
func (b *Bus) Send(subject string, data []byte) error {
	if err := b.nc.Publish(clusterSubjects+subject, data); err != nil {
		return fmt.Errorf("natsbus: send %s: %w", subject, err)
	}
	return nil
}

// ErrNoResponders: no master handles the subject (it is not running).
var ErrNoResponders = errors.New("no master answers")
