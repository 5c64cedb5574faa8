package jobs

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewJIDFormat(t *testing.T) {
	before := time.Now().UTC().Truncate(time.Microsecond)
	jid := NewJID()
	if len(jid) != 20 || !IsJID(jid) {
		t.Fatalf("NewJID() = %q, want 20 digits", jid)
	}
	got, err := JIDTime(jid)
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(before) || got.Sub(before) > time.Second {
		t.Fatalf("JID time %v, issued at %v (UTC)", got, before)
	}
}

func TestNewJIDUniqueConcurrent(t *testing.T) {
	const goroutines, each = 8, 25000 // 200,000 ids, far more than 1 per µs
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				ids[g] = append(ids[g], NewJID())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*each)
	for _, list := range ids {
		for i, id := range list {
			if seen[id] {
				t.Fatalf("duplicate JID %s", id)
			}
			seen[id] = true
			if i > 0 && id <= list[i-1] {
				t.Fatalf("JIDs not increasing: %s after %s", id, list[i-1])
			}
		}
	}
}

func TestIsJID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"20261122001500123456", true},
		{"20261122001500123456_4242", true},
		{"2026112200150012345", false},
		{"20261122001500123456x", false},
		{"2026112200150012345a", false},
		{"", false},
		{"20250101000000000000_x:1", false},      // not a key the job store can write
		{"20250101000000000000_", false},         // an empty suffix
		{"20250101000000000000_a\u202eb", false}, // text direction override
		{"20250101000000000000_a/b", false},
		{"20250101000000000000_a b", false},
		{"20250101000000000000_" + strings.Repeat("9", MaxJIDSuffix), true},
		{"20250101000000000000_" + strings.Repeat("9", MaxJIDSuffix+1), false},
		{"20250101000000000000_abcXYZ09", true},
	}
	for _, tt := range tests {
		if got := IsJID(tt.in); got != tt.want {
			t.Errorf("IsJID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if err := CheckJID("20250101000000000000_x:1"); err == nil || !strings.Contains(err.Error(), "20 digits") {
		t.Errorf("CheckJID of a bad jid = %v", err)
	}
	if _, err := JIDTime("nope"); err == nil {
		t.Error("JIDTime(nope) succeeded")
	}
}
