package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolRunsEveryTaskAndReusesWorkers(t *testing.T) {
	p := New()
	var done atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		for range 100 {
			wg.Add(1)
			p.Go(func() { defer wg.Done(); done.Add(1) })
		}
		wg.Wait()
	}
	if done.Load() != 300 {
		t.Fatalf("%d tasks ran, want 300", done.Load())
	}
	// Sequential tasks after the first find a worker waiting.
	before := runtime.NumGoroutine()
	for range 50 {
		ran := make(chan struct{})
		p.Go(func() { close(ran) })
		<-ran
		time.Sleep(time.Millisecond) // let the worker return to waiting
	}
	if grown := runtime.NumGoroutine() - before; grown > 1 {
		t.Errorf("50 sequential tasks started %d goroutines; want them to reuse waiting workers", grown)
	}
	p.Close()
}

func TestCloseWaitsForRunningTasksAndStopsWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	p := New()
	var finished atomic.Bool
	started := make(chan struct{})
	p.Go(func() { close(started); time.Sleep(50 * time.Millisecond); finished.Store(true) })
	<-started
	p.Close()
	if !finished.Load() {
		t.Fatal("Close returned before the running task finished")
	}
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
