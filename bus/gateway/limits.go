package gateway

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// Connections that have not authenticated cost the master a file descriptor
// and a goroutine each, and anyone who can reach the port can open them: a
// stranger once held 19,500 idle NULL connections, nearly every descriptor
// the master had. So they are counted, from accept until CURVE
// authenticates them or they end, in total and per remote address, and a
// connection over either bound is closed before anything is read from it.

// unauthCount counts the unauthenticated connections of a Server.
type unauthCount struct {
	mu     sync.Mutex
	total  int
	byAddr map[string]int // by remote IP; ipc peers are not counted here

	// Refusals are logged at most once per refusalLogEvery, with how many
	// were refused meanwhile: a flood of connections must not flood the
	// log as well.
	lastLog    time.Time
	suppressed int
}

// refusalLogEvery is how often refusals over the caps are logged at most.
const refusalLogEvery = 10 * time.Second

// unauthSlot is one connection's place in the count, given back once.
type unauthSlot struct {
	c        *unauthCount
	addr     string // "" when not counted per address
	accepted time.Time
	once     sync.Once
}

// Reasons a connection is refused, in the log.
const (
	overTotal   = "too many unauthenticated connections"
	overPerAddr = "too many unauthenticated connections from this address"
)

// admit counts raw, just accepted, unless that would exceed max in total or
// perAddr from its address; then it returns nil and the bound exceeded.
func (c *unauthCount) admit(raw net.Conn, max, perAddr int) (*unauthSlot, string) {
	addr := zmtp.RemoteHost(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total >= max {
		return nil, overTotal
	}
	if addr != "" && c.byAddr[addr] >= perAddr {
		return nil, overPerAddr
	}
	c.total++
	if addr != "" {
		c.byAddr[addr]++
	}
	return &unauthSlot{c: c, addr: addr, accepted: time.Now()}, ""
}

// release gives the slot back: the connection authenticated or ended.
func (sl *unauthSlot) release() {
	sl.once.Do(func() {
		c := sl.c
		c.mu.Lock()
		defer c.mu.Unlock()
		c.total--
		if sl.addr != "" {
			if c.byAddr[sl.addr]--; c.byAddr[sl.addr] <= 0 {
				delete(c.byAddr, sl.addr)
			}
		}
	})
}

// counts returns the unauthenticated connections in total and from addr.
func (c *unauthCount) counts(addr string) (total, fromAddr int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.byAddr[addr]
}

// logRefusal logs a refusal over the caps, unless one was logged less than
// refusalLogEvery ago; the next line says how many went unlogged.
func (c *unauthCount) logRefusal(log *slog.Logger, remote, reason string) {
	c.mu.Lock()
	now := time.Now()
	if now.Sub(c.lastLog) < refusalLogEvery {
		c.suppressed++
		c.mu.Unlock()
		return
	}
	c.lastLog = now
	n := c.suppressed
	c.suppressed = 0
	c.mu.Unlock()
	log.Warn("connection refused", "remote", remote, "reason", reason,
		"refused_since_last_line", n, "logged_at_most_every", refusalLogEvery)
}
