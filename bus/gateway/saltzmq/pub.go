package saltzmq

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// PublisherConfig sets up a Publisher; every field has a default.
type PublisherConfig struct {
	// HandshakeTimeout bounds the ZMTP handshake from accept (default 10 s).
	HandshakeTimeout time.Duration
	// Queue bounds the messages waiting to be written to one subscriber
	// (default 1000, Salt's pub_hwm) and QueueBytes their bytes (default
	// 16 MiB). A subscriber whose queue is full is disconnected (its
	// libzmq SUB reconnects and subscribes again): one that stopped
	// reading never slows the others nor grows the master's memory.
	Queue      int
	QueueBytes int64
	// WriteTimeout drops a subscriber one write to which blocked this long
	// (default 30 s).
	WriteTimeout time.Duration
	// MaxSubscribers and MaxSubscribersPerAddr bound the subscribers after
	// their handshake, in all (default 65536) and per remote IP (default
	// 4096: a fleet behind one NAT address). A subscriber learns nothing
	// without the session key, so these bound only what it costs: a
	// descriptor and a goroutine.
	MaxSubscribers        int
	MaxSubscribersPerAddr int
	// MaxHandshakes and MaxHandshakesPerAddr bound the connections Serve
	// accepted that are still in their handshake (default 1024 and 64).
	MaxHandshakes        int
	MaxHandshakesPerAddr int
	// MaxSubscriptions bounds one subscriber's subscriptions (default 64;
	// a minion has one, or two with zmq_filtering).
	MaxSubscriptions int
	// OnDrop, when set, is called (not holding any lock) when a subscriber
	// is disconnected for not keeping up, with why.
	OnDrop func(remote, reason string)
}

func (c *PublisherConfig) setDefaults() {
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.Queue <= 0 {
		c.Queue = 1000
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = 16 << 20
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.MaxSubscribers <= 0 {
		c.MaxSubscribers = 65536
	}
	if c.MaxSubscribersPerAddr <= 0 {
		c.MaxSubscribersPerAddr = 4096
	}
	if c.MaxHandshakes <= 0 {
		c.MaxHandshakes = 1024
	}
	if c.MaxHandshakesPerAddr <= 0 {
		c.MaxHandshakesPerAddr = 64
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = 64
	}
}

// subPeers are the socket types a subscriber may have.
var subPeers = []string{"SUB", "XSUB"}

// Bounds of what a subscriber sends: subscriptions only (Salt's topics
// are "broadcast", "syndic" or 40 hex digits).
const (
	maxSubscriptionMsg    = 1 << 10
	maxSubscriptionFrames = 4
	// subReadBuffer is a subscriber's read buffer: it reads a few
	// subscriptions in its life, and thousands of minions wait on one each.
	subReadBuffer = 512
)

// Publisher is the publish_port side of Salt's transport: a PUB to the
// minions' SUB sockets. Publish queues a message, encoded once, for every
// subscriber whose subscriptions match, without blocking; each subscriber
// has a writer goroutine only while it has something to write.
type Publisher struct {
	cfg    PublisherConfig
	log    *slog.Logger
	hsLim  *limiter // in handshake (Serve's connections)
	subLim *limiter // subscribers
	minor  byte     // ZMTP minor version advertised; tests set 1

	mu   sync.RWMutex
	subs map[*subscriber]struct{}
}

// NewPublisher prepares a publisher; log may be nil.
func NewPublisher(cfg PublisherConfig, log *slog.Logger) *Publisher {
	cfg.setDefaults()
	if log == nil {
		log = slog.Default()
	}
	return &Publisher{
		cfg:    cfg,
		log:    log.With("component", "saltzmq", "port", "publish"),
		hsLim:  newLimiter(cfg.MaxHandshakes, cfg.MaxHandshakesPerAddr),
		subLim: newLimiter(cfg.MaxSubscribers, cfg.MaxSubscribersPerAddr),
		subs:   make(map[*subscriber]struct{}),
	}
}

// Subscribers is the number of subscribers connected now.
func (p *Publisher) Subscribers() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.subs)
}

// Serve accepts subscribers on ln until ctx ends, then closes ln and
// returns once every connection it accepted has ended.
func (p *Publisher) Serve(ctx context.Context, ln net.Listener) error {
	return serveListener(ctx, ln, p.log, p.hsLim, p.ServeConn)
}

// Publish sends a message of frames (at least one) to every subscriber
// with a subscription that is a prefix of its first frame, and returns to
// how many it was queued. Salt's framing: Publish(payload), or, with
// zmq_filtering, Publish([]byte("broadcast"), payload) and
// Publish(sha1hex(id), payload). It never blocks: a subscriber whose queue
// is full is disconnected.
func (p *Publisher) Publish(frames ...[]byte) int {
	if len(frames) == 0 {
		return 0
	}
	msg := zmtp.EncodeMsg(frames...)
	topic := frames[0]
	n := 0
	var full []*subscriber
	p.mu.RLock()
	for s := range p.subs {
		if !s.wants(topic) {
			continue
		}
		if s.enqueue(msg) {
			n++
		} else {
			full = append(full, s)
		}
	}
	p.mu.RUnlock()
	for _, s := range full {
		p.drop(s, "not reading: queue full")
	}
	return n
}

// ServeConn serves one subscriber accepted elsewhere until it leaves or ctx
// ends, and closes it. a.Authenticated is called once its handshake is
// done: from then on it counts against MaxSubscribers, not as a
// connection in its handshake.
func (p *Publisher) ServeConn(ctx context.Context, a Accepted) {
	defer a.Conn.Close()
	deadline := a.Deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(p.cfg.HandshakeTimeout)
	}
	c, err := handshake(ctx, a, deadline, "PUB", subPeers, p.minor)
	if err != nil {
		p.log.Info("connection refused", "remote", a.Conn.RemoteAddr().String(), "err", err)
		return
	}
	if a.Authenticated != nil {
		a.Authenticated()
	}
	release, reason := p.subLim.admit(c.raw)
	if release == nil {
		p.log.Info("subscriber refused", "remote", c.remote, "reason", reason)
		return
	}
	defer release()
	shrinkReader(c, subReadBuffer)
	s := &subscriber{conn: c, p: p, subs: make(map[string]struct{})}
	p.mu.Lock()
	p.subs[s] = struct{}{}
	p.mu.Unlock()
	p.log.Debug("subscriber connected", "remote", c.remote, "socket", c.peerType)
	stop := context.AfterFunc(ctx, func() { c.raw.SetReadDeadline(time.Unix(1, 0)) })
	defer func() {
		stop()
		p.remove(s)
		s.close()
		s.writers.Wait()
		p.log.Debug("subscriber left", "remote", c.remote)
	}()
	if ctx.Err() != nil {
		return
	}
	for {
		if err := s.readOne(); err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrProtocol) {
				p.log.Warn("subscriber dropped", "remote", c.remote, "err", err)
			}
			return
		}
	}
}

// shrinkReader replaces the connection's read buffer with one of size,
// keeping what was read ahead: a subscriber handed over by the gateway
// comes with the gateway's larger buffer.
func shrinkReader(c *conn, size int) {
	if c.br.Size() <= size {
		return
	}
	var src io.Reader = c.raw
	if n := c.br.Buffered(); n > 0 {
		ahead, _ := c.br.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), c.raw)
	}
	c.br = bufio.NewReaderSize(src, size)
}

// remove forgets s; it reports whether s was still there.
func (p *Publisher) remove(s *subscriber) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.subs[s]
	delete(p.subs, s)
	return ok
}

// drop disconnects a subscriber that does not keep up.
func (p *Publisher) drop(s *subscriber, reason string) {
	if !p.remove(s) {
		return
	}
	s.close()
	p.log.Warn("subscriber dropped", "remote", s.remote, "reason", reason)
	if p.cfg.OnDrop != nil {
		p.cfg.OnDrop(s.remote, reason)
	}
}

// subscriber is one SUB connection: its subscriptions and its queue.
type subscriber struct {
	*conn
	p *Publisher

	smu  sync.RWMutex
	subs map[string]struct{}

	mu      sync.Mutex
	queue   [][]byte
	spare   [][]byte // the last batch written, reused
	queued  int64    // bytes queued and being written
	writing bool
	closed  bool
	writers sync.WaitGroup
}

// wants reports whether a subscription is a prefix of topic.
func (s *subscriber) wants(topic []byte) bool {
	s.smu.RLock()
	defer s.smu.RUnlock()
	for t := range s.subs {
		if len(topic) >= len(t) && string(topic[:len(t)]) == t {
			return true
		}
	}
	return false
}

// readOne reads one message or command from the subscriber and applies it:
// ZMTP 3.0 subscriptions are messages whose first byte is 1 (subscribe) or
// 0 (cancel); 3.1's are SUBSCRIBE and CANCEL commands; PING is answered;
// anything else is ignored.
func (s *subscriber) readOne() error {
	frames, cmd, err := s.readMsg(maxSubscriptionMsg, maxSubscriptionFrames, nil)
	if err != nil {
		return err
	}
	if cmd {
		name, data, err := zmtp.ParseCommand(frames[0])
		if err != nil {
			return err
		}
		switch name {
		case "SUBSCRIBE":
			return s.subscribe(data, true)
		case "CANCEL":
			return s.subscribe(data, false)
		case "PING":
			if m := pong(data); m != nil && !s.enqueue(m) {
				return fmt.Errorf("%w: not reading", ErrProtocol)
			}
		case "ERROR":
			return fmt.Errorf("%w: the peer sent ERROR", ErrProtocol)
		}
		return nil
	}
	if len(frames) != 1 || len(frames[0]) == 0 {
		return nil
	}
	switch frames[0][0] {
	case 1:
		return s.subscribe(frames[0][1:], true)
	case 0:
		return s.subscribe(frames[0][1:], false)
	}
	return nil
}

// subscribe adds or cancels a subscription. libzmq's SUB counts its own
// duplicate subscriptions and sends each once, so a set is enough here.
func (s *subscriber) subscribe(topic []byte, on bool) error {
	s.smu.Lock()
	defer s.smu.Unlock()
	if !on {
		delete(s.subs, string(topic))
		return nil
	}
	if _, dup := s.subs[string(topic)]; !dup && len(s.subs) >= s.p.cfg.MaxSubscriptions {
		return fmt.Errorf("%w: more than %d subscriptions", ErrTooLarge, s.p.cfg.MaxSubscriptions)
	}
	s.subs[string(topic)] = struct{}{}
	return nil
}

// enqueue queues an encoded message without blocking; false when the
// queue is full (one message larger than QueueBytes still goes when
// nothing else waits). A message for a closed subscriber is discarded.
func (s *subscriber) enqueue(m []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return true
	}
	n := int64(len(m))
	if len(s.queue) >= s.p.cfg.Queue || (s.queued > 0 && s.queued+n > s.p.cfg.QueueBytes) {
		return false
	}
	s.queue = append(s.queue, m)
	s.queued += n
	if !s.writing {
		s.writing = true
		s.writers.Add(1)
		go s.writeLoop()
	}
	return true
}

// writeLoop writes what is queued, all of it in one writev, until the
// queue is empty; then it ends, so an idle subscriber has no goroutine
// writing.
func (s *subscriber) writeLoop() {
	defer s.writers.Done()
	for {
		s.mu.Lock()
		if s.closed || len(s.queue) == 0 {
			s.writing = false
			s.mu.Unlock()
			return
		}
		batch := s.queue
		s.queue = s.spare[:0]
		s.spare = nil
		s.mu.Unlock()
		n := 0
		for _, m := range batch {
			n += len(m)
		}
		err := s.raw.SetWriteDeadline(time.Now().Add(s.p.cfg.WriteTimeout))
		if err == nil {
			bufs := net.Buffers(batch)
			_, err = bufs.WriteTo(s.raw)
		}
		clear(batch)
		s.mu.Lock()
		s.queued -= int64(n)
		if cap(batch) <= 2*s.p.cfg.Queue {
			s.spare = batch[:0]
		}
		s.mu.Unlock()
		if err != nil {
			s.p.drop(s, fmt.Sprintf("write: %v", err))
			return
		}
	}
}

// close stops the subscriber: its connection is closed, which ends a
// write in progress and its reader.
func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	s.raw.Close()
}

// SubscriberHosts are the addresses (IP, as net.SplitHostPort gives it)
// subscribers are connected from: how the master tells that a minion which
// signed in from one of them still listens for its jobs, since a SUB
// socket says nothing of whose it is.
func (p *Publisher) SubscriberHosts() map[string]bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	hosts := make(map[string]bool)
	for s := range p.subs {
		if h, _, err := net.SplitHostPort(s.remote); err == nil {
			hosts[h] = true
		}
	}
	return hosts
}
