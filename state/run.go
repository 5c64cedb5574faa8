package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
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

// call is Salt's State.call of c's own function.
func (x *run) call(ctx context.Context, c *Chunk) map[string]any {
	if x.prereq[c] {
		// A prereq's look: test mode, no run number; the mark is
		// spent (Salt's call sets __prereq__ back to False).
		x.prereq[c] = false
		return x.invoke(ctx, c, c.Fun, nil, 1, true)
	}
	return x.invoke(ctx, c, c.Fun, nil, 1, false)
}

// invoke is Salt's State.call: fun of c's module (mod_watch with the
// states watched) once, after its onlyif/unless/creates, then check_cmd;
// then, as `retry` says, again. For a prereq it runs in test mode and gets
// no run number; each retry gets one, as in Salt. A parallel chunk's runs
// in its own goroutine: it reads none of the run's bookkeeping maps.
func (x *run) invoke(ctx context.Context, c *Chunk, fun string, watched map[string]map[string]any, retries int, prereq bool) map[string]any {
	start := time.Now()
	if x.Starting != nil && !prereq && fun == c.Fun && retries == 1 {
		// Once a state: not again for its mod_watch or a retry.
		x.Starting(c.Tag)
	}
	res := x.callOnce(ctx, c, fun, watched, x.Test || prereq)
	if prereq {
		return res
	}
	res["__sls__"] = c.SLS
	res["__run_num__"] = x.nextRunNum(c)
	res["start_time"] = startTime(start)
	res["duration"] = duration(time.Since(start))
	res["__id__"] = c.ID
	v, ok := c.Args["retry"]
	if _, parallel := c.Args["parallel"]; !ok || parallel {
		return res
	}
	spec := retrySpec(v)
	if x.Test {
		res["comment"] = commentStr(res["comment"]) + "  " + fmt.Sprintf("The state would be retried every %d seconds (with a splay of up to %d seconds) a maximum of %d times or until a result of %s is returned",
			spec.interval, spec.splay, spec.attempts, scalarStr(spec.until))
		return res
	}
	if scalarStr(res["result"]) == scalarStr(spec.until) || spec.attempts <= retries {
		return res
	}
	wait := time.Duration(spec.interval) * time.Second
	if spec.splay > 0 {
		wait += time.Duration(rand.Int64N(int64(spec.splay)+1)) * time.Second
	}
	if err := x.sleep(ctx, wait); err != nil {
		return res
	}
	next := x.invoke(ctx, c, fun, watched, retries+1, false)
	next["comment"] = fmt.Sprintf("Attempt %d: Returned a result of \"%s\", with the following comment: \"%s\"\n%s",
		retries, scalarStr(res["result"]), commentStr(res["comment"]), commentStr(next["comment"]))
	return next
}

// commentStr is a comment as Python's str() prints it in Salt's retry
// messages (a list of comments as its repr).
func commentStr(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	return py.ReprValue(v)
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
	attempts, interval, splay int
	until                     bool
}

// retrySpec is Salt's verify_retry_data: `retry: {attempts, until,
// interval, splay}`, each of its type (whole seconds) or its default (2
// attempts, until True, 30 s, no splay); anything but a mapping is the
// defaults.
func retrySpec(v any) retry {
	spec := retry{attempts: 2, until: true, interval: 30}
	m, ok := v.(map[string]any)
	if !ok {
		return spec
	}
	if b, ok := m["until"].(bool); ok {
		spec.until = b
	}
	for key, dst := range map[string]*int{"attempts": &spec.attempts, "interval": &spec.interval, "splay": &spec.splay} {
		switch n := m[key].(type) {
		case int64:
			*dst = int(n)
		case int:
			*dst = n
		case bool:
			// Python's bool is an int.
			*dst = 0
			if n {
				*dst = 1
			}
		}
	}
	return spec
}

// callOnce runs fun of c's module once: the run checks, the function,
// check_cmd.
func (x *run) callOnce(ctx context.Context, c *Chunk, fun string, watched map[string]map[string]any, test bool) (res map[string]any) {
	defer func() {
		if _, ok := c.Args["check_cmd"]; ok && res != nil {
			x.checkCmd(ctx, c, res)
		}
	}()
	// A state function that does not exist fails before onlyif and
	// unless run, as Salt's State.call checks verify_data first (the
	// docker formula's docker_container.stopped with an onlyif, where the
	// docker module is not available).
	name := c.State + "." + fun
	f, ok := x.Funcs.Lookup(name)
	if !ok {
		return failed(c, fmt.Sprintf("State '%s' was not found in SLS '%s'\nReason: '%s' is not available.\n", name, c.SLS, name))
	}
	if skip := x.runChecks(ctx, c); skip != nil {
		return skip
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
	rctx := With(ctx, &Running{Test: test, ID: c.ID, SLS: c.SLS, Saltenv: c.Env, Low: low, ArgOrder: c.ArgOrder,
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
	return resultMap(c, out)
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
	m["result"] = Value(r.Result)
	if len(r.Warnings) > 0 {
		w := make([]any, len(r.Warnings))
		for i, s := range r.Warnings {
			w[i] = s
		}
		m["warnings"] = w
	}
	return m
}

// runChecks is Salt's _run_check: onlyif, unless and creates. It returns
// the result of a state they skip (result True, their comments one a
// line), or nil to run it.
func (x *run) runChecks(ctx context.Context, c *Chunk) map[string]any {
	onlyif, hasOnlyif := c.Args["onlyif"]
	unless, hasUnless := c.Args["unless"]
	creates, hasCreates := c.Args["creates"]
	if !hasOnlyif && !hasUnless && !hasCreates {
		return nil
	}
	ret := check{}
	var comments []string
	if hasOnlyif {
		r := x.onlyif(ctx, c, onlyif)
		ret.result, ret.skipWatch = r.result, r.skipWatch
		comments = append(comments, r.comment)
	}
	if hasUnless {
		r := x.unless(ctx, c, unless)
		ret.result = r.result || ret.result
		ret.skipWatch = r.skipWatch || ret.skipWatch
		comments = append(comments, r.comment)
	}
	if hasCreates {
		r := createsCheck(creates)
		ret.result = r.result || ret.result
		ret.skipWatch = r.skipWatch || ret.skipWatch
		comments = append(comments, r.comment)
	}
	if !ret.result {
		return nil
	}
	res := map[string]any{"name": c.Name, "changes": map[string]any{}, "result": true, "comment": strings.Join(comments, "\n")}
	if ret.skipWatch {
		res["skip_watch"] = true
	}
	return res
}

// check is what one of Salt's run checks says: result true skips the
// state.
type check struct {
	result, skipWatch bool
	comment           string
}

// cmdOpts are the state's arguments Salt passes to an onlyif or unless
// command.
func cmdOpts(c *Chunk) map[string]any {
	kw := map[string]any{"python_shell": true, "ignore_retcode": true}
	for _, k := range []string{"cwd", "root", "runas", "env", "prepend_path", "umask", "timeout", "success_retcodes", "shell"} {
		if v, ok := c.Args[k]; ok {
			kw[k] = v
		}
	}
	return kw
}

// retcode runs a command of onlyif or unless: its exit code, or failed
// when it could not run.
func (x *run) retcode(ctx context.Context, c *Chunk, cmd string, failed int) int {
	if x.Exec == nil {
		return failed
	}
	out, err := x.Exec(ctx, "cmd.retcode", []any{cmd}, cmdOpts(c))
	if err != nil {
		return failed
	}
	n, ok := py.Number(out)
	if !ok {
		return failed
	}
	return int(n)
}

// function runs the function form of onlyif or unless, `{fun:
// module.function, args: [...], get_return: key, kwarg: value}`: its
// return (the key get_return names in it) and the retcode it set.
func (x *run) function(ctx context.Context, entry map[string]any) (any, int, error) {
	if x.Exec == nil {
		return nil, 0, errors.New("no execution functions to evaluate it with")
	}
	fun := scalarStr(entry["fun"])
	args := asList(entry["args"])
	kw := map[string]any{}
	for k, v := range entry {
		if k != "fun" && k != "args" && k != "get_return" {
			kw[k] = v
		}
	}
	rctx, rc := modules.WithRetcode(ctx)
	out, err := x.Exec(rctx, fun, args, kw)
	if err != nil {
		return nil, 0, err
	}
	if key, ok := entry["get_return"]; ok && key != nil {
		out = traverse(out, scalarStr(key))
	}
	return out, int(rc.Load()), nil
}

// traverse is Salt's traverse_dict_and_list: key:subkey:index.
func traverse(v any, path string) any {
	for _, k := range strings.Split(path, ":") {
		switch cur := v.(type) {
		case map[string]any:
			v = cur[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(cur) {
				return nil
			}
			v = cur[i]
		default:
			return nil
		}
	}
	return v
}

// onlyif is Salt's _run_check_onlyif: every entry must hold (a command
// exiting 0, a function returning true with no retcode) for the state to
// run; an entry of another kind, or without fun, does not stop it.
func (x *run) onlyif(ctx context.Context, c *Chunk, v any) check {
	ret := check{}
	// checkCmd is Salt's _check_cmd: false stops.
	checkCmd := func(code int) bool {
		if code != 0 && !ret.result {
			ret = check{result: true, skipWatch: true, comment: "onlyif condition is false"}
			return false
		} else if code == 0 {
			ret.comment, ret.result = "onlyif condition is true", false
		}
		return true
	}
	for _, entry := range asList(v) {
		switch entry := entry.(type) {
		case string:
			if !checkCmd(x.retcode(ctx, c, entry, 100)) {
				return ret
			}
		case map[string]any:
			if _, ok := entry["fun"]; !ok {
				ret.comment = "no `fun` argument in onlyif: " + py.ReprValue(entry)
				return ret
			}
			out, code, err := x.function(ctx, entry)
			switch {
			case err != nil:
				return check{comment: "onlyif: " + err.Error(), result: false}
			case code != 0:
				if !checkCmd(code) {
					return ret
				}
			case !resultTruth(out):
				return check{result: true, skipWatch: true, comment: "onlyif condition is false"}
			default:
				ret.comment, ret.result = "onlyif condition is true", false
			}
		default:
			return check{comment: "onlyif execution failed, bad type passed"}
		}
	}
	return ret
}

// unless is Salt's _run_check_unless: the state is skipped when every
// entry holds (a command exiting 0, a function returning true with no
// retcode); an entry without fun runs it.
func (x *run) unless(ctx context.Context, c *Chunk, v any) check {
	ret := check{}
	// checkCmd is Salt's _check_cmd: true says the state runs.
	checkCmd := func(code int) bool {
		if code == 0 {
			ret = check{result: true, skipWatch: true, comment: "unless condition is true"}
			return false
		}
		ret = check{comment: "unless condition is false"}
		return true
	}
	for _, entry := range asList(v) {
		switch entry := entry.(type) {
		case string:
			if checkCmd(x.retcode(ctx, c, entry, 0)) {
				return ret
			}
		case map[string]any:
			if _, ok := entry["fun"]; !ok {
				ret.comment = "no `fun` argument in unless: " + py.ReprValue(entry)
				return ret
			}
			out, code, err := x.function(ctx, entry)
			switch {
			case err != nil:
				return check{comment: "unless: " + err.Error()}
			case code != 0:
				if checkCmd(code) {
					return ret
				}
			case resultTruth(out):
				ret = check{result: true, skipWatch: true, comment: "unless condition is true"}
			default:
				return check{comment: "unless condition is false"}
			}
		default:
			ret = check{comment: "unless condition is false, bad type passed"}
		}
	}
	return ret
}

// createsCheck is Salt's _run_check_creates.
func createsCheck(v any) check {
	switch v := v.(type) {
	case string:
		if fileExists(v) {
			return check{result: true, skipWatch: true, comment: v + " exists"}
		}
	case []any:
		all := true
		for _, p := range v {
			all = all && fileExists(scalarStr(p))
		}
		if all {
			return check{result: true, skipWatch: true, comment: "All files in creates exist"}
		}
	}
	return check{comment: "Creates files not found"}
}

// checkCmd is Salt's _run_check_cmd, after the state ran: each command
// must exit 0, or the state failed; the result and comment are replaced.
func (x *run) checkCmd(ctx context.Context, c *Chunk, res map[string]any) {
	result, comment := false, ""
	for _, cmd := range asList(c.Args["check_cmd"]) {
		code := x.retcode(ctx, c, scalarStr(cmd), 1)
		if code == 0 && !result {
			result, comment = true, "check_cmd determined the state succeeded"
		} else if code != 0 {
			result, comment = false, "check_cmd determined the state failed"
			break
		}
	}
	res["result"] = result
	if comment != "" {
		res["comment"] = comment
	}
}

// listeners is Salt's call_listen, after the run: for each listen (and
// listen_in) whose listened states changed, the listening state's
// mod_watch runs as a chunk of its own, id listener_<id> (scripts and the
// highstate outputter's readers parse the key), without its requisites;
// a listen naming, as {module: id}, a state that does not exist is a
// failed result of its own, Listen_Error_|-listen_<id>_|-listen_<module>…
// (a bare id naming nothing is ignored, as in Salt).
func (x *run) listeners(ctx context.Context) {
	type listener struct {
		state, id string // the listening states: module and an id, name or module
		to        []any  // the states listened to
	}
	var all []listener
	for _, c := range x.chunks {
		if v, ok := c.Args["listen"]; ok {
			all = append(all, listener{c.State, c.ID, pyIter(v)})
		}
		if v, ok := c.Args["listen_in"]; ok {
			for _, l := range asList(v) {
				m, _ := l.(map[string]any)
				for _, k := range sortedKeys(m) {
					all = append(all, listener{k, scalarStr(m[k]), []any{map[string]any{c.State: c.ID}}})
				}
			}
		}
	}
	if len(all) == 0 {
		return
	}
	// in is Python's `v in (state, id, name)`.
	named := func(state, v string) []*Chunk {
		var out []*Chunk
		for _, c := range x.chunks {
			if c.State == state && (v == c.State || v == c.ID || v == c.Name) {
				out = append(out, c)
			}
		}
		return out
	}
	var errs []string
	errRes := map[string]map[string]any{}
	fail := func(state, v string) {
		tag := Tag("Listen_Error", "listen_"+v, "listen_"+state, "Listen_Error")
		if _, ok := errRes[tag]; !ok {
			errs = append(errs, tag)
		}
		errRes[tag] = map[string]any{"name": "listen_" + state + ":" + v, "result": false, "changes": map[string]any{},
			"comment": fmt.Sprintf("Referenced state %s: %s does not exist", state, v)}
	}
	var watchers []*Chunk
	seen := map[*Chunk]bool{}
	for _, l := range all {
		for _, to := range l.to {
			m, ok := to.(map[string]any)
			if !ok {
				s := scalarStr(to)
				for _, c := range x.chunks {
					if c.ID == s || c.Name == s {
						m = map[string]any{c.State: c.ID}
					}
				}
				if m == nil {
					continue
				}
			}
			for _, k := range sortedKeys(m) {
				v := scalarStr(m[k])
				targets := named(k, v)
				if len(targets) == 0 {
					fail(k, v)
					continue
				}
				for _, t := range targets {
					res, ok := x.result(t)
					if !ok || !hasChanges(res) {
						continue
					}
					ws := named(l.state, l.id)
					if len(ws) == 0 {
						fail(l.state, l.id)
						continue
					}
					for _, w := range ws {
						if !seen[w] {
							seen[w] = true
							watchers = append(watchers, w)
						}
					}
				}
			}
		}
	}
	for _, c := range watchers {
		start := time.Now()
		res := x.callOnce(ctx, c, "mod_watch", nil, x.Test)
		id := "listener_" + c.ID
		res["__id__"], res["__sls__"] = id, c.SLS
		res["start_time"], res["duration"] = startTime(start), duration(time.Since(start))
		x.addExtra(Tag(c.State, id, c.Name, "mod_watch"), res)
	}
	for _, tag := range errs {
		x.addExtra(tag, errRes[tag])
	}
}

// addExtra records a result that is no chunk's (a listener's), with the
// next run number.
func (x *run) addExtra(tag string, res map[string]any) {
	x.mu.Lock()
	res["__run_num__"] = x.runNum
	x.runNum++
	if x.extra == nil {
		x.extra = map[string]map[string]any{}
	}
	x.extra[tag] = res
	x.mu.Unlock()
	if x.Progress != nil {
		x.Progress(tag, res, len(x.chunks))
	}
}

// startTime is Salt's start_time: the local time of day with
// microseconds.
func startTime(t time.Time) string { return t.Format("15:04:05.000000") }

// duration is Salt's duration: milliseconds with three decimals.
func duration(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
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

// resultTruth is Python's truth of a YAML value as the state engine reads
// its flags (failhard, parallel) and the returns of onlyif and unless
// functions. It differs from py.Truth in two ways: a mapping with a result
// (a state-like return) is as true as its result, and a number of any
// width YAML decodes counts (SLS data holds a non-negative int as uint64,
// which py.Truth, made for JSON's int64 and float64, takes as true even
// when 0).
func resultTruth(v any) bool {
	if m, ok := v.(map[string]any); ok {
		if r, ok := m["result"]; ok {
			return resultTruth(r)
		}
	}
	if n, ok := py.Number(v); ok {
		return n != 0
	}
	return py.Truth(v)
}
