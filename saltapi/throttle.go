package saltapi

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Failed logins are counted per address: maxFailures in failWindow turn
// the address away until the window has passed since its first failure.
// Valid callers from other addresses are never slowed, and a correct
// password from a turned-away address waits too (else the limit would
// tell a guesser when it has found the password).
const (
	maxFailures = 10
	failWindow  = time.Minute
	maxTracked  = 65536
	// tarpitDelay and maxHeld: how long a turned-away address waits for
	// its 429, and how many such answers are held at once (Server.tarpit).
	tarpitDelay = time.Second
	maxHeld     = 1024
)

type failures struct {
	mu sync.Mutex
	by map[string][]time.Time
	// refused counts the logins refused to a turned-away address in its
	// current lockout, so that a guesser's flood is logged at its 1st,
	// 10th, 100th… refusal rather than once per try.
	refused map[string]int
}

func newFailures() *failures {
	return &failures{by: map[string][]time.Time{}, refused: map[string]int{}}
}

// add counts a failed login from host at now.
func (f *failures) add(host string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.by) >= maxTracked {
		for h, ts := range f.by {
			if now.Sub(ts[len(ts)-1]) > failWindow {
				delete(f.by, h)
				delete(f.refused, h)
			}
		}
	}
	ts := f.by[host]
	for len(ts) > 0 && now.Sub(ts[0]) > failWindow {
		ts = ts[1:]
	}
	if len(ts) < maxFailures {
		ts = append(ts, now)
	}
	f.by[host] = ts
}

// blocked is how long host is still turned away (0: it is not), and
// how many of its logins this lockout refused, this one included.
func (f *failures) blocked(host string, now time.Time) (time.Duration, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.by[host]
	if len(ts) < maxFailures {
		return 0, 0
	}
	if wait := failWindow - now.Sub(ts[0]); wait > 0 {
		f.refused[host]++
		return wait, f.refused[host]
	}
	delete(f.by, host)
	delete(f.refused, host)
	return 0, 0
}

// logRefusal reports whether the nth refusal of a lockout is logged: the
// 1st, 10th, 100th and so on.
func logRefusal(n int) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// errThrottled is a login from an address turned away.
type errThrottled struct{ wait time.Duration }

func (e errThrottled) Error() string {
	return fmt.Sprintf("too many failed logins from this address: try again in %s", e.wait.Round(time.Second))
}

// remoteHost is the request's client address without its port.
func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}
