// Package jobs names and records the jobs brine runs. A job is one run of a
// function (a reaction, a `brine run`, a `brine cloud` run); it is announced
// on the bus as salt/run/<jid>/new and salt/run/<jid>/ret, exactly as Salt's
// runner jobs are (Run, Call), so tools that follow Salt jobs follow brine's.
// The Store records those and salt/job/<jid>/… events from elsewhere in a
// key-value bucket for keep_jobs, for `brine jobs list|show|active`.
package jobs

import (
	"fmt"
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
// `_<suffix>` (Salt's unique_jid form, `_<pid>`), the suffix 1 to
// MaxJIDSuffix letters or digits. A jid names a record in the job store and
// is part of event tags, so nothing else passes: a colon, a slash, a space
// or a character that reorders text (U+202E) would make a key the store
// cannot write or a tag that reads as another.
func IsJID(s string) bool {
	if len(s) < 20 {
		return false
	}
	for i := range 20 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if len(s) == 20 {
		return true
	}
	suffix := s[21:]
	if s[20] != '_' || len(suffix) == 0 || len(suffix) > MaxJIDSuffix {
		return false
	}
	for i := range len(suffix) {
		c := suffix[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// MaxJIDSuffix bounds the suffix of a unique_jid (Salt's is a pid).
const MaxJIDSuffix = 32

// CheckJID says why s is not a jid, in the words a refusal needs.
func CheckJID(s string) error {
	if IsJID(s) {
		return nil
	}
	return fmt.Errorf("jid %q: want 20 digits (YYYYMMDDhhmmssffffff), optionally followed by _ and up to %d letters or digits", s, MaxJIDSuffix)
}

// JIDTime returns the time a JID was issued.
func JIDTime(jid string) (time.Time, error) {
	if !IsJID(jid) {
		return time.Time{}, &time.ParseError{Layout: "YYYYMMDDhhmmssffffff", Value: jid, Message: ": not a JID"}
	}
	return time.Parse(jidLayout, jid[:14]+"."+jid[14:20])
}
