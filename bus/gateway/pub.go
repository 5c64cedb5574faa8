package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// registerDelay holds back registering a subscription; tests use it to
// widen the window in which an event reaches neither a watch's catch-up nor
// its live stream.
var registerDelay time.Duration

// maxSubscriptionMsg bounds what a watcher may send: subscriptions only.
const maxSubscriptionMsg = 4 << 10

// watcher is one connection on the publish endpoint with its tag prefixes.
type watcher struct {
	*peerConn
	mu       sync.RWMutex
	prefixes map[string]struct{}
}

func (w *watcher) wants(tag string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for p := range w.prefixes {
		if strings.HasPrefix(tag, p) {
			return true
		}
	}
	return false
}

func (w *watcher) subscriptions() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	subs := make([]string, 0, len(w.prefixes))
	for p := range w.prefixes {
		subs = append(subs, p)
	}
	return subs
}

// operatorOnly admits to the event stream only clients holding the shared
// key: agents do not read the master's bus.
func (s *Server) operatorOnly(client curve.Key, _ map[string]string) error {
	if client != s.operator {
		return errors.New(reasonWrongKey)
	}
	return nil
}

// reasonWrongKey is what a watcher without the shared key is told.
const reasonWrongKey = "wrong key"

// serveWatcher authenticates a watcher and then reads its subscriptions
// (ZMTP 3.0 style: a message whose first byte is 1 to subscribe, 0 to cancel)
// until it leaves; events reach it through fanout.
func (s *Server) serveWatcher(ctx context.Context, raw net.Conn, slot *unauthSlot) {
	var (
		br   *bufio.Reader
		sent int
	)
	if s.cfg.SaltPublisher != nil {
		// Watchers are always CURVE; a NULL peer is a Salt minion's SUB.
		br = bufio.NewReaderSize(raw, readBuffer)
		deadline := slot.accepted.Add(s.cfg.HandshakeTimeout)
		mech, err := peekMechanism(ctx, raw, br, deadline)
		if err != nil {
			s.log.Log(ctx, closedLevel(err), "connection refused", "remote", raw.RemoteAddr().String(), "err", err)
			raw.Close()
			return
		}
		sent = zmtp.PrefixSize
		if mech == string(zmq4.NullSecurity) {
			s.cfg.SaltPublisher.ServeConn(ctx, saltzmq.Accepted{Conn: raw, Reader: br, Sent: sent,
				Deadline: deadline, Authenticated: slot.release})
			return
		}
	}
	pc := s.open(ctx, raw, br, sent, curve.NewServer(s.cfg.Keys, s.operatorOnly), zmq4.Pub, slot)
	if pc == nil {
		return
	}
	pc.start(s.cfg.WatcherQueue, s.cfg.QueueBytes)
	w := &watcher{peerConn: pc, prefixes: make(map[string]struct{})}
	s.wmu.Lock()
	s.watchers[w] = struct{}{}
	s.wmu.Unlock()
	s.log.Debug("watcher connected", "remote", pc.remote)
	defer func() {
		s.wmu.Lock()
		delete(s.watchers, w)
		s.wmu.Unlock()
		pc.close()
		pc.stopWriting()
		s.forget(pc)
		s.log.Debug("watcher left", "remote", pc.remote)
	}()
	for {
		frames, cmd, err := pc.readMsg(maxSubscriptionMsg)
		if err != nil {
			if overLimit(err) || errors.Is(err, curve.ErrProtocol) {
				s.log.Warn("watcher dropped", "remote", pc.remote, "err", err)
			}
			return
		}
		if cmd || len(frames) != 1 || len(frames[0]) == 0 {
			continue
		}
		topic := string(frames[0][1:])
		if registerDelay > 0 {
			time.Sleep(registerDelay)
		}
		w.mu.Lock()
		switch frames[0][0] {
		case 1:
			w.prefixes[topic] = struct{}{}
		case 0:
			delete(w.prefixes, topic)
		}
		w.mu.Unlock()
	}
}

// fanout is the bus subscription's callback: it encodes each event once and
// queues it, without blocking, for every watcher subscribed to a prefix of
// its tag. A watcher whose queue is full is dropped rather than waited for.
func (s *Server) fanout(ev *bus.Event) {
	s.head.Store(ev.Seq)
	env, err := ev.MarshalJSON()
	if err != nil {
		s.log.Error("cannot encode event for watchers", "tag", ev.Tag, "err", err)
		return
	}
	msg := zmtp.EncodeMsg([]byte(ev.Tag), strconv.AppendUint(nil, ev.Seq, 10), env)
	var full []*watcher
	s.wmu.RLock()
	for w := range s.watchers {
		if w.wants(ev.Tag) && !w.send(msg) {
			full = append(full, w)
		}
	}
	s.wmu.RUnlock()
	for _, w := range full {
		s.drop(w, fmt.Sprintf("not reading: %d events (%d bytes) queued", len(w.out), w.queued.Load()))
	}
}

// drop disconnects a watcher that does not keep up and fires DroppedTag, so
// that an operator sees it on the bus instead of a watcher going quiet.
func (s *Server) drop(w *watcher, reason string) {
	s.wmu.Lock()
	_, present := s.watchers[w]
	delete(s.watchers, w)
	s.wmu.Unlock()
	if !present {
		return
	}
	w.close()
	s.log.Warn("watcher dropped", "remote", w.remote, "reason", reason)
	ev, err := bus.NewEvent(DroppedTag, map[string]any{
		"remote":        w.remote,
		"reason":        reason,
		"subscriptions": w.subscriptions(),
	}, bus.Origin{Source: s.cfg.Source})
	if err != nil {
		s.log.Error("cannot build event", "tag", DroppedTag, "err", err)
		return
	}
	s.fired.Add(1)
	go func() {
		defer s.fired.Done()
		if err := s.bus.Publish(s.hctx, ev); err != nil {
			s.log.Error("cannot publish event", "tag", DroppedTag, "err", err)
		}
	}()
}

// Watchers returns how many watchers are connected now, for a gauge on
// /metrics beside the count of those dropped.
func (s *Server) Watchers() int {
	s.wmu.RLock()
	defer s.wmu.RUnlock()
	return len(s.watchers)
}
