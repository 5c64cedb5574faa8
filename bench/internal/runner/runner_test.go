package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// TestEach: every i is done once when nothing fails, and a failure is
// the error returned.
func TestEach(t *testing.T) {
	bad := errors.New("bad")
	for _, tc := range []struct {
		name       string
		workers, n int
		failAt     int // -1: none
	}{
		{name: "none", workers: 4, n: 0, failAt: -1},
		{name: "fewer than workers", workers: 8, n: 3, failAt: -1},
		{name: "many", workers: 3, n: 1000, failAt: -1},
		{name: "one fails", workers: 2, n: 50, failAt: 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make([]atomic.Int32, tc.n)
			err := Each(tc.workers, tc.n, func(i int) error {
				done[i].Add(1)
				if i == tc.failAt {
					return bad
				}
				return nil
			})
			if tc.failAt >= 0 {
				if !errors.Is(err, bad) {
					t.Fatalf("err %v, want %v", err, bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range done {
				if c := done[i].Load(); c != 1 {
					t.Errorf("i %d done %d times", i, c)
				}
			}
		})
	}
}

// TestGroup: Stop ends every member through its context, a member's
// error other than the stop's is Err's, and Stop before Start or twice
// is harmless.
func TestGroup(t *testing.T) {
	bad := errors.New("bad")
	for _, tc := range []struct {
		name    string
		n       int
		errAt   int // -1: none
		wantIdx int
	}{
		{name: "empty", n: 0, errAt: -1, wantIdx: -1},
		{name: "all stopped", n: 5, errAt: -1, wantIdx: -1},
		{name: "one failed", n: 5, errAt: 3, wantIdx: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g Group
			if !g.Stop() {
				t.Fatal("Stop before Start: false")
			}
			g.Start(context.Background(), tc.n, func(ctx context.Context, i int) error {
				if i == tc.errAt {
					return bad
				}
				<-ctx.Done()
				return ctx.Err()
			})
			for range 2 {
				if !g.Stop() {
					t.Fatal("Stop: false")
				}
			}
			i, err := g.Err()
			if i != tc.wantIdx || (tc.errAt >= 0) != errors.Is(err, bad) {
				t.Errorf("Err() = %d, %v; want %d", i, err, tc.wantIdx)
			}
		})
	}
}
