package service

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// platformBackend is the Service Control Manager.
func platformBackend(m *Manager) backend { return scm{m} }

// scmTimeout is how long start and stop wait for the service to get
// there, as win_service's timeout default.
var scmTimeout = 90 * time.Second

// errNotInstalled is the SCM's answer for a name it does not know, in
// win_service's words.
var errNotInstalled = errors.New("the named service is not installed")

// scm is Salt's win_service: services through the Service Control
// Manager (golang.org/x/sys/windows/svc/mgr in place of pywin32).
type scm struct{ m *Manager }

// open connects to the SCM and opens name; done closes both.
func (scm) open(name string) (*mgr.Service, func(), error) {
	m, err := mgr.Connect()
	if err != nil {
		return nil, nil, fmt.Errorf("service control manager: %w", err)
	}
	s, err := m.OpenService(name)
	if err != nil {
		m.Disconnect()
		if errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST) {
			return nil, nil, fmt.Errorf("%w: %s", errNotInstalled, name)
		}
		return nil, nil, fmt.Errorf("service %s: %w", name, err)
	}
	return s, func() { s.Close(); m.Disconnect() }, nil
}

// wait polls s while its state is one of pending, until timeout; it
// returns the state reached.
func wait(ctx context.Context, s *mgr.Service, pending ...svc.State) (svc.State, error) {
	deadline := time.Now().Add(scmTimeout)
	for {
		st, err := s.Query()
		if err != nil {
			return 0, fmt.Errorf("service %s: %w", s.Name, err)
		}
		if !slices.Contains(pending, st.State) || time.Now().After(deadline) {
			return st.State, nil
		}
		select {
		case <-ctx.Done():
			return st.State, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (b scm) control(ctx context.Context, action, name string, _ opts) (bool, error) {
	switch action {
	case "start":
		return b.start(ctx, name)
	case "stop":
		return b.stop(ctx, name)
	case "restart":
		if b.m.Self != "" && strings.EqualFold(name, b.m.Self) {
			return b.restartSelf(name)
		}
		if ok, err := b.stop(ctx, name); !ok || err != nil {
			return ok, err
		}
		return b.start(ctx, name)
	}
	return false, fmt.Errorf("service.%s is not available on Windows (Salt's win_service has no %s)", action, action)
}

// start is win_service.start: a disabled service is set to manual first;
// True once it runs.
func (b scm) start(ctx context.Context, name string) (bool, error) {
	s, done, err := b.open(name)
	if err != nil {
		return false, err
	}
	defer done()
	if st, err := startType(s); err == nil && st == mgr.StartDisabled {
		if err := setStartType(s, mgr.StartManual); err != nil {
			return false, fmt.Errorf("failed to start %s: set to manual: %w", name, err)
		}
	}
	if err := s.Start(); err != nil && !errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return false, fmt.Errorf("failed to start %s: %w", name, err)
	}
	st, err := wait(ctx, s, svc.StartPending, svc.Stopped)
	return st == svc.Running, err
}

// stop is win_service.stop: True once it is stopped (also when it was).
func (b scm) stop(ctx context.Context, name string) (bool, error) {
	s, done, err := b.open(name)
	if err != nil {
		return false, err
	}
	defer done()
	if _, err := s.Control(svc.Stop); err != nil && !errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE) {
		return false, fmt.Errorf("failed to stop %s: %w", name, err)
	}
	st, err := wait(ctx, s, svc.Running, svc.StopPending)
	return st == svc.Stopped, err
}

// restartSelf restarts the agent's own service from a process of its own:
// stopping the service ends the agent, which must not be what waits to
// start it again (Salt schedules a task for salt-minion likewise).
func (b scm) restartSelf(name string) (bool, error) {
	c := exec.Command("cmd.exe")
	c.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       fmt.Sprintf(`cmd.exe /c "net stop "%s" & net start "%s""`, name, name),
		HideWindow:    true,
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS,
	}
	if err := c.Start(); err != nil {
		return false, fmt.Errorf("restart %s: %w", name, err)
	}
	_ = c.Process.Release()
	return true, nil
}

// running is win_service.status: running or stopping.
func (b scm) running(_ context.Context, name, _ string) (bool, error) {
	s, done, err := b.open(name)
	if err != nil {
		return false, err
	}
	defer done()
	st, err := s.Query()
	if err != nil {
		return false, fmt.Errorf("service %s: %w", name, err)
	}
	return st.State == svc.Running || st.State == svc.StopPending, nil
}

// boot is win_service.enable (start type Auto) and disable (Disabled).
func (b scm) boot(_ context.Context, name string, enable bool, _ opts) (bool, error) {
	s, done, err := b.open(name)
	if err != nil {
		return false, err
	}
	defer done()
	want := uint32(mgr.StartDisabled)
	if enable {
		want = mgr.StartAutomatic
	}
	if err := setStartType(s, want); err != nil {
		return false, fmt.Errorf("service %s: set start type: %w", name, err)
	}
	after, err := startType(s)
	return err == nil && after == want, err
}

// enabled is win_service.enabled: the start type is Auto.
func (b scm) enabled(_ context.Context, name string) (bool, error) {
	s, done, err := b.open(name)
	if err != nil {
		return false, err
	}
	defer done()
	st, err := startType(s)
	if err != nil {
		return false, err
	}
	return st == mgr.StartAutomatic, nil
}

// available is win_service.available: the SCM knows the name (service
// names are case-insensitive).
func (b scm) available(_ context.Context, name string) (bool, error) {
	_, done, err := b.open(name)
	if errors.Is(err, errNotInstalled) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	done()
	return true, nil
}

// list is win_service.get_all, get_enabled (start type Auto) and
// get_disabled (Manual or Disabled), sorted.
func (b scm) list(_ context.Context, which string) ([]string, error) {
	m, err := mgr.Connect()
	if err != nil {
		return nil, fmt.Errorf("service control manager: %w", err)
	}
	defer m.Disconnect()
	names, err := m.ListServices()
	if err != nil {
		return nil, fmt.Errorf("service control manager: list services: %w", err)
	}
	out := []string{}
	for _, n := range names {
		if which != "all" {
			s, err := m.OpenService(n)
			if err != nil {
				continue
			}
			st, err := startType(s)
			s.Close()
			if err != nil {
				continue
			}
			auto := st == mgr.StartAutomatic
			off := st == mgr.StartManual || st == mgr.StartDisabled
			if (which == "enabled" && !auto) || (which == "disabled" && !off) {
				continue
			}
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// startType is the service's start type (mgr.StartAutomatic…), read with
// QueryServiceConfig alone: mgr's Config also reads the description and
// delayed start, which wine's SCM does not answer.
func startType(s *mgr.Service) (uint32, error) {
	var need uint32
	err := windows.QueryServiceConfig(s.Handle, nil, 0, &need)
	if err != nil && !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
		return 0, fmt.Errorf("service %s: %w", s.Name, err)
	}
	buf := make([]byte, need)
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, cfg, need, &need); err != nil {
		return 0, fmt.Errorf("service %s: %w", s.Name, err)
	}
	return cfg.StartType, nil
}

// setStartType changes only the service's start type.
func setStartType(s *mgr.Service, t uint32) error {
	return windows.ChangeServiceConfig(s.Handle, windows.SERVICE_NO_CHANGE, t, windows.SERVICE_NO_CHANGE,
		nil, nil, nil, nil, nil, nil, nil)
}
