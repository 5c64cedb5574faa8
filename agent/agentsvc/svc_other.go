//go:build !windows

// Package agentsvc runs the agent as the operating system's service
// manager expects. On Windows that is the Service Control Manager, which
// starts a service's executable and talks to it over a control channel
// (start, stop, shutdown): Run answers it, and Install and Remove register
// the service, as salt-minion's Windows installer does. Elsewhere the
// service manager (systemd, launchd, rc.d) starts the binary as a plain
// process and stops it with a signal, so Run calls fn directly and the
// service is the unit file brine-agent.service, installed by the package.
package agentsvc

import (
	"context"
	"errors"
)

// errNoSCM is what Install and Remove report off Windows: the service
// there is a unit file, not something the binary registers.
var errNoSCM = errors.New("brine-agent service install/remove is for the Windows Service Control Manager; " +
	"on this system use the systemd unit brine-agent.service (systemctl enable --now brine-agent)")

// Run runs fn, the agent, until it returns or ctx ends; name is the
// service's name, which only Windows uses.
func Run(ctx context.Context, name string, fn func(context.Context) error) error {
	return fn(ctx)
}

// Install registers the service name running exe with args; only Windows
// has a service manager a binary registers itself with.
func Install(name, display, exe string, args []string) error {
	return errNoSCM
}

// Remove unregisters the service name; only on Windows.
func Remove(name string) error {
	return errNoSCM
}
