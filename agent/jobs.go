package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/wire"
)

// A job's life on an agent, so that each runs once and none loses its
// return:
//
//   - When it arrives its load is written to proc/<jid> (Salt's proc
//     directory), which saltutil.running reads and which says, after a
//     crash, that the job had started.
//   - Its return is queued in the outbox (synced) before the jid is
//     added to done.log (doneLog) and proc/<jid> removed; the outbox
//     delivers it until the master acknowledges it.
//   - A jid found in proc/, done.log or among the running jobs is not run
//     again: the master publishes a job again to an agent that reconnects
//     without having returned it.
//   - At start, a proc/<jid> left by a killed agent gets a failed return
//     saying the job was interrupted, unless its return is already queued.
const (
	procDir = "proc"
	// keepDone is how long a finished jid is remembered (Salt's
	// keep_jobs): longer than any master keeps a job to publish again.
	keepDone = 24 * time.Hour
)

// Errors that end a job early; their text is the job's return.
var (
	errKilled     = errors.New("the job was killed (saltutil.kill_job)")
	errTerminated = errors.New("the job was terminated (saltutil.term_job)")
	errStopped    = errors.New("the agent stopped while the job ran")
)

// jobRunner runs the jobs the master publishes, concurrently.
type jobRunner struct {
	a    *Agent
	proc string
	done *doneLog

	mu      sync.Mutex
	running map[string]*runningJob
	wg      sync.WaitGroup
}

type runningJob struct {
	job    wire.Job
	start  time.Time
	cancel context.CancelCauseFunc
}

func newJobRunner(a *Agent, cacheDir string) (*jobRunner, error) {
	r := &jobRunner{a: a, proc: filepath.Join(cacheDir, procDir), running: map[string]*runningJob{}}
	if err := os.MkdirAll(r.proc, 0o700); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	var err error
	r.done, err = loadDoneLog(cacheDir)
	return r, err
}

// validJID refuses jids that cannot name a file or a tag.
func validJID(jid string) error {
	if jid == "" || len(jid) > 128 || strings.ContainsAny(jid, "/\\*> .\x00") {
		return fmt.Errorf("invalid jid %q", jid)
	}
	return nil
}

// start runs job, sent by the master at origin, in the background unless
// its jid was seen (from any master); ctx is the agent's, ending the job
// when the agent stops.
func (r *jobRunner) start(ctx context.Context, job wire.Job, origin string) {
	if err := validJID(job.JID); err != nil {
		r.a.log.Error("job refused", "err", err)
		return
	}
	r.mu.Lock()
	if _, ok := r.running[job.JID]; ok {
		r.mu.Unlock()
		return
	}
	if r.seen(job.JID) {
		r.mu.Unlock()
		r.a.log.Debug("job already run; not running it again", "jid", job.JID)
		return
	}
	jctx, cancel := context.WithCancelCause(ctx)
	rj := &runningJob{job: job, start: time.Now(), cancel: cancel}
	r.running[job.JID] = rj
	r.wg.Add(1)
	r.mu.Unlock()
	if b, err := json.Marshal(r.procData(rj)); err == nil {
		if err := os.WriteFile(filepath.Join(r.proc, job.JID), b, 0o600); err != nil {
			r.a.log.Warn("job: proc file", "jid", job.JID, "err", err)
		}
	}
	go func() {
		defer r.wg.Done()
		defer cancel(nil)
		ret := r.a.execute(jctx, job)
		if ctx.Err() != nil && context.Cause(jctx) == ctx.Err() {
			ret = failed(ret, errStopped)
		}
		r.finish(job.JID, ret, origin)
	}()
}

// seen reports whether jid finished, or was left in proc/ by an agent
// that died while running it.
func (r *jobRunner) seen(jid string) bool {
	if r.done.has(jid) {
		return true
	}
	_, err := os.Stat(filepath.Join(r.proc, jid))
	return err == nil
}

// finish queues the return of jid for origin, then forgets the running
// job.
func (r *jobRunner) finish(jid string, ret wire.Return, origin string) {
	if err := r.a.queueReturn(ret, origin); err != nil {
		// Not queued: leave proc/<jid>, so that the next start reports
		// the job as interrupted rather than losing it silently.
		r.a.log.Error("job return not kept", "jid", jid, "err", err)
	} else {
		r.markDone(jid)
	}
	r.mu.Lock()
	delete(r.running, jid)
	r.mu.Unlock()
}

func (r *jobRunner) markDone(jid string) {
	if err := r.done.add(jid, time.Now()); err != nil {
		r.a.log.Warn("job: done.log", "jid", jid, "err", err)
	}
	os.Remove(filepath.Join(r.proc, jid))
}

// procData is Salt's proc data of a running job: its load and pid.
func (r *jobRunner) procData(rj *runningJob) map[string]any {
	j := rj.job
	return map[string]any{"jid": j.JID, "fun": j.Fun, "arg": nonNilArgs(j.Arg), "tgt": j.Tgt, "tgt_type": j.TgtType,
		"user": j.User, "ret": j.Ret, "pid": os.Getpid(), "start_time": rj.start.UTC().Format(time.RFC3339Nano)}
}

// Running describes the running jobs (modules.Jobs).
func (r *jobRunner) Running() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]map[string]any, 0, len(r.running))
	for _, jid := range slices.Sorted(maps.Keys(r.running)) {
		out = append(out, r.procData(r.running[jid]))
	}
	return out
}

// Signal ends a running job (modules.Jobs).
func (r *jobRunner) Signal(jid string, kill bool) bool {
	r.mu.Lock()
	rj, ok := r.running[jid]
	r.mu.Unlock()
	if !ok {
		return false
	}
	if kill {
		rj.cancel(errKilled)
	} else {
		rj.cancel(errTerminated)
	}
	return true
}

// state answers find_job.
func (r *jobRunner) state(jid string) wire.JobState {
	r.mu.Lock()
	_, running := r.running[jid]
	r.mu.Unlock()
	st := wire.JobState{JID: jid, Running: running}
	if !running {
		st.Done = r.done.has(jid)
	}
	return st
}

// recover gives every job a killed agent left running a failed return,
// unless its return was queued before the agent died, and forgets finished
// jids older than keepDone.
func (r *jobRunner) recover() error {
	ents, err := os.ReadDir(r.proc)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	queued := map[string]bool{}
	if len(ents) > 0 {
		items, _, _ := r.a.outbox.Pending(r.a.config().QueueMax)
		for _, it := range items {
			if it.Kind == "return" {
				queued[strings.TrimSuffix(strings.TrimPrefix(it.Tag, "salt/job/"), "/ret")] = true
			}
		}
	}
	for _, e := range ents {
		jid := e.Name()
		if r.done.has(jid) || queued[jid] {
			r.markDone(jid)
			continue
		}
		var job wire.Job
		b, err := os.ReadFile(filepath.Join(r.proc, jid))
		if err == nil {
			err = json.Unmarshal(b, &job)
		}
		if err != nil || job.JID != jid {
			job = wire.Job{JID: jid}
		}
		r.a.log.Warn("job interrupted by the agent's restart; returning it as failed", "jid", jid, "fun", job.Fun)
		ret := failed(wire.Return{JID: jid, Fun: job.Fun, FunArgs: nonNilArgs(job.Arg)},
			errors.New("the agent was restarted while the job ran; the function's outcome is unknown"))
		if err := r.a.queueReturn(ret, ""); err != nil {
			return err
		}
		r.markDone(jid)
	}
	return r.done.compact(time.Now())
}

func nonNilArgs(a []any) []any {
	if a == nil {
		return []any{}
	}
	return a
}

// failed turns ret into the failed return of err.
func failed(ret wire.Return, err error) wire.Return {
	ret.Return, ret.Success, ret.Out = "ERROR: "+err.Error(), false, "nested"
	if ret.Retcode == 0 {
		ret.Retcode = 1
	}
	return ret
}

// execute runs job's function and returns its return in Salt's shape:
// an unknown function is Salt's "'x.y' is not available.", wrong arguments
// "Passed invalid arguments to x.y: …", a failure "ERROR: …", each with
// retcode 1; a function may set a retcode of its own (cmd.run's exit
// status), which makes the return a failure without changing it.
func (a *Agent) execute(ctx context.Context, job wire.Job) wire.Return {
	ret := wire.Return{JID: job.JID, Fun: job.Fun, FunArgs: nonNilArgs(job.Arg), Success: true}
	if job.KillAfter > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, time.Duration(job.KillAfter*float64(time.Second)),
			fmt.Errorf("the function ran longer than the job's timeout of %gs and was stopped", job.KillAfter))
		defer cancel()
	}
	f, ok := a.funcs.Lookup(job.Fun)
	if !ok {
		ret.Return, ret.Success, ret.Retcode, ret.Out = fmt.Sprintf("'%s' is not available.", job.Fun), false, 1, "nested"
		return ret
	}
	ret.Out = f.Out
	args, kwargs := jobs.SplitArgs(job.Arg)
	if f.VarKwargs {
		// Salt hands a function taking **kwargs its job's load as
		// __pub_* keywords (load_args_and_kwargs).
		kwargs["__pub_fun"], kwargs["__pub_jid"], kwargs["__pub_pid"], kwargs["__pub_tgt"] = job.Fun, job.JID, int64(os.Getpid()), job.Tgt
		if job.TgtType != "" {
			kwargs["__pub_tgt_type"], kwargs["__pub_user"], kwargs["__pub_arg"], kwargs["__pub_ret"] = job.TgtType, job.User, nonNilArgs(job.Arg), job.Ret
		}
	}
	rctx, rc := modules.WithRetcode(ctx)
	v, err := a.funcs.Call(rctx, job.Fun, args, kwargs, nil)
	var argErr *function.ArgError
	switch {
	case err == nil:
		ret.Return = v
		if code := rc.Load(); code != 0 {
			ret.Retcode, ret.Success = int(code), false
		}
	case errors.As(err, &argErr):
		ret.Return = fmt.Sprintf("Passed invalid arguments to %s: %v\n%s", job.Fun, err, f.Doc)
		ret.Success, ret.Retcode, ret.Out = false, 1, "nested"
	default:
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		ret = failed(ret, err)
		if code := rc.Load(); code != 0 {
			ret.Retcode = int(code)
		}
	}
	ret.Return = truncateReturn(py.Finite(ret.Return), a.config().MaxReturnSize)
	return ret
}

// truncateReturn cuts a return larger than limit bytes of JSON to its first
// bytes with a note, so that an oversized return is reported, not dropped.
func truncateReturn(v any, limit int) any {
	if limit <= 0 {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) <= limit {
		return v
	}
	text, ok := v.(string)
	if !ok {
		text = string(b)
	}
	keep := min(len(text), limit-200)
	kept := strings.ToValidUTF8(text[:max(keep, 0)], "")
	return fmt.Sprintf("%s\n[return truncated: %d bytes of %d kept (max_return_size)]", kept, len(kept), len(b))
}

// queueReturn puts a job's return in the outbox, for the master at origin
// ("": any).
func (a *Agent) queueReturn(r wire.Return, origin string) error {
	r.Time = time.Now().UTC()
	it, err := returnItem(r)
	if err != nil {
		return err
	}
	if origin != "" {
		a.routes.Store(it.ID, origin)
	}
	if err := a.outbox.Put(it); err != nil {
		a.routes.Delete(it.ID)
		return err
	}
	return nil
}

// jobGrace is how long a stopping agent waits for its cancelled jobs to
// queue their returns.
const jobGrace = 5 * time.Second

// wait waits up to d for the running jobs to end, and closes done.log
// (a job ending later opens it again).
func (r *jobRunner) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
	r.done.close()
}
