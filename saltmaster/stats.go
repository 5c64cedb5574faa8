package saltmaster

import "sync/atomic"

// counters are what the transport did since start, exported on the
// master's /metrics (brine_salt_transport_*).
type counters struct {
	signInsAccepted, signInsRefused atomic.Uint64
	requests, requestsRefused       atomic.Uint64
	publishes, rotations            atomic.Uint64
	sessionsEnded                   atomic.Uint64
}

// StatsHelp says what Stats counts.
const StatsHelp = "Salt's transport (unmodified salt-minions): sign-ins accepted and refused, requests served and refused, publishes, session key rotations, sessions ended."

// Stats are the transport's counters by name.
func (t *Transport) Stats() map[string]uint64 {
	c := &t.count
	return map[string]uint64{
		"sign_ins_accepted":     c.signInsAccepted.Load(),
		"sign_ins_refused":      c.signInsRefused.Load(),
		"requests":              c.requests.Load(),
		"requests_refused":      c.requestsRefused.Load(),
		"publishes":             c.publishes.Load(),
		"session_key_rotations": c.rotations.Load(),
		"sessions_ended":        c.sessionsEnded.Load(),
	}
}

// Sessions is the number of minions signed in now.
func (t *Transport) Sessions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.minions)
}
