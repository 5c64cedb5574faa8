package masterproc

import (
	"context"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus/gateway"
)

// Poll calls done every interval until it is true, ctx ends or timeout
// passes.
func Poll(ctx context.Context, timeout, every time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
	return nil
}

// Sleep waits d, or less when ctx ends (false then).
func Sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// WaitKey waits for a starting master to create its key file, and reads
// it.
func WaitKey(ctx context.Context, path string) ([]byte, error) {
	var key []byte
	err := Poll(ctx, time.Minute, 10*time.Millisecond, func() bool {
		k, err := gateway.LoadKey(path)
		key = k
		return err == nil
	})
	return key, err
}
