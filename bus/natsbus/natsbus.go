// Package natsbus is the durable event bus on NATS JetStream: an embedded
// nats-server inside the master by default, or an existing NATS server or
// cluster when a URL is configured.
//
// Every event is one message on the stream BRINE_EVENTS under the subject
// Subject(tag), with the event id as Nats-Msg-Id so that a re-sent event is
// stored once. On the embedded server, Publish returns only after the event is
// on disk: JetStream's own sync_always fsyncs every message (about 10,000/s on
// a 2-core VM), so the bus fsyncs the stream's block files itself, once for
// all the events acknowledged since the previous sync (group commit).
//
// Several masters form one JetStream cluster of their embedded servers
// (Config.Cluster, cluster.go): every stream and bucket then has
// Config.Replicas copies, each member fsyncs a write before it counts
// towards the quorum that acknowledges it, and each event is a message of
// its own, so that JetStream's duplicate detection catches an event re-sent
// to another master.
package natsbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/brinehq/brine/bus"
)

// StreamName is the JetStream stream that holds every event.
const StreamName = "BRINE_EVENTS"

// Config selects and tunes the backend. The zero value (with Dir set) is an
// embedded server with sensible limits.
type Config struct {
	// Dir is the data directory; the embedded server stores under Dir/jetstream.
	Dir string
	// URL of an existing NATS server or cluster; empty runs an embedded one.
	URL string
	// Listen exposes the embedded server on this loopback address (for the
	// nats CLI or other masters); empty means in-process connections only.
	Listen string
	// MaxEventSize bounds an encoded event (default bus.DefaultMaxEventSize).
	MaxEventSize int
	// MaxAge is how long events are kept (default 7 days).
	MaxAge time.Duration
	// MaxBytes bounds the stream size on disk (default unlimited).
	MaxBytes int64
	// Duplicates is the window in which a re-sent event id is recognised
	// (default 10 minutes).
	Duplicates time.Duration
	// Replicas of the stream and every bucket on a cluster (default 1, or
	// 3 with Cluster set).
	Replicas int
	// ServerName names the embedded server (the master's id); a cluster
	// member needs one unique in the cluster.
	ServerName string
	// Cluster joins the embedded server to other masters' (nil: alone).
	Cluster *Cluster
	// TLS, Credentials (a .creds file) and User/Password authenticate the
	// connection to URL.
	TLS            *TLSFiles
	Credentials    string
	User, Password string
	// Logger receives the embedded server's log (default slog.Default()).
	Logger *slog.Logger
	// PublishTimeout bounds the wait for a write's acknowledgement (default
	// 10 s): a cluster without quorum refuses writes after it, and the
	// sender keeps the event to send again.
	PublishTimeout time.Duration
}

func (c *Config) setDefaults() {
	if c.MaxEventSize <= 0 {
		c.MaxEventSize = bus.DefaultMaxEventSize
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 7 * 24 * time.Hour
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = -1
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 10 * time.Minute
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
		if c.Cluster != nil {
			c.Replicas = 3
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = 10 * time.Second
	}
}

// Bus is the JetStream implementation of bus.Bus.
type Bus struct {
	cfg    Config
	ns     *server.Server // nil when connected to an external server
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	sync   *syncer // nil when durability is the server's business (a cluster, a URL)
	kvSync map[string]*syncer
	// On the embedded server, events are published in batches (batch.go)
	// and seen catches re-sent ids; both nil on an external server.
	batch *batcher
	seen  *idIndex
	// clog catches a cluster's refusal of this server while Open waits.
	clog clusterLog

	mu     sync.Mutex
	subs   map[*subscription]struct{}
	closed bool
}

var _ bus.Bus = (*Bus)(nil)

// Open starts (or connects to) the server and makes sure the event stream
// exists with the configured limits.
func Open(ctx context.Context, cfg Config) (*Bus, error) {
	cfg.setDefaults()
	b := &Bus{cfg: cfg, subs: make(map[*subscription]struct{}), kvSync: make(map[string]*syncer)}
	if cfg.Cluster != nil && cfg.URL != "" {
		return nil, errors.New("natsbus: a cluster of embedded servers and a NATS URL exclude each other")
	}
	opts := []nats.Option{nats.Name("brine"), nats.MaxReconnects(-1)}
	url := cfg.URL
	if url == "" {
		if cfg.Dir == "" {
			return nil, errors.New("natsbus: a data directory or a NATS URL is required")
		}
		ns, err := startEmbedded(cfg, &b.clog)
		if err != nil {
			return nil, err
		}
		b.ns = ns
		opts = append(opts, nats.InProcessServer(ns))
	} else {
		opts = append(opts, clientOptions(cfg)...)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		b.shutdownServer()
		return nil, fmt.Errorf("natsbus: connect %s: %w", displayURL(url), err)
	}
	b.nc = nc
	// A write the cluster cannot acknowledge (no quorum) fails after
	// PublishTimeout rather than hanging: the sender keeps it and retries.
	b.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(8192), jetstream.WithPublishAsyncTimeout(cfg.PublishTimeout))
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("natsbus: jetstream: %w", err)
	}
	if err := b.awaitCluster(ctx); err != nil {
		b.Close()
		return nil, err
	}
	if have, err := b.streamReplicas(ctx, StreamName); err != nil {
		b.Close()
		return nil, err
	} else if err := b.checkReplicas("the event stream", StreamName, have); err != nil {
		b.Close()
		return nil, err
	}
	streamCfg := jetstream.StreamConfig{
		Name:        StreamName,
		Description: "brine events",
		Subjects:    []string{subjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      cfg.MaxAge,
		MaxBytes:    cfg.MaxBytes,
		MaxMsgSize:  int32(cfg.MaxEventSize + 4096),
		Duplicates:  cfg.Duplicates,
		Replicas:    cfg.Replicas,
	}
	err = b.admin(ctx, func(ctx context.Context) (err error) {
		b.stream, err = b.js.CreateOrUpdateStream(ctx, streamCfg)
		return err
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("natsbus: stream %s: %w", StreamName, err)
	}
	if b.ns != nil && cfg.Cluster == nil {
		dir := filepath.Join(cfg.Dir, "jetstream", server.DEFAULT_GLOBAL_ACCOUNT, "streams", StreamName, "msgs")
		b.sync = newSyncer(dir)
		b.seen = newIDIndex(cfg.Duplicates)
		if err := b.rememberStored(ctx); err != nil {
			b.Close()
			return nil, fmt.Errorf("natsbus: %w", err)
		}
		b.batch = newBatcher(b.js, cfg.MaxEventSize, b.seen)
	}
	return b, nil
}

func startEmbedded(cfg Config, clog *clusterLog) (*server.Server, error) {
	opts := &server.Options{
		ServerName:         "brine",
		JetStream:          true,
		StoreDir:           cfg.Dir, // the server adds "jetstream"
		NoSigs:             true,
		DontListen:         cfg.Listen == "",
		MaxPayload:         int32(cfg.MaxEventSize + 4096),
		JetStreamMaxMemory: 256 << 20,
		// The bus fsyncs itself (group commit); the server's periodic sync
		// only covers its index files.
		SyncInterval: 2 * time.Minute,
	}
	if cfg.Listen != "" {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: listen %q: %w", cfg.Listen, err)
		}
		opts.Host, opts.Port = host, port
	}
	if cfg.Cluster != nil {
		if err := clusterOptions(opts, cfg); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(opts.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsbus: embedded server: %w", err)
	}
	ns.SetLoggerV2(&serverLog{l: cfg.Logger.With("component", "nats"), note: clog.note}, false, false, false)
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("natsbus: embedded server did not start within 30s")
	}
	return ns, nil
}

// Publish stores ev and returns once it is durable.
func (b *Bus) Publish(ctx context.Context, ev *bus.Event) error {
	data, err := ev.Validate(b.cfg.MaxEventSize)
	if err != nil {
		return err
	}
	if b.batch != nil {
		seq, err := b.batch.publish(ctx, ev, data)
		if err != nil {
			return fmt.Errorf("publish %q: %w", ev.Tag, err)
		}
		return b.flush(ctx, seq)
	}
	msg := &nats.Msg{Subject: Subject(ev.Tag), Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, ev.ID)
	// Sent again (the same id: stored once) while the cluster elects a
	// new leader for the stream, up to PublishTimeout. A leader that hung
	// (SIGSTOP, a cut link) keeps what was sent to it, so an attempt
	// unanswered for resendAfter is sent again rather than waited for: the
	// one after the election is stored.
	err = b.untilStored(ctx, func() error {
		f, err := b.js.PublishMsgAsync(msg, jetstream.WithStallWait(time.Minute))
		if err != nil {
			return err
		}
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return err
		case <-time.After(resendAfter):
			return jetstream.ErrAsyncPublishTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		return fmt.Errorf("publish %q: %w", ev.Tag, err)
	}
	return b.flush(ctx, 0)
}

// resendAfter is how long an event's write waits for its acknowledgement
// before it is sent again; far above an acknowledgement's time in a
// healthy cluster (milliseconds) and below a Raft election's (seconds).
const resendAfter = 2 * time.Second

// untilStored runs a write again while the server says nothing stores it
// (no leader for the stream: an election after a member died), until
// PublishTimeout has passed; then the error is bus.ErrNotStored.
func (b *Bus) untilStored(ctx context.Context, write func() error) error {
	return b.untilAnswered(ctx, func() error { return notStored(write()) },
		func(err error) bool { return errors.Is(err, bus.ErrNotStored) })
}

// untilAnswered runs op again, a moment later, while its error is one
// that again (a cluster electing a leader in place of a lost one), until
// ctx ends or PublishTimeout has passed; then it returns op's last error.
func (b *Bus) untilAnswered(ctx context.Context, op func() error, again func(error) bool) error {
	deadline := time.Now().Add(b.cfg.PublishTimeout)
	for {
		err := op()
		if err == nil || !again(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errMsgIDInProcess is JetStream's answer to a message sent again while
// the first send of the same id is still being replicated: not stored
// yet, one of the two will be.
const errMsgIDInProcess jetstream.ErrorCode = 10158

// notStored marks the errors of a write nobody acknowledged.
func notStored(err error) error {
	var api *jetstream.APIError
	if errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, jetstream.ErrNoStreamResponse) || unavailable(err) ||
		errors.As(err, &api) && api.ErrorCode == errMsgIDInProcess {
		return fmt.Errorf("%w: %w", bus.ErrNotStored, err)
	}
	return err
}

// unanswered reports the errors of a request the cluster did not answer
// for the moment (a timeout, no responders, between leaders).
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || unavailable(err)
}

// unavailable reports the answers of a cluster with nobody to serve a
// request for the moment: no responders, JetStream's 503 ("JetStream
// system temporarily unavailable": a member between leaders, just after a
// peer was lost), as the jetstream package or (key-value watches) the
// older nats one reports it.
func unavailable(err error) bool {
	var api *jetstream.APIError
	var old *nats.APIError
	return errors.Is(err, nats.ErrNoResponders) || errors.As(err, &api) && api.Code == http.StatusServiceUnavailable ||
		errors.As(err, &old) && old.Code == http.StatusServiceUnavailable
}

// flush makes what the server acknowledged durable; seq is the stream
// sequence of the acknowledged message (0 for none).
func (b *Bus) flush(ctx context.Context, seq uint64) error {
	if b.sync == nil {
		return nil
	}
	if err := b.sync.sync(ctx, seq); err != nil {
		return fmt.Errorf("event store sync: %w", err)
	}
	return nil
}

// LastSeq returns the log position of the newest stored event (0 if none).
func (b *Bus) LastSeq(ctx context.Context) (uint64, error) {
	info, err := b.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	last := info.State.LastSeq
	m, err := b.stream.GetMsg(ctx, last)
	if errors.Is(err, jetstream.ErrMsgNotFound) || info.State.Msgs == 0 {
		return Position(last, 0), nil // expired: new events still come after it
	}
	if err != nil {
		return 0, fmt.Errorf("newest event: %w", err)
	}
	evs, err := decodeMessage(m.Header, m.Data, last)
	if err != nil {
		return 0, err
	}
	return evs[len(evs)-1].Seq, nil
}

// ErrNoConsumer: no durable consumer of that name exists (nothing has
// attached to it yet).
var ErrNoConsumer = errors.New("no such consumer")

// ConsumerState is a durable consumer's backlog.
type ConsumerState struct {
	Name string
	// Pending events it has not been handed yet; AckPending ones it was
	// handed and has not acknowledged.
	Pending    uint64
	AckPending int
}

// Consumer returns the state of the durable consumer name, or ErrNoConsumer.
func (b *Bus) Consumer(ctx context.Context, name string) (ConsumerState, error) {
	c, err := b.stream.Consumer(ctx, name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return ConsumerState{}, fmt.Errorf("%w: %q", ErrNoConsumer, name)
	}
	if err != nil {
		return ConsumerState{}, fmt.Errorf("consumer %q: %w", name, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return ConsumerState{}, fmt.Errorf("consumer %q: %w", name, err)
	}
	return ConsumerState{Name: info.Name, Pending: info.NumPending, AckPending: info.NumAckPending}, nil
}

// Consumers lists the durable consumers of the event stream (the reactor,
// the mine, each integration); the short-lived ones behind subscriptions
// and watches are left out.
func (b *Bus) Consumers(ctx context.Context) ([]ConsumerState, error) {
	var out []ConsumerState
	l := b.stream.ListConsumers(ctx)
	for info := range l.Info() {
		if info.Config.Durable == "" {
			continue
		}
		out = append(out, ConsumerState{Name: info.Name, Pending: info.NumPending, AckPending: info.NumAckPending})
	}
	return out, l.Err()
}

// Close stops every subscription, flushes the connection and, for the
// embedded server, shuts it down after a final sync.
func (b *Bus) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	subs := make([]*subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.Stop()
	}
	if b.batch != nil {
		b.batch.close()
	}
	var err error
	if b.nc != nil {
		err = b.nc.Drain()
		for b.nc.IsDraining() {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if b.sync != nil {
		if serr := b.sync.sync(context.Background(), 0); serr != nil && err == nil {
			err = serr
		}
		b.sync.close()
	}
	b.mu.Lock()
	for _, sy := range b.kvSync {
		if serr := sy.sync(context.Background(), 0); serr != nil && err == nil {
			err = serr
		}
		sy.close()
	}
	b.mu.Unlock()
	b.shutdownServer()
	return err
}

func (b *Bus) shutdownServer() {
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
	}
}

func (b *Bus) track(s *subscription) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return bus.ErrClosed
	}
	b.subs[s] = struct{}{}
	return nil
}

func (b *Bus) untrack(s *subscription) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}
