package saltzmq

import (
	"net"
	"sync"

	"github.com/brinehq/brine/bus/gateway/zmtp"
)

// Salt's transport authenticates nothing itself: every connection is
// NULL, and only the payloads prove who sent them. So whoever reaches the
// port can open connections, each costing a file descriptor and a
// goroutine; they are counted, in total and per remote address, and a
// connection over either bound is closed before anything is read from it
// — as brine's gateway does with its own unauthenticated connections.

// limiter counts connections in total and by remote address.
type limiter struct {
	mu      sync.Mutex
	total   int
	byAddr  map[string]int
	max     int
	perAddr int
}

func newLimiter(max, perAddr int) *limiter {
	return &limiter{byAddr: make(map[string]int), max: max, perAddr: perAddr}
}

// Reasons a connection is refused, in the log.
const (
	overTotal   = "too many connections"
	overPerAddr = "too many connections from this address"
)

// admit counts raw unless that would exceed a bound; it then returns nil
// and the bound exceeded. The release func gives the place back, once.
func (l *limiter) admit(raw net.Conn) (func(), string) {
	addr := zmtp.RemoteHost(raw)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max {
		return nil, overTotal
	}
	if addr != "" && l.byAddr[addr] >= l.perAddr {
		return nil, overPerAddr
	}
	l.total++
	if addr != "" {
		l.byAddr[addr]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if addr != "" {
				if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
					delete(l.byAddr, addr)
				}
			}
		})
	}, ""
}

// count returns the connections counted now.
func (l *limiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}
