package api

import (
	"errors"
	"testing"
	"time"
)

// TestReplayMemory: a signature is accepted once while its time is in the
// window, forgotten (and the memory shrinks) once it has left it, and the
// memory never holds more than its bound.
func TestReplayMemory(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	sig := func(k byte, signed time.Time) *signature {
		return &signature{key: replayKey{k}, expires: signed.Add(SignatureTolerance)}
	}
	a, b, c := sig('a', t0), sig('b', t0.Add(time.Minute)), sig('c', t0.Add(time.Minute))
	m := newReplayMemory(2)
	steps := []struct {
		name    string
		at      time.Time
		op      string // add, forget or len
		sig     *signature
		wantErr error // for add
		wantLen int   // after the step
	}{
		{"first a", t0, "add", a, nil, 1},
		{"a again", t0.Add(time.Second), "add", a, errReplay, 1},
		{"b", t0.Add(time.Minute), "add", b, nil, 2},
		{"full", t0.Add(time.Minute), "add", c, errReplayMemoryFull, 2},
		{"a at the end of its window", t0.Add(SignatureTolerance), "add", a, errReplay, 2},
		{"a has left the window", t0.Add(SignatureTolerance + time.Second), "len", nil, nil, 1},
		{"room for c", t0.Add(SignatureTolerance + time.Second), "add", c, nil, 2},
		{"b forgotten (not stored)", t0.Add(SignatureTolerance + time.Second), "forget", b, nil, 1},
		{"b retried", t0.Add(SignatureTolerance + 2*time.Second), "add", b, nil, 2},
		{"all gone", t0.Add(time.Minute + SignatureTolerance + time.Second), "len", nil, nil, 0},
	}
	for _, st := range steps {
		switch st.op {
		case "add":
			err := m.add(st.sig, st.at)
			if !errors.Is(err, st.wantErr) || (st.wantErr == nil && err != nil) {
				t.Fatalf("%s: add: %v, want %v", st.name, err, st.wantErr)
			}
		case "forget":
			m.forget(st.sig)
		}
		if n := m.len(st.at); n != st.wantLen {
			t.Fatalf("%s: %d remembered, want %d", st.name, n, st.wantLen)
		}
		if n := len(m.queue); n < len(m.expires) {
			t.Fatalf("%s: %d expiries for %d keys", st.name, n, len(m.expires))
		}
	}
	if len(m.queue) != 0 {
		t.Errorf("%d expiries left in the queue after every key expired", len(m.queue))
	}
}
