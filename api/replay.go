package api

import (
	"container/heap"
	"fmt"
	"sync"
	"time"
)

// maxRememberedSignatures bounds the replay memory (about 20 MB when full):
// 2^18 signatures within the 5 minutes and 5 seconds a signature may live
// is over 800 signed requests a second, sustained.
const maxRememberedSignatures = 1 << 18

// replayKey is the first half of a signature's MAC. It cannot be forged
// without the secret, so two keys are equal by chance alone (odds of
// 2^-128 a pair) unless the request is the same.
type replayKey [16]byte

// replayMemory remembers the X-Brine-Signatures accepted while their time
// is within the window, so that each is accepted once. A signature leaves
// the memory when its time leaves the window: from then on the time check
// refuses it, which keeps the memory as small as the traffic of one window.
// It is not persisted: after a restart, verifySignature refuses signatures
// timed before the start instead (see notBefore).
type replayMemory struct {
	max int

	mu      sync.Mutex
	expires map[replayKey]int64 // last second (Unix) of the window
	queue   expiryQueue         // the same keys, soonest expiry first
}

func newReplayMemory(max int) *replayMemory {
	return &replayMemory{max: max, expires: make(map[replayKey]int64)}
}

// add remembers sig until it expires. It fails, wrapping errReplay, when
// sig is remembered already, or errReplayMemoryFull when max signatures
// are; it forgets the expired ones first.
func (m *replayMemory) add(sig *signature, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if _, ok := m.expires[sig.key]; ok {
		return &signatureError{reason: refusedReplay, err: fmt.Errorf("%w: this request was accepted before; a signed request is accepted once, so sign each request anew (a new time changes the signature)", errReplay)}
	}
	if len(m.expires) >= m.max {
		return &signatureError{reason: refusedMemoryFull, err: fmt.Errorf("%w: %d signatures are remembered until their time leaves the window; retry later", errReplayMemoryFull, m.max)}
	}
	at := sig.expires.Unix()
	m.expires[sig.key] = at
	heap.Push(&m.queue, expiry{sig.key, at})
	return nil
}

// forget drops sig's key: its request was not stored, so that a retry of
// the same request is no replay.
func (m *replayMemory) forget(sig *signature) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.expires, sig.key)
}

// len is the number of signatures remembered at now.
func (m *replayMemory) len(now time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	return len(m.expires)
}

// expire drops the signatures whose time has left the window at now.
func (m *replayMemory) expire(now time.Time) {
	for len(m.queue) > 0 && time.Unix(m.queue[0].at, 0).Before(now) {
		e := heap.Pop(&m.queue).(expiry)
		// A key forgotten and added again expires at the same time: its
		// time is part of the MAC.
		if at, ok := m.expires[e.key]; ok && at == e.at {
			delete(m.expires, e.key)
		}
	}
}

type expiry struct {
	key replayKey
	at  int64
}

// expiryQueue is a min-heap of expiries (container/heap).
type expiryQueue []expiry

func (q expiryQueue) Len() int           { return len(q) }
func (q expiryQueue) Less(i, j int) bool { return q[i].at < q[j].at }
func (q expiryQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *expiryQueue) Push(x any)        { *q = append(*q, x.(expiry)) }
func (q *expiryQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
