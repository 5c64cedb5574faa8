//go:build !linux

package inotify

import (
	"runtime"
	"strings"
	"testing"

	"github.com/brinehq/brine/beacons"
)

func TestNotAvailable(t *testing.T) {
	for _, cfg := range []beacons.Config{
		nil,
		{"files": map[string]any{"/etc/hosts": map[string]any{}}},
	} {
		b, err := New(cfg)
		if b != nil || err == nil {
			t.Fatalf("New(%v) = %v, %v; want an error", cfg, b, err)
		}
		if want := "inotify beacon is not available on " + runtime.GOOS; !strings.Contains(err.Error(), want) {
			t.Errorf("New(%v) error %q; want it to say %q", cfg, err, want)
		}
	}
}
