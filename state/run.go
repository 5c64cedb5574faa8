package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/function"
)

// Runner runs low chunks with the state functions of Funcs.
type Runner struct {
	// Funcs holds the state functions ("file.managed").
	Funcs *function.Registry
	// Exec calls an execution function: unless/onlyif/check_cmd run
	// commands with cmd.retcode, and their function form calls others.
	Exec func(ctx context.Context, name string, args []any, kwargs map[string]any) (any, error)
	// Test is test mode: nothing is changed; states report what would.
	Test bool
	// Failhard stops the run at the first failed state (Salt's failhard
	// option; a state's own `failhard` does the same for it).
	Failhard bool
	// Template renders templates for state functions (Running.Template).
	Template func(ctx context.Context, engine, name string, src []byte, context map[string]any) ([]byte, error)
	// Progress, when set, is told of each result as it is recorded, with
	// the number of chunks (Salt's state_events).
	Progress func(tag string, result map[string]any, total int)
	// Starting, when set, is told of each state about to run (after its
	// requisites, before its function).
	Starting func(tag string)
	// Sleep waits between retries (nil: time, cancelled with ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// Done are results of chunks an earlier run finished, by tag: they
	// are not run again, and what requires them sees their result (a
	// resumed orchestration).
	Done map[string]map[string]any
}

// Run runs chunks (ordered, as Chunks returns them) and returns Salt's
// state return: each chunk's result under its tag.
func (r *Runner) Run(ctx context.Context, chunks []*Chunk) map[string]any {
	x := &run{Runner: r, chunks: chunks, index: newChunkIndex(chunks), results: map[*Chunk]map[string]any{},
		active: map[*Chunk]bool{}, pending: map[*Chunk]chan struct{}{}}
	for _, c := range chunks {
		if res, ok := r.Done[c.Tag]; ok {
			x.results[c] = res
			if n, ok := number(res["__run_num__"]); ok && int(n) >= x.runNum {
				x.runNum = int(n) + 1
			}
		}
	}
	for _, c := range chunks {
		if x.stopped() {
			break
		}
		x.chunk(ctx, c)
	}
	x.waitAll()
	if !x.stopped() {
		x.listeners(ctx)
	}
	out := make(map[string]any, len(x.results))
	x.mu.Lock()
	defer x.mu.Unlock()
	for c, res := range x.results {
		out[c.Tag] = res
	}
	for tag, res := range x.extra {
		out[tag] = res
	}
	return out
}

type run struct {
	*Runner
	chunks []*Chunk
	index  *chunkIndex

	mu      sync.Mutex
	results map[*Chunk]map[string]any
	extra   map[string]map[string]any // listen's mod_watch results
	runNum  int
	stop    bool

	active  map[*Chunk]bool          // chunks whose requisites are being run
	pending map[*Chunk]chan struct{} // parallel chunks still running
}

func (x *run) stopped() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stop
}

func (x *run) result(c *Chunk) (map[string]any, bool) {
	if ch, ok := x.pending[c]; ok {
		<-ch
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	res, ok := x.results[c]
	return res, ok
}

func (x *run) waitAll() {
	for _, ch := range x.pending {
		<-ch
	}
}

// record stores a chunk's result with its run number.
func (x *run) record(c *Chunk, res map[string]any) {
	x.mu.Lock()
	res["__run_num__"] = x.runNum
	x.runNum++
	x.results[c] = res
	if res["result"] == false && (x.Failhard || truth(c.Args["failhard"])) {
		x.stop = true
	}
	x.mu.Unlock()
	if x.Progress != nil {
		x.Progress(c.Tag, res, len(x.chunks))
	}
}

// chunk runs c, after what it requires.
func (x *run) chunk(ctx context.Context, c *Chunk) {
	x.mu.Lock()
	_, done := x.results[c]
	x.mu.Unlock()
	if done || x.active[c] || x.pending[c] != nil {
		return
	}
	x.active[c] = true
	defer delete(x.active, c)
	status, comment := x.check(ctx, c)
	if x.stopped() {
		return
	}
	switch status {
	case "fail", "missing", "recursive":
		res := skipped(c, false, comment)
		if status == "recursive" {
			delete(res, "__state_ran__")
		}
		x.record(c, res)
	case "onfail":
		x.record(c, skipped(c, true, "State was not run because onfail req did not change"))
	case "onchanges":
		x.record(c, skipped(c, true, "State was not run because none of the onchanges reqs changed"))
	case "pre":
		x.record(c, skipped(c, true, "No changes detected"))
	default:
		if truth(c.Args["parallel"]) {
			done := make(chan struct{})
			x.pending[c] = done
			go func() {
				defer close(done)
				x.record(c, x.execute(ctx, c, status == "change"))
			}()
			return
		}
		x.record(c, x.execute(ctx, c, status == "change"))
	}
}

// skipped is the result of a chunk that did not run.
func skipped(c *Chunk, ok bool, comment string) map[string]any {
	return map[string]any{"__id__": c.ID, "__sls__": c.SLS, "name": c.Name, "changes": map[string]any{},
		"result": ok, "comment": comment, "__state_ran__": false, "start_time": startTime(time.Now()), "duration": 0.0}
}

// check runs what c requires and decides: met, change (a watched state
// changed), fail, missing, recursive, onfail, onchanges, pre.
func (x *run) check(ctx context.Context, c *Chunk) (status, comment string) {
	if len(c.reqs) == 0 {
		return "met", ""
	}
	type seen struct {
		res map[string]any
		c   *Chunk
	}
	byKind := map[string][]seen{}
	missing := map[string][]string{}
	for _, r := range c.reqs {
		if r.kind == "use" || r.kind == "listen" {
			continue
		}
		found := false
		for _, t := range x.index.candidates(x.chunks, r) {
			if t == c || !r.matches(t) {
				continue
			}
			found = true
			if r.kind == "prereq" {
				byKind["prereq"] = append(byKind["prereq"], seen{x.preview(ctx, t), t})
				continue
			}
			if x.active[t] {
				return "recursive", "Recursive requisite found"
			}
			x.chunk(ctx, t)
			res, ok := x.result(t)
			if !ok {
				if x.stopped() {
					return "fail", ""
				}
				return "recursive", "Recursive requisite found"
			}
			byKind[r.kind] = append(byKind[r.kind], seen{res, t})
		}
		if !found && r.kind != "prerequired" {
			missing[r.kind] = append(missing[r.kind], r.state+": "+r.target)
		}
	}
	if len(missing) > 0 {
		var b strings.Builder
		b.WriteString("The following requisites were not found:\n")
		for _, kind := range sortedKeys(missing) {
			fmt.Fprintf(&b, "                   %s:\n", kind)
			for _, m := range missing[kind] {
				fmt.Fprintf(&b, "                       %s\n", m)
			}
		}
		return "missing", b.String()
	}
	failed := map[string]bool{}
	fail := func(s seen) { failed[s.c.SLS+"."+s.c.ID] = true }
	changed := false
	for _, kind := range []string{"require", "watch", "prerequired"} {
		for _, s := range byKind[kind] {
			if s.res["result"] == false {
				fail(s)
			} else if kind == "watch" && hasChanges(s.res) {
				changed = true
			}
		}
	}
	for _, kind := range []string{"require_any", "watch_any"} {
		list := byKind[kind]
		if len(list) == 0 {
			continue
		}
		allFailed := true
		for _, s := range list {
			if s.res["result"] != false {
				allFailed = false
				if kind == "watch_any" && hasChanges(s.res) {
					changed = true
				}
			}
		}
		if allFailed {
			for _, s := range list {
				fail(s)
			}
		}
	}
	if len(failed) > 0 {
		names := sortedKeys(failed)
		return "fail", "One or more requisite failed: " + strings.Join(names, ", ")
	}
	onfail := append(byKind["onfail"], byKind["onfail_any"]...)
	if len(onfail) > 0 || len(byKind["onfail_all"]) > 0 {
		triggered := false
		for _, s := range onfail {
			if s.res["result"] == false {
				triggered = true
			}
		}
		if all := byKind["onfail_all"]; len(all) > 0 {
			allFailed := true
			for _, s := range all {
				if s.res["result"] != false {
					allFailed = false
				}
			}
			triggered = triggered || allFailed
		}
		if !triggered {
			return "onfail", ""
		}
	}
	onchanges := append(byKind["onchanges"], byKind["onchanges_any"]...)
	if len(onchanges) > 0 {
		hit := false
		for _, s := range onchanges {
			if hasChanges(s.res) {
				hit = true
			}
		}
		if !hit {
			return "onchanges", ""
		}
	}
	if pre := byKind["prereq"]; len(pre) > 0 {
		hit := false
		for _, s := range pre {
			if hasChanges(s.res) || s.res["result"] == nil {
				hit = true
			}
		}
		if !hit {
			return "pre", ""
		}
	}
	if changed {
		return "change", ""
	}
	return "met", ""
}

// preview runs t in test mode, for a prereq: would it change anything?
func (x *run) preview(ctx context.Context, t *Chunk) map[string]any {
	test := *x.Runner
	test.Test, test.Starting = true, nil
	tx := &run{Runner: &test, chunks: x.chunks, index: x.index, results: map[*Chunk]map[string]any{}}
	return tx.execute(ctx, t, false)
}

func hasChanges(res map[string]any) bool {
	switch ch := res["changes"].(type) {
	case map[string]any:
		return len(ch) > 0
	case nil:
		return false
	case bool:
		return ch
	}
	return true
}

// execute runs c's function (after its unless/onlyif/creates), then
// mod_watch when a watched state changed and the state itself did not,
// with retry and check_cmd; the result has Salt's fields.
func (x *run) execute(ctx context.Context, c *Chunk, watched bool) map[string]any {
	if x.Starting != nil {
		x.Starting(c.Tag)
	}
	start := time.Now()
	res := x.attempts(ctx, c, c.Fun, nil)
	if watched && !hasChanges(res) && res["skip_watch"] != true && res["result"] != false {
		if _, ok := x.Funcs.Lookup(c.State + ".mod_watch"); ok {
			res = x.attempts(ctx, c, "mod_watch", x.watchedResults(c))
		}
	}
	res["__id__"], res["__sls__"] = c.ID, c.SLS
	res["start_time"] = startTime(start)
	res["duration"] = duration(time.Since(start))
	return res
}

func (x *run) watchedResults(c *Chunk) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range c.reqs {
		if !strings.HasPrefix(r.kind, "watch") && r.kind != "listen" {
			continue
		}
		for _, t := range x.index.candidates(x.chunks, r) {
			if t != c && r.matches(t) {
				x.mu.Lock()
				res, ok := x.results[t]
				x.mu.Unlock()
				if ok {
					out[t.Tag] = res
				}
			}
		}
	}
	return out
}

// attempts is one call with Salt's retry: repeated while the result is
// not `until`, attempts times, interval (plus up to splay) seconds apart.
func (x *run) attempts(ctx context.Context, c *Chunk, fun string, watched map[string]map[string]any) map[string]any {
	res := x.call(ctx, c, fun, watched)
	spec, ok := retrySpec(c.Args["retry"])
	if !ok || x.Test || res["skip_watch"] == true {
		return res
	}
	var notes []string
	for attempt := 1; attempt < spec.attempts && !sameResult(res["result"], spec.until); attempt++ {
		notes = append(notes, fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%v\"", attempt, pyStr(res["result"]), res["comment"]))
		wait := spec.interval
		if spec.splay > 0 {
			wait += time.Duration(rand.Int64N(int64(spec.splay)))
		}
		if err := x.sleep(ctx, wait); err != nil {
			break
		}
		res = x.call(ctx, c, fun, watched)
	}
	if len(notes) > 0 {
		res["comment"] = strings.Join(append(notes, fmt.Sprint(res["comment"])), "\n")
	}
	return res
}

func (x *run) sleep(ctx context.Context, d time.Duration) error {
	if x.Sleep != nil {
		return x.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type retry struct {
	attempts        int
	until           any
	interval, splay time.Duration
}

// retrySpec reads `retry: True` or `retry: {attempts, until, interval,
// splay}` with Salt's defaults (2 attempts, until True, 30 s, no splay).
func retrySpec(v any) (retry, bool) {
	spec := retry{attempts: 2, until: true, interval: 30 * time.Second}
	switch v := v.(type) {
	case bool:
		return spec, v
	case map[string]any:
		if n, ok := number(v["attempts"]); ok {
			spec.attempts = int(n)
		}
		if u, ok := v["until"]; ok {
			spec.until = u
		}
		if n, ok := number(v["interval"]); ok {
			spec.interval = time.Duration(n * float64(time.Second))
		}
		if n, ok := number(v["splay"]); ok {
			spec.splay = time.Duration(n * float64(time.Second))
		}
		return spec, true
	}
	return spec, false
}

func sameResult(a, b any) bool { return pyStr(a) == pyStr(b) }

// call runs fun of c's module once: the run checks, then the function.
func (x *run) call(ctx context.Context, c *Chunk, fun string, watched map[string]map[string]any) (res map[string]any) {
	if skip := x.runChecks(ctx, c); skip != nil {
		return skip
	}
	name := c.State + "." + fun
	f, ok := x.Funcs.Lookup(name)
	if !ok {
		return failed(c, fmt.Sprintf("State '%s' was not found in SLS '%s'\nReason: '%s' is not available.\n", name, c.SLS, name))
	}
	kwargs := map[string]any{"name": c.Name}
	for k, v := range c.Args {
		if runtimeKeys[k] || strings.HasPrefix(k, "__") {
			continue
		}
		kwargs[k] = v
	}
	if fun == "mod_watch" {
		kwargs["sfun"] = c.Fun
	}
	if _, set := kwargs["saltenv"]; !set && x.Funcs.Accepts(name, "saltenv") {
		kwargs["saltenv"] = c.Env
	}
	for k := range kwargs {
		if !x.Funcs.Accepts(name, k) && !f.VarKwargs {
			return failed(c, fmt.Sprintf("'%s' is not an argument of %s (its arguments: %s)", k, name, paramNames(f)))
		}
	}
	low := c.Low()
	rctx := With(ctx, &Running{Test: x.Test, ID: c.ID, SLS: c.SLS, Saltenv: c.Env, Low: low, ArgOrder: c.ArgOrder,
		Template: x.Template, Watched: watched})
	defer func() {
		if p := recover(); p != nil {
			res = failed(c, fmt.Sprintf("An exception occurred in this state: %v\n%s", p, debug.Stack()))
		}
	}()
	out, err := x.Funcs.Call(rctx, name, nil, kwargs, nil)
	if err != nil {
		var ae *function.ArgError
		if errors.As(err, &ae) {
			return failed(c, fmt.Sprintf("Invalid arguments to %s: %v", name, ae.Err))
		}
		return failed(c, "An exception occurred in this state: "+err.Error())
	}
	res = resultMap(c, out)
	if !x.Test && res["result"] == true && hasChanges(res) {
		if cc, ok := c.Args["check_cmd"]; ok {
			if failedCmd := x.checkCmd(ctx, c, cc); failedCmd != "" {
				res["result"] = false
				res["comment"] = fmt.Sprint(res["comment"]) + "\ncheck_cmd determined the state failed"
			}
		}
	}
	return res
}

func paramNames(f *function.Func) string {
	var names []string
	for _, p := range f.Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

func failed(c *Chunk, comment string) map[string]any {
	return map[string]any{"name": c.Name, "changes": map[string]any{}, "result": false, "comment": comment}
}

// resultMap turns a state function's return into Salt's result fields.
func resultMap(c *Chunk, out any) map[string]any {
	var r Result
	switch v := out.(type) {
	case Result:
		r = v
	case *Result:
		r = *v
	case map[string]any:
		m := map[string]any{"name": c.Name, "changes": map[string]any{}, "result": false, "comment": ""}
		for k, val := range v {
			m[k] = val
		}
		return m
	default:
		return failed(c, fmt.Sprintf("%s.%s returned %T, not a state result", c.State, c.Fun, out))
	}
	m := map[string]any{"name": r.Name, "comment": r.Comment}
	if r.Name == "" {
		m["name"] = c.Name
	}
	if r.Changes == nil {
		r.Changes = map[string]any{}
	}
	m["changes"] = r.Changes
	if r.Result == nil {
		m["result"] = nil
	} else {
		m["result"] = *r.Result
	}
	if len(r.Warnings) > 0 {
		w := make([]any, len(r.Warnings))
		for i, s := range r.Warnings {
			w[i] = s
		}
		m["warnings"] = w
	}
	return m
}

// runChecks is Salt's onlyif, unless and creates: a result that skips the
// state, or nil to run it.
func (x *run) runChecks(ctx context.Context, c *Chunk) map[string]any {
	skip := func(comment string) map[string]any {
		return map[string]any{"name": c.Name, "changes": map[string]any{}, "result": true, "comment": comment, "skip_watch": true}
	}
	if v, ok := c.Args["onlyif"]; ok {
		for _, cond := range asList(v) {
			ok, err := x.condition(ctx, c, cond)
			if err != nil {
				return failed(c, "onlyif: "+err.Error())
			}
			if !ok {
				return skip("onlyif condition is false")
			}
		}
	}
	if v, ok := c.Args["unless"]; ok {
		all := true
		for _, cond := range asList(v) {
			ok, err := x.condition(ctx, c, cond)
			if err != nil {
				return failed(c, "unless: "+err.Error())
			}
			all = all && ok
		}
		if all {
			return skip("unless condition is true")
		}
	}
	if v, ok := c.Args["creates"]; ok {
		all := true
		for _, p := range asList(v) {
			if !fileExists(pyStr(p)) {
				all = false
			}
		}
		if all {
			return skip("All files in creates exist")
		}
	}
	return nil
}

// condition evaluates one onlyif/unless entry: a shell command (true when
// it exits 0) or {fun: module.function, args…} (true when the function's
// return is true).
func (x *run) condition(ctx context.Context, c *Chunk, cond any) (bool, error) {
	if x.Exec == nil {
		return false, errors.New("no execution functions to evaluate it with")
	}
	switch cond := cond.(type) {
	case string:
		kw := map[string]any{"python_shell": true, "ignore_retcode": true}
		for _, k := range []string{"cwd", "runas", "env", "shell", "umask", "timeout"} {
			if v, ok := c.Args[k]; ok {
				kw[k] = v
			}
		}
		out, err := x.Exec(ctx, "cmd.retcode", []any{cond}, kw)
		if err != nil {
			return false, err
		}
		n, _ := number(out)
		return n == 0, nil
	case map[string]any:
		fun, _ := cond["fun"].(string)
		if fun == "" {
			return false, fmt.Errorf("%v names no fun", cond)
		}
		args := asList(cond["args"])
		kw := map[string]any{}
		for k, v := range cond {
			if k != "fun" && k != "args" {
				kw[k] = v
			}
		}
		out, err := x.Exec(ctx, fun, args, kw)
		if err != nil {
			return false, err
		}
		return truth(out), nil
	case bool:
		return cond, nil
	}
	return false, fmt.Errorf("%v is neither a command nor {fun: …}", cond)
}

// checkCmd runs check_cmd's commands; it returns the first that failed.
func (x *run) checkCmd(ctx context.Context, c *Chunk, v any) string {
	for _, cmd := range asList(v) {
		ok, err := x.condition(ctx, c, pyStr(cmd))
		if err != nil || !ok {
			return pyStr(cmd)
		}
	}
	return ""
}

// listeners runs, at the end, mod_watch for every state with a listen
// requisite whose listened states changed (Salt's listen).
func (x *run) listeners(ctx context.Context) {
	for _, c := range x.chunks {
		var fired bool
		for _, r := range c.reqs {
			if r.kind != "listen" {
				continue
			}
			for _, t := range x.chunks {
				if res, ok := x.results[t]; ok && t != c && r.matches(t) && hasChanges(res) {
					fired = true
				}
			}
		}
		if !fired {
			continue
		}
		if _, ok := x.Funcs.Lookup(c.State + ".mod_watch"); !ok {
			continue
		}
		start := time.Now()
		res := x.call(ctx, c, "mod_watch", x.watchedResults(c))
		// Salt runs a listener as a chunk of its own whose id is
		// listener_<id>, and keys its result so (scripts and the
		// highstate outputter's readers parse the key).
		id := "listener_" + c.ID
		res["__id__"], res["__sls__"] = id, c.SLS
		res["start_time"], res["duration"] = startTime(start), duration(time.Since(start))
		x.mu.Lock()
		res["__run_num__"] = x.runNum
		x.runNum++
		if x.extra == nil {
			x.extra = map[string]map[string]any{}
		}
		tag := Tag(c.State, id, c.Name, "mod_watch")
		x.extra[tag] = res
		x.mu.Unlock()
		if x.Progress != nil {
			x.Progress(tag, res, len(x.chunks))
		}
	}
}

// startTime is Salt's start_time: the local time of day with
// microseconds.
func startTime(t time.Time) string { return t.Format("15:04:05.000000") }

// duration is Salt's duration: milliseconds with three decimals.
func duration(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}

// truth is Python's truth of a YAML value.
func truth(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case map[string]any:
		if r, ok := v["result"]; ok {
			return truth(r)
		}
		return len(v) > 0
	case []any:
		return len(v) > 0
	}
	if n, ok := number(v); ok {
		return n != 0
	}
	return true
}

// AnyFailed reports whether a state return holds a failed state.
func AnyFailed(ret map[string]any) bool {
	for _, v := range ret {
		if m, ok := v.(map[string]any); ok && m["result"] == false {
			return true
		}
	}
	return false
}

// RunNumOrder returns ret's tags in run order.
func RunNumOrder(ret map[string]any) []string {
	tags := sortedKeys(ret)
	sort.SliceStable(tags, func(i, j int) bool {
		a, _ := number(runNum(ret[tags[i]]))
		b, _ := number(runNum(ret[tags[j]]))
		return a < b
	})
	return tags
}

func runNum(v any) any {
	if m, ok := v.(map[string]any); ok {
		if n, ok := m["__run_num__"].(int); ok {
			return int64(n)
		}
		return m["__run_num__"]
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
