// Package jobs names and records the jobs brine runs. A job is one run of a
// function (a reaction, a `brine run`, a `brine cloud` run); it is announced
// on the bus as salt/run/<jid>/new and salt/run/<jid>/ret, exactly as Salt's
// runner jobs are (Run, Call), so tools that follow Salt jobs follow brine's.
// The Store records those and salt/job/<jid>/… events from elsewhere in a
// key-value bucket for keep_jobs, for `brine jobs list|show|active`.
package jobs

import (
	"sync"
	"time"
)

// jidLayout is Salt's JID: UTC time with microseconds, 20 digits, no separators.
const jidLayout = "20060102150405.000000"

var (
	jidMu   sync.Mutex
	jidLast time.Time
)

// NewJID returns a Salt-format job id, `YYYYMMDDhhmmssffffff` in UTC. JIDs are
// unique within the process and increase strictly: when two are asked for in
// the same microsecond the later one is bumped by a microsecond, as Salt does
// with unique_jid, so a burst can never give two jobs the same id.
func NewJID() string {
	now := time.Now().UTC().Truncate(time.Microsecond)
	jidMu.Lock()
	if !now.After(jidLast) {
		now = jidLast.Add(time.Microsecond)
	}
	jidLast = now
	jidMu.Unlock()
	return formatJID(now)
}

func formatJID(t time.Time) string {
	s := t.Format(jidLayout)
	return s[:14] + s[15:]
}

// IsJID reports whether s is a Salt JID: 20 digits, optionally followed by
// `_<suffix>` (Salt's unique_jid form).
func IsJID(s string) bool {
	if len(s) < 20 || (len(s) > 20 && s[20] != '_') {
		return false
	}
	for i := range 20 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// JIDTime returns the time a JID was issued.
func JIDTime(jid string) (time.Time, error) {
	if !IsJID(jid) {
		return time.Time{}, &time.ParseError{Layout: "YYYYMMDDhhmmssffffff", Value: jid, Message: ": not a JID"}
	}
	return time.Parse(jidLayout, jid[:14]+"."+jid[14:20])
}
