//go:build !linux && !windows

package service

import (
	"context"
	"fmt"
	"runtime"
)

// platformBackend refuses every call: brine's agent has no launchd
// (macOS) or rc.d (FreeBSD) backend, and systemctl or /etc/init.d there
// would give wrong answers rather than none.
func platformBackend(*Manager) backend { return unsupported{} }

type unsupported struct{}

func (unsupported) err() error {
	return fmt.Errorf("the service module is not available on %s in brine's agent (no %s backend)",
		runtime.GOOS, map[string]string{"darwin": "launchd", "freebsd": "rc.d"}[runtime.GOOS])
}

func (u unsupported) control(context.Context, string, string, opts) (bool, error) {
	return false, u.err()
}
func (u unsupported) running(context.Context, string, string) (bool, error)  { return false, u.err() }
func (u unsupported) boot(context.Context, string, bool, opts) (bool, error) { return false, u.err() }
func (u unsupported) enabled(context.Context, string) (bool, error)          { return false, u.err() }
func (u unsupported) available(context.Context, string) (bool, error)        { return false, u.err() }
func (u unsupported) list(context.Context, string) ([]string, error)         { return nil, u.err() }
