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
	"fmt"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// stopWait bounds how long the agent has to stop once the SCM asks: the
// SCM itself waits about 20 s at system shutdown, and a stop that hangs
// must still report stopped rather than leave the service "stopping".
var stopWait = 15 * time.Second

// Run runs fn, the agent, until it returns or ctx ends. Started by the
// Service Control Manager, it runs fn as the service name, reports it
// running, and cancels fn's context on Stop or Shutdown; started from a
// console (brine-agent agent, salt-minion), it calls fn directly.
func Run(ctx context.Context, name string, fn func(context.Context) error) error {
	isSvc, err := isService()
	if err != nil {
		return fmt.Errorf("service %s: is the agent started by the Service Control Manager: %w", name, err)
	}
	if !isSvc {
		return fn(ctx)
	}
	h := &handler{ctx: ctx, fn: fn}
	if err := svc.Run(name, h); err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	return h.err
}

// handler is the agent as the SCM's service handler.
type handler struct {
	ctx context.Context
	fn  func(context.Context) error
	err error // fn's, returned by Run
}

// Execute runs the agent and answers the SCM's requests until the agent
// ends; a failure of the agent is the service's exit code 1, so that the
// recovery actions Install sets restart it.
func (h *handler) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StartPending}
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.fn(ctx) }()
	const accepts = svc.AcceptStop | svc.AcceptShutdown
	status <- svc.Status{State: svc.Running, Accepts: accepts}
	for {
		select {
		case err := <-done:
			return h.exit(err, status)
		case r := <-req:
			switch r.Cmd {
			case svc.Interrogate:
				status <- r.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending, WaitHint: uint32(stopWait / time.Millisecond)}
				cancel()
				t := time.NewTimer(stopWait)
				defer t.Stop()
				select {
				case err := <-done:
					if errors.Is(err, context.Canceled) {
						err = nil
					}
					return h.exit(err, status)
				case <-t.C:
					h.err = fmt.Errorf("the agent did not stop within %s", stopWait)
					return h.exit(h.err, status)
				}
			}
		}
	}
}

func (h *handler) exit(err error, status chan<- svc.Status) (bool, uint32) {
	status <- svc.Status{State: svc.StopPending}
	if err != nil {
		h.err = err
		return true, 1
	}
	return false, 0
}

// Install registers the service name (shown as display) running exe with
// args: started at boot, restarted by the SCM 5 s after a failure (twice,
// then after a minute; the count resets after a day without one), as
// Salt's Windows installer sets salt-minion up.
func Install(name, display, exe string, args []string) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("service %s: connect to the Service Control Manager (run as Administrator): %w", name, err)
	}
	defer m.Disconnect()
	if s, err := m.OpenService(name); err == nil {
		s.Close()
		return fmt.Errorf("service %s is already installed (brine-agent service remove first)", name)
	}
	s, err := m.CreateService(name, exe, mgr.Config{
		DisplayName: display,
		Description: "brine agent: runs the master's jobs and states on this machine (salt-minion compatible)",
		StartType:   mgr.StartAutomatic,
	}, args...)
	if err != nil {
		return fmt.Errorf("service %s: create: %w", name, err)
	}
	defer s.Close()
	actions := []mgr.RecoveryAction{
		{Type: mgr.ServiceRestart, Delay: 5 * time.Second},
		{Type: mgr.ServiceRestart, Delay: 5 * time.Second},
		{Type: mgr.ServiceRestart, Delay: time.Minute},
	}
	if err := s.SetRecoveryActions(actions, uint32((24 * time.Hour).Seconds())); err != nil {
		_ = s.Delete()
		return fmt.Errorf("service %s: recovery actions: %w", name, err)
	}
	return nil
}

// Remove stops the service name if it runs and unregisters it.
func Remove(name string) error {
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("service %s: connect to the Service Control Manager (run as Administrator): %w", name, err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		return fmt.Errorf("service %s is not installed: %w", name, err)
	}
	defer s.Close()
	if st, err := s.Query(); err == nil && st.State != svc.Stopped {
		if _, err := s.Control(svc.Stop); err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
			return fmt.Errorf("service %s: stop: %w", name, err)
		}
		deadline := time.Now().Add(stopWait + 5*time.Second)
		for st.State != svc.Stopped && time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
			if st, err = s.Query(); err != nil {
				break
			}
		}
	}
	if err := s.Delete(); err != nil {
		return fmt.Errorf("service %s: delete: %w", name, err)
	}
	return nil
}

// isService reports whether the Service Control Manager started this
// process: svc.IsWindowsService, which also wants the parent services.exe
// in session 0, or the parent services.exe in any session, as under wine
// (where the Windows agent's tests run), whose services.exe runs in
// session 1. On Windows services.exe only ever runs in session 0, so both
// say the same there.
func isService() (bool, error) {
	if ok, err := svc.IsWindowsService(); ok || err != nil {
		return ok, err
	}
	var self windows.PROCESS_BASIC_INFORMATION
	size := uint32(unsafe.Sizeof(self))
	if err := windows.NtQueryInformationProcess(windows.CurrentProcess(), windows.ProcessBasicInformation,
		unsafe.Pointer(&self), size, &size); err != nil {
		return false, err
	}
	var buf []byte
	for size = 1 << 18; ; {
		buf = make([]byte, size)
		err := windows.NtQuerySystemInformation(windows.SystemProcessInformation, unsafe.Pointer(&buf[0]), size, &size)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) {
			return false, err
		}
		size += 1 << 16
	}
	for off := uintptr(0); ; {
		p := (*windows.SYSTEM_PROCESS_INFORMATION)(unsafe.Pointer(&buf[off]))
		if p.UniqueProcessID == self.InheritedFromUniqueProcessId {
			return strings.EqualFold(p.ImageName.String(), "services.exe"), nil
		}
		if p.NextEntryOffset == 0 {
			return false, nil
		}
		off += uintptr(p.NextEntryOffset)
	}
}
