package bus

import (
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	ev, _ := NewEvent("x", nil, Origin{})
	if s, err := ParseSince(ev.ID); err != nil || s.AfterID != ev.ID {
		t.Errorf("id: %+v, %v", s, err)
	}
	if s, err := ParseSince("2026-11-22T10:00:00Z"); err != nil || !s.Time.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("time: %+v, %v", s, err)
	}
	if s, err := ParseSince("2026-11-22"); err != nil || !s.Time.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date: %+v, %v", s, err)
	}
	if s, err := ParseSince("10m"); err != nil || time.Since(s.Time) < 10*time.Minute || time.Since(s.Time) > 11*time.Minute {
		t.Errorf("duration: %+v, %v", s, err)
	}
	if s, err := ParseSince(""); err != nil || !s.IsZero() {
		t.Errorf("empty: %+v, %v", s, err)
	}
	for _, all := range []string{"all", "0"} {
		if s, err := ParseSince(all); err != nil || s != Beginning || s.IsZero() {
			t.Errorf("%s: %+v, %v; want the beginning", all, s, err)
		}
	}
	for _, bad := range []string{"yesterday-ish", "0s", "-5m", "00"} {
		if _, err := ParseSince(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
