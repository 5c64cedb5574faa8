package e2e

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// tied makes the process cmd starts receive SIGKILL when this test binary
// dies. A test that times out ends the binary with a panic and no Cleanup
// runs: without this its masters, agents, simulators and watchers went
// on running after it, holding their ports and a CPU the next run needed.
func tied(cmd *exec.Cmd) *exec.Cmd { return tiedWith(cmd, syscall.SIGKILL) }

// tiedWith is tied with another signal: SIGTERM for a script whose trap
// stops what it started.
func tiedWith(cmd *exec.Cmd, sig syscall.Signal) *exec.Cmd {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	return cmd
}

// TestTiedDiesWithTheTestBinary: a process started tied is killed when
// what started it ends without stopping it, as a timed-out test binary
// does. The parent-death signal follows the thread that started the
// process, so a goroutine that keeps its thread locked to the end, which
// Go then ends with it, stands in for the whole binary exiting.
func TestTiedDiesWithTheTestBinary(t *testing.T) {
	pids := make(chan int, 1)
	var start func()
	start = func() {
		runtime.LockOSThread() // never unlocked below: the thread ends with this goroutine
		if syscall.Gettid() == syscall.Getpid() {
			// The main thread, which Go never ends: keep it busy
			// while a goroutine on another thread starts the child.
			done := make(chan struct{})
			go func() { start(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		sleep := tied(exec.Command("sleep", "60"))
		if err := sleep.Start(); err != nil {
			t.Error(err)
			pids <- 0
			return
		}
		pids <- sleep.Process.Pid
	}
	go start()
	pid := <-pids
	if pid == 0 {
		return
	}
	exited := make(chan syscall.WaitStatus, 1)
	go func() {
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
		exited <- ws
	}()
	select {
	case ws := <-exited:
		if ws.Signal() != syscall.SIGKILL {
			t.Errorf("sleep ended with %v, want killed by SIGKILL", ws)
		}
	case <-time.After(5 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("sleep still ran 5 s after the thread that started it ended")
	}
}
