// Package gateway is the master's ZeroMQ face, in the roles of Salt's ports
// 4505 and 4506: a publish endpoint that mirrors every event on the bus to
// watchers, and a request endpoint where remote senders publish events (and
// call other registered methods) and are answered only once the event is
// durable. It also holds the client side used by the CLI.
//
// Every connection is encrypted and mutually authenticated with ZeroMQ's
// CURVE mechanism (package curve): the master's long-term key pair and the
// operators' (the CLI's) are both derived from the one shared key, so a
// client holding the key knows the master's public key and proves it holds
// the key itself; requests also carry an HMAC-SHA256 of their method and
// body. Agents connect to the request endpoint with their own key pairs:
// the gateway tells them apart by their key and hands their requests to the
// agent handlers (HandleAgent), never to the master's methods. A connection
// without encryption (NULL) may ask for the master's public key and nothing
// else, which is how an agent learns the key it then pins. Senders may not
// publish under the prefixes only the master fires (bus.ReservedPrefixes),
// which is how Salt's CVE-2025-22236 is closed here.
//
// Wire format, after the ZMTP 3.0 handshake:
//
//	request  (DEALER → ROUTER): correlation id, method, body JSON, hex mac
//	reply    (ROUTER → DEALER): correlation id, "ok" | "error", body JSON
//	push     (ROUTER → DEALER): "" (no correlation id), method, body JSON
//	event    (PUB → SUB):       tag, log position (decimal), envelope JSON
//
// Agents' requests carry an empty mac (their key authenticates them);
// pushes go to agents only.
//
// A watcher subscribes by tag prefix, as with Salt's publisher. On both
// ends zmq4 runs only the ZMTP handshake; the frames that follow are read
// and written here, buffered, which zmq4's sockets did a system call (and a
// goroutine) at a time.
package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/internal/workers"
)

// Default ports are Salt's: 4505 publishes, 4506 takes requests.
const (
	DefaultPublishPort = 4505
	DefaultRequestPort = 4506
)

// DroppedTag is fired when a watcher is disconnected for not keeping up.
const DroppedTag = "brine/bus/watcher/dropped"

// Config sets up a Server. Only Key is required.
type Config struct {
	// Interface is the address both endpoints bind (default 127.0.0.1: a
	// master is not reachable from other hosts unless configured so).
	Interface string
	// PublishPort and RequestPort default to 4505 and 4506.
	PublishPort int
	RequestPort int
	// PublishEndpoint and RequestEndpoint, when set, replace Interface and
	// the ports: "tcp://host:port" (port 0 picks a free port) or
	// "ipc:///path/to/socket". A stale ipc socket left by a crashed master
	// is removed; one with a live listener is an error.
	PublishEndpoint string
	RequestEndpoint string

	// Key is the shared secret clients must hold (see EnsureKey).
	Key []byte
	// Keys is the master's long-term CURVE key pair, which agents pin
	// (default: derived from Key, see MasterKeys). Every master sharing
	// Key has the same pair, so agents trust each of them.
	Keys curve.KeyPair
	// MaxEventSize bounds an encoded event (default bus.DefaultMaxEventSize).
	MaxEventSize int
	// WatcherQueue bounds the events waiting to be written to one watcher
	// (default 8192). A watcher whose queue is full is disconnected and a
	// DroppedTag event says so: one stalled reader never slows the others
	// nor grows the master's memory without bound.
	WatcherQueue int
	// ReplyQueue bounds the replies waiting to be written to one requester
	// (default 8192); a requester that stops reading its replies is
	// disconnected.
	ReplyQueue int
	// QueueBytes bounds the bytes waiting to be written to any one
	// connection (default 64 MiB), whatever the count: a full queue of
	// large events would otherwise pin gigabytes.
	QueueBytes int64
	// Workers bounds the requests handled at once (default 1024). A publish
	// spends its time waiting for the disk, and the bus syncs once for all
	// the events waiting, so throughput grows with the publishes in flight.
	// When all are busy, reading further requests waits: back-pressure, not
	// loss.
	Workers int
	// HandshakeTimeout bounds a new connection's ZMTP handshake, from
	// accept to the end of CURVE (default 10 s).
	HandshakeTimeout time.Duration
	// BootstrapIdle and BootstrapLifetime bound an unencrypted (NULL)
	// connection on the request endpoint, which exists only to ask for the
	// master's public key: it is closed after BootstrapIdle without a
	// request (default 10 s) and BootstrapLifetime after it was accepted
	// (default 30 s), whatever it does.
	BootstrapIdle     time.Duration
	BootstrapLifetime time.Duration
	// MaxUnauthenticated bounds the connections, on each endpoint, that
	// have not authenticated: those in their handshake, NULL ones, and a
	// salt-minion's request connection until a load it sends opens with
	// the session key (default 1024). Each endpoint counts its own, so that
	// a thousand salt-minions signing in at once on the request endpoint
	// do not keep their SUB sockets out of the publish endpoint. MaxUnauthenticatedPerAddr bounds them per
	// remote IP address (default 64; not applied to ipc:// endpoints,
	// where every peer has the same address and the socket file's mode
	// decides who connects). A connection over either is closed at once.
	// Authenticated connections (agents, operators, watchers) count
	// against neither.
	MaxUnauthenticated        int
	MaxUnauthenticatedPerAddr int
	// ShutdownGrace is how long Run lets in-flight requests finish after its
	// context ends before cancelling them (default 5 s).
	ShutdownGrace time.Duration
	// SaltRequests and SaltPublisher, when set, serve unmodified Salt
	// minions beside brine's own peers: a NULL connection on the request
	// port whose READY says Socket-Type REQ goes to SaltRequests (a NULL
	// DEALER is still brine's key bootstrap), a NULL connection on the
	// publish port to SaltPublisher (brine's watchers are always CURVE).
	SaltRequests  *saltzmq.RequestServer
	SaltPublisher *saltzmq.Publisher
	// Source names this master in the events the gateway fires itself and
	// in events remote senders publish without a source (default
	// brine://<hostname>/gateway).
	Source string
}

func (c *Config) setDefaults() error {
	if len(c.Key) == 0 {
		return errors.New("gateway: a key is required")
	}
	if c.Keys == (curve.KeyPair{}) {
		c.Keys = MasterKeys(c.Key)
	}
	if c.Interface == "" {
		c.Interface = "127.0.0.1"
	}
	if c.PublishPort == 0 {
		c.PublishPort = DefaultPublishPort
	}
	if c.RequestPort == 0 {
		c.RequestPort = DefaultRequestPort
	}
	if c.PublishEndpoint == "" {
		c.PublishEndpoint = "tcp://" + net.JoinHostPort(c.Interface, fmt.Sprint(c.PublishPort))
	}
	if c.RequestEndpoint == "" {
		c.RequestEndpoint = "tcp://" + net.JoinHostPort(c.Interface, fmt.Sprint(c.RequestPort))
	}
	if c.MaxEventSize <= 0 {
		c.MaxEventSize = bus.DefaultMaxEventSize
	}
	if c.WatcherQueue <= 0 {
		c.WatcherQueue = 8192
	}
	if c.ReplyQueue <= 0 {
		c.ReplyQueue = 8192
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = 64 << 20
	}
	if c.Workers <= 0 {
		c.Workers = 1024
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.BootstrapIdle <= 0 {
		c.BootstrapIdle = 10 * time.Second
	}
	if c.BootstrapLifetime <= 0 {
		c.BootstrapLifetime = 30 * time.Second
	}
	if c.MaxUnauthenticated <= 0 {
		c.MaxUnauthenticated = 1024
	}
	if c.MaxUnauthenticatedPerAddr <= 0 {
		c.MaxUnauthenticatedPerAddr = 64
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 5 * time.Second
	}
	if c.Source == "" {
		host, err := os.Hostname()
		if err != nil {
			host = "localhost"
		}
		c.Source = "brine://" + host + "/gateway"
	}
	return nil
}

// Handler serves one request method: body is the request's JSON body, the
// result is encoded as the reply body. An error is sent back as an "error"
// reply carrying its message.
type Handler func(ctx context.Context, body json.RawMessage) (any, error)

// Server runs both endpoints for one bus. Create it with New, register extra
// methods with Handle, then Run it once.
type Server struct {
	cfg Config
	bus bus.Bus
	log *slog.Logger

	hmu      sync.RWMutex
	handlers map[string]Handler
	agentH   map[string]AgentHandler
	gone     func(*Peer)

	// operator is the CURVE public key of clients holding Key (the CLI):
	// the only key the publish endpoint admits, and the key whose requests
	// may call the master's methods.
	operator curve.Key

	lmu          sync.Mutex
	pubLn, reqLn net.Listener

	cmu   sync.Mutex
	conns map[*peerConn]struct{} // every connection, for shutdown
	done  bool                   // set once Run is shutting down

	wmu      sync.RWMutex
	watchers map[*watcher]struct{}

	// unauthReq and unauthPub count each endpoint's unauthenticated
	// connections.
	unauthReq, unauthPub unauthCount

	head    atomic.Uint64 // newest log position seen on the bus
	workers chan struct{}
	pool    *workers.Pool // runs the requests
	signer  *signer
	wg      sync.WaitGroup // accept loops and connections
	fired   sync.WaitGroup // events the gateway publishes itself

	// hctx is the context of request handlers; cancelled ShutdownGrace
	// after Run's context ends.
	hctx    context.Context
	hcancel context.CancelFunc
}

// New prepares a server; it binds nothing until Listen or Run. log may be
// nil (slog.Default()).
func New(cfg Config, b bus.Bus, log *slog.Logger) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("gateway: a bus is required")
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:       cfg,
		bus:       b,
		log:       log.With("component", "gateway"),
		handlers:  make(map[string]Handler),
		agentH:    make(map[string]AgentHandler),
		operator:  OperatorKeys(cfg.Key).Public,
		conns:     make(map[*peerConn]struct{}),
		unauthReq: unauthCount{byAddr: make(map[string]int)},
		unauthPub: unauthCount{byAddr: make(map[string]int)},
		watchers:  make(map[*watcher]struct{}),
		workers:   make(chan struct{}, cfg.Workers),
		pool:      workers.New(),
		signer:    newSigner(cfg.Key),
	}
	s.hctx, s.hcancel = context.WithCancel(context.Background())
	s.Handle("publish", s.handlePublish)
	s.Handle("replay", s.handleReplay)
	s.Handle("ping", handlePing)
	return s, nil
}

// Handle registers h for method, so that other packages (the reactor's dead
// letters, job queries) are reachable through the same authenticated
// endpoint. Like http.ServeMux it panics on an empty or duplicate method or a
// nil handler: those are programming errors.
func (s *Server) Handle(method string, h Handler) {
	if method == "" || h == nil {
		panic("gateway: Handle needs a method and a handler")
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if _, dup := s.handlers[method]; dup {
		panic("gateway: method " + method + " registered twice")
	}
	s.handlers[method] = h
}

func (s *Server) handler(method string) Handler {
	s.hmu.RLock()
	defer s.hmu.RUnlock()
	return s.handlers[method]
}

// Listen binds both endpoints. Run calls it when it has not been called;
// calling it first lets a caller learn the bound addresses (port 0) before
// serving.
func (s *Server) Listen() error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.pubLn != nil {
		return nil
	}
	pub, err := listen(s.cfg.PublishEndpoint)
	if err != nil {
		return fmt.Errorf("gateway: publish endpoint: %w", err)
	}
	req, err := listen(s.cfg.RequestEndpoint)
	if err != nil {
		pub.Close()
		return fmt.Errorf("gateway: request endpoint: %w", err)
	}
	s.pubLn, s.reqLn = pub, req
	return nil
}

// Close releases the endpoints of a server that Run never served (a
// start-up that failed after Listen); Run closes them itself when it ends.
func (s *Server) Close() {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.pubLn != nil {
		s.pubLn.Close()
		s.reqLn.Close()
	}
}

// PublishAddr is where watchers connect ("host:port", or "ipc://path"); empty
// before Listen.
func (s *Server) PublishAddr() string { return s.addr(func() net.Listener { return s.pubLn }) }

// RequestAddr is where clients Dial ("host:port", or "ipc://path"); empty
// before Listen.
func (s *Server) RequestAddr() string { return s.addr(func() net.Listener { return s.reqLn }) }

func (s *Server) addr(ln func() net.Listener) string {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	l := ln()
	if l == nil {
		return ""
	}
	if l.Addr().Network() == "unix" {
		return "ipc://" + l.Addr().String()
	}
	return l.Addr().String()
}

// keepAlive is the TCP keepalive of accepted connections. Authenticated
// connections have no idle deadline (an agent without
// master_alive_interval, Salt's default, sends nothing for hours, and so
// does a `brine event watch` on a quiet bus): a peer that vanished without
// closing (power cut, cable, NAT state lost) is found by the kernel's
// probes instead, after Idle + Interval*Count, 2.5 minutes.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 15 * time.Second, Count: 9}

// listen binds a tcp:// or ipc:// endpoint. For ipc, a socket file nobody
// listens on any more (a crashed master's) is removed first: binding would
// otherwise fail with "address already in use".
func listen(endpoint string) (net.Listener, error) {
	network, addr, ok := strings.Cut(endpoint, "://")
	if !ok {
		return nil, fmt.Errorf("endpoint %q: want tcp://host:port or ipc:///path", endpoint)
	}
	switch network {
	case "tcp":
		lc := net.ListenConfig{KeepAliveConfig: keepAlive}
		return lc.Listen(context.Background(), "tcp", addr)
	case "ipc":
		if err := removeStaleSocket(addr); err != nil {
			return nil, err
		}
		return net.Listen("unix", addr)
	default:
		return nil, fmt.Errorf("endpoint %q: unsupported transport %q", endpoint, network)
	}
}

func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: another process is listening on it", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing stale socket: %w", err)
	}
	return nil
}

// Run serves until ctx ends, then shuts down: it stops accepting, lets
// in-flight requests finish (up to ShutdownGrace) and answers them, closes
// every connection and returns once every goroutine it started has ended.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	sub, err := s.bus.Subscribe(ctx, bus.SubscribeOptions{}, s.fanout)
	if err != nil {
		s.pubLn.Close()
		s.reqLn.Close()
		return fmt.Errorf("gateway: subscribe to the bus: %w", err)
	}
	s.log.Info("gateway listening", "publish", s.PublishAddr(), "request", s.RequestAddr())
	s.wg.Add(2)
	go s.acceptLoop(ctx, s.pubLn, &s.unauthPub, s.serveWatcher)
	go s.acceptLoop(ctx, s.reqLn, &s.unauthReq, s.serveRequests)

	<-ctx.Done()
	s.log.Info("gateway shutting down")
	grace := time.AfterFunc(s.cfg.ShutdownGrace, s.hcancel)
	defer grace.Stop()
	s.pubLn.Close()
	s.reqLn.Close()
	sub.Stop()
	s.cmu.Lock()
	s.done = true
	for pc := range s.conns {
		// Readers stop at once; request connections then flush the replies
		// of requests in flight before closing.
		pc.raw.SetReadDeadline(time.Now())
	}
	s.cmu.Unlock()
	s.wg.Wait()
	s.fired.Wait()
	s.hcancel()
	s.pool.Close()
	return nil
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, unauth *unauthCount, serve func(context.Context, net.Conn, *unauthSlot)) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		raw, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		// Counted from accept until CURVE authenticates it (or it ends):
		// before its handshake completes nobody knows who it is.
		slot, reason := unauth.admit(raw, s.cfg.MaxUnauthenticated, s.cfg.MaxUnauthenticatedPerAddr)
		if slot == nil {
			raw.Close()
			unauth.logRefusal(s.log, raw.RemoteAddr().String(), reason)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer slot.release()
			serve(ctx, raw, slot)
		}()
	}
}

// open runs the handshake, within what is left of HandshakeTimeout since
// accepted, and registers the connection; it returns nil when the peer
// failed the handshake or the server is shutting down. br and sent are
// handshake's: what was peeked of the peer and written of the greeting. A
// connection CURVE authenticated gives up its unauthenticated slot.
func (s *Server) open(ctx context.Context, raw net.Conn, br *bufio.Reader, sent int, sec zmq4.Security, typ zmq4.SocketType, slot *unauthSlot) *peerConn {
	timeout := time.Until(slot.accepted.Add(s.cfg.HandshakeTimeout))
	if timeout <= 0 {
		raw.Close()
		s.log.Info("connection refused", "remote", raw.RemoteAddr().String(), "socket", typ, "err", "handshake timed out")
		return nil
	}
	pc, err := handshake(ctx, raw, br, sent, sec, typ, true, timeout)
	if err != nil {
		raw.Close()
		level := slog.LevelInfo
		if errors.Is(err, ErrAuth) || errors.Is(err, curve.ErrProtocol) || errors.Is(err, curve.ErrServerKey) {
			level = slog.LevelWarn
		}
		s.log.Log(ctx, level, "connection refused", "remote", raw.RemoteAddr().String(), "socket", typ, "err", err)
		return nil
	}
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if s.done {
		raw.Close()
		return nil
	}
	s.conns[pc] = struct{}{}
	if pc.sess != nil {
		slot.release()
	}
	return pc
}

func (s *Server) forget(pc *peerConn) {
	s.cmu.Lock()
	delete(s.conns, pc)
	s.cmu.Unlock()
}
