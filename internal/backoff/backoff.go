// Package backoff is the wait between retries that every part of brine
// uses: doubled per failure, capped, with jitter so that the retries of a
// burst spread out instead of arriving together, and cut short when the
// caller gives up.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Delay is the wait after n consecutive failures (n from 1): first doubled
// per failure after the first, at most limit, ±20 % jitter.
func Delay(first, limit time.Duration, n int) time.Duration {
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if d <= 0 {
		return 0
	}
	return d + time.Duration(rand.Int64N(int64(d)/5*2+1)) - d/5
}

// Sleep waits d; false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
