// Package workers runs short tasks on goroutines that stay for the next
// one. A goroutine per task starts with a small stack and grows it again
// every time; on the deep call paths of a gateway request or a reaction that
// growth cost a tenth of the CPU.
package workers

import (
	"sync"
	"time"
)

// idleFor is how long a worker waits for its next task.
const idleFor = 2 * time.Second

// Pool hands tasks to waiting workers, starting one when none waits. It
// does not bound how many run at once: callers that need a bound hold a
// slot while a task runs.
type Pool struct {
	idle chan func()
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// New returns an empty pool.
func New() *Pool {
	return &Pool{idle: make(chan func()), stop: make(chan struct{})}
}

// Go runs task on a worker.
func (p *Pool) Go(task func()) {
	select {
	case p.idle <- task:
	default:
		p.wg.Go(func() { p.work(task) })
	}
}

func (p *Pool) work(task func()) {
	timer := time.NewTimer(idleFor)
	defer timer.Stop()
	for {
		task()
		timer.Reset(idleFor)
		select {
		case task = <-p.idle:
		case <-timer.C:
			return
		case <-p.stop:
			return
		}
	}
}

// Close lets idle workers go and waits for the running tasks to finish.
// Go must not be called after Close.
func (p *Pool) Close() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}
