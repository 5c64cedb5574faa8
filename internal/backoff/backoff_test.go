package backoff

import (
	"context"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		first, limit time.Duration
		n            int
		want         time.Duration // before jitter
	}{
		{time.Second, time.Minute, 1, time.Second},
		{time.Second, time.Minute, 3, 4 * time.Second},
		{time.Second, time.Minute, 7, time.Minute},
		{time.Second, time.Minute, 1000, time.Minute}, // no overflow
		{100 * time.Millisecond, 2 * time.Second, 0, 100 * time.Millisecond},
		{0, time.Minute, 5, 0},
	}
	for _, tc := range tests {
		for range 200 {
			got := Delay(tc.first, tc.limit, tc.n)
			if lo, hi := tc.want-tc.want/5, tc.want+tc.want/5; got < lo || got > hi {
				t.Fatalf("Delay(%v, %v, %d) = %v, want %v ±20%%", tc.first, tc.limit, tc.n, got, tc.want)
			}
		}
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep of a live context reported it ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep of an ended context reported a full wait")
	}
	if time.Since(start) > time.Second {
		t.Error("Sleep did not end with its context")
	}
}
