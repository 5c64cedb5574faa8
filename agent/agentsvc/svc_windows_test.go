package agentsvc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// Started from a console (not by the SCM), Run is the agent itself.
func TestRunFromConsole(t *testing.T) {
	want := errors.New("agent stopped")
	ran := false
	err := Run(context.Background(), "brine-agent-test", func(context.Context) error { ran = true; return want })
	if !ran || !errors.Is(err, want) {
		t.Errorf("Run: ran %v, err %v; want fn run and its error", ran, err)
	}
}

// The handler reports running, and a Stop cancels the agent's context and
// reports it stopped with exit code 0; an agent that fails is exit code 1
// (so that the recovery actions restart it).
func TestHandler(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fn       func(context.Context) error
		stop     bool
		wantCode uint32
	}{
		{"stopped", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, true, 0},
		{"failed", func(context.Context) error { return errors.New("no master") }, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &handler{ctx: context.Background(), fn: tc.fn}
			req := make(chan svc.ChangeRequest, 1)
			status := make(chan svc.Status, 10)
			if tc.stop {
				req <- svc.ChangeRequest{Cmd: svc.Stop}
			}
			done := make(chan uint32, 1)
			go func() { _, code := h.Execute(nil, req, status); done <- code }()
			var code uint32
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Execute did not return")
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", code, tc.wantCode, h.err)
			}
			close(status)
			var states []svc.State
			for s := range status {
				states = append(states, s.State)
			}
			if len(states) < 2 || states[0] != svc.StartPending || states[1] != svc.Running {
				t.Errorf("states %v, want StartPending, Running first", states)
			}
		})
	}
}

// Install registers an automatic service with restart recovery actions,
// a second Install says it exists, and Remove unregisters it (wine's
// Service Control Manager keeps services in its registry as Windows').
func TestInstallRemove(t *testing.T) {
	name := fmt.Sprintf("brine-agent-test-%d", os.Getpid())
	exe, _ := os.Executable()
	if err := Install(name, "brine agent (test)", exe, []string{"agent", "-c", `C:\ProgramData\brine\conf`}); err != nil {
		t.Fatalf("Install: %v", err)
	}
	t.Cleanup(func() { _ = Remove(name) })
	m, err := mgr.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		t.Fatalf("the installed service does not open: %v", err)
	}
	cfg := serviceConfig(t, s)
	display, bin := windows.UTF16PtrToString(cfg.DisplayName), windows.UTF16PtrToString(cfg.BinaryPathName)
	if cfg.StartType != mgr.StartAutomatic || display != "brine agent (test)" ||
		!strings.Contains(bin, `agent -c C:\ProgramData\brine\conf`) {
		t.Errorf("start type %d, display %q, command %q: want automatic start, the display name and the arguments",
			cfg.StartType, display, bin)
	}
	if acts, err := s.RecoveryActions(); err != nil {
		// Wine's SCM answers no QueryServiceConfig2 level; Windows does.
		t.Logf("recovery actions not readable here (wine): %v", err)
	} else if len(acts) != 3 || acts[0].Type != mgr.ServiceRestart {
		t.Errorf("recovery actions %+v, want three restarts", acts)
	}
	s.Close()
	if err := Install(name, "again", exe, nil); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Errorf("second Install: %v, want already installed", err)
	}
	if err := Remove(name); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if s, err := m.OpenService(name); err == nil {
		s.Close()
		t.Error("the service still opens after Remove")
	}
	if err := Remove(name); err == nil || !strings.Contains(err.Error(), "is not installed") {
		t.Errorf("second Remove: %v, want not installed", err)
	}
}

// serviceConfig reads s's configuration with QueryServiceConfig alone
// (mgr's Config also asks for levels wine does not answer).
func serviceConfig(t *testing.T, s *mgr.Service) *windows.QUERY_SERVICE_CONFIG {
	t.Helper()
	var need uint32
	_ = windows.QueryServiceConfig(s.Handle, nil, 0, &need)
	buf := make([]byte, need)
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, cfg, need, &need); err != nil {
		t.Fatalf("QueryServiceConfig: %v", err)
	}
	return cfg
}

// childFlag makes the test binary the service itself (TestMain), started
// by the SCM in TestUnderSCM.
const childFlag = "-brine-service-child="

func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if mark, ok := strings.CutPrefix(a, childFlag); ok {
			os.Exit(serviceChild(mark))
		}
	}
	os.Exit(m.Run())
}

// serviceChild is the agent of TestUnderSCM: it writes "running" to mark
// and, once the SCM stops it, "stopped".
func serviceChild(mark string) int {
	err := Run(context.Background(), strings.TrimSuffix(filepathBase(mark), ".mark"), func(ctx context.Context) error {
		if err := os.WriteFile(mark, []byte("running"), 0o644); err != nil {
			return err
		}
		<-ctx.Done()
		return os.WriteFile(mark, []byte("stopped"), 0o644)
	})
	if err != nil {
		return 1
	}
	return 0
}

func filepathBase(p string) string { return p[strings.LastIndexAny(p, `\/`)+1:] }

// The SCM starts the installed service, Run reports it running and runs
// the agent, and a Stop cancels the agent's context, which ends cleanly.
func TestUnderSCM(t *testing.T) {
	name := fmt.Sprintf("brine-agent-scm-%d", os.Getpid())
	mark := os.TempDir() + `\` + name + ".mark"
	exe, _ := os.Executable()
	if err := Install(name, "brine agent (SCM test)", exe, []string{childFlag + mark}); err != nil {
		t.Fatalf("Install: %v", err)
	}
	t.Cleanup(func() { _ = Remove(name); _ = os.Remove(mark) })
	m, err := mgr.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	waitFor := func(want string, state svc.State) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			b, _ := os.ReadFile(mark)
			st, err := s.Query()
			if err == nil && string(b) == want && st.State == state {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("mark %q, state %v (err %v); want %q, %v", b, st.State, err, want, state)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("running", svc.Running)
	if _, err := s.Control(svc.Stop); err != nil {
		t.Fatalf("stop: %v", err)
	}
	waitFor("stopped", svc.Stopped)
}
