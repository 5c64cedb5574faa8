package state

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/internal/py"
)

// This file is Salt's State.call_chunks, call_chunk and check_requisite
// (salt/state.py, 3006), step for step: which state runs when, what a
// requisite that failed, did not change or was not found makes of the
// states that need it, and the run numbers, depend on the order in which
// Salt visits the states and on its bookkeeping (the states visited since
// the last top-level one, prereq's test-mode results kept apart), so that
// order and that bookkeeping are kept, quirks included: a prereq whose
// target could not run fails, a requisite visited but not run is
// "Recursive requisite found", a state whose requisite is not yet known is
// tried again up to twenty times.

// Run runs chunks (ordered, as Chunks returns them) and returns Salt's
// state return: each chunk's result under its tag.
func (r *Runner) Run(ctx context.Context, chunks []*Chunk) map[string]any {
	x := &run{Runner: r, chunks: chunks, index: newChunkIndex(chunks), results: map[*Chunk]map[string]any{},
		pre: map[*Chunk]map[string]any{}, prereq: map[*Chunk]bool{}, prerequired: map[*Chunk]bool{},
		active: map[*Chunk]bool{}, pending: map[*Chunk]chan struct{}{}, kinds: map[*Chunk]*reqKindsOf{}}
	for _, c := range chunks {
		if res, ok := r.Done[c.Tag]; ok {
			x.results[c] = res
			if n, ok := py.Number(res["__run_num__"]); ok && int(n) >= x.runNum {
				x.runNum = int(n) + 1
			}
		}
	}
	for _, c := range chunks {
		if x.stopped() {
			break
		}
		if !x.has(c) {
			x.callChunk(ctx, c, 0)
			if x.failhard(c) {
				x.setStop()
			}
		}
		clear(x.active)
		x.overflow = false
	}
	x.waitAll()
	// Salt's call_high runs the listeners after call_chunks, failhard
	// or not.
	x.listeners(ctx)
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
	results map[*Chunk]map[string]any // Salt's running
	extra   map[string]map[string]any // listen's mod_watch results
	runNum  int
	stop    bool

	// pre holds the test-mode results of the states a prereq looked at
	// (Salt's self.pre); prereq marks a chunk to run so next (Salt's
	// __prereq__), prerequired one a prereq reached (__prerequired__).
	pre         map[*Chunk]map[string]any
	prereq      map[*Chunk]bool
	prerequired map[*Chunk]bool
	// active are the chunks visited since the last top-level one.
	active  map[*Chunk]bool
	pending map[*Chunk]chan struct{} // parallel chunks still running
	kinds   map[*Chunk]*reqKindsOf
	// depth is how deep callChunk is: prereqs naming each other recurse
	// without end in Salt (a RecursionError that fails the run); here the
	// states on the way fail, and overflow unwinds them.
	depth    int
	overflow bool
	// reserved are the run numbers of parallel chunks, taken as they
	// start.
	reserved map[*Chunk]int
}

// maxDepth bounds callChunk's recursion: deep enough for any chain of
// requisites written (Python stops Salt's at a thousand frames).
const maxDepth = 5000

func (x *run) stopped() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.stop
}

func (x *run) setStop() {
	x.mu.Lock()
	x.stop = true
	x.mu.Unlock()
}

// has says whether c has a result, or is running in parallel.
func (x *run) has(c *Chunk) bool {
	if x.pending[c] != nil {
		return true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.results[c]
	return ok
}

// result is c's result, once it has one (a parallel chunk's is waited
// for).
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

// set stores c's result (its run number already in it).
func (x *run) set(c *Chunk, res map[string]any) {
	x.mu.Lock()
	x.results[c] = res
	x.mu.Unlock()
	if x.Progress != nil {
		x.Progress(c.Tag, res, len(x.chunks))
	}
}

// nextRunNum is the next run number (Salt's __run_num__), or the one c
// took when it started in parallel.
func (x *run) nextRunNum(c ...*Chunk) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(c) == 1 {
		if n, ok := x.reserved[c[0]]; ok {
			delete(x.reserved, c[0])
			return n
		}
	}
	n := x.runNum
	x.runNum++
	return n
}

// failhard is Salt's check_failhard: c failed and it (or the run) is
// failhard; never in test mode.
func (x *run) failhard(c *Chunk) bool {
	if x.Test {
		return false
	}
	fh := x.Failhard
	if v, ok := c.Args["failhard"]; ok {
		fh = resultTruth(v)
	}
	if !fh || !x.has(c) || x.pending[c] != nil {
		// A parallel state still running has not failed yet (Salt
		// reads its placeholder result).
		return false
	}
	res, _ := x.result(c)
	return res["result"] == false
}

// reqKindsOf is a chunk's requisites by kind, as check_requisite reads
// them: watch (watch_any) is require (require_any) for a state without
// mod_watch.
type reqKindsOf struct {
	by      map[string][]req
	present bool // any requisite that check_requisite looks at
	// prerequired: some prereq names this chunk (Salt's low["prerequired"]).
	prerequired bool
}

// checkKinds are check_requisite's requisites, in its order.
var checkKinds = []string{"require", "require_any", "watch", "watch_any", "prereq", "onfail", "onfail_any",
	"onfail_all", "onchanges", "onchanges_any"}

// unmetKinds are those whose states call_chunk runs first, in its order.
var unmetKinds = []string{"require", "require_any", "watch", "watch_any", "prereq", "onfail", "onfail_any",
	"onchanges", "onchanges_any"}

func (x *run) kindsOf(c *Chunk) *reqKindsOf {
	if k := x.kinds[c]; k != nil {
		return k
	}
	k := &reqKindsOf{by: map[string][]req{}}
	_, modWatch := x.Funcs.Lookup(c.State + ".mod_watch")
	var watch, watchAny []req
	for _, r := range c.reqs {
		switch r.kind {
		case "watch":
			watch = append(watch, r)
			continue
		case "watch_any":
			watchAny = append(watchAny, r)
			continue
		case "prerequired":
			k.prerequired = true
		}
		k.by[r.kind] = append(k.by[r.kind], r)
	}
	if modWatch {
		k.by["watch"], k.by["watch_any"] = watch, watchAny
	} else {
		k.by["require"] = append(k.by["require"], watch...)
		k.by["require_any"] = append(k.by["require_any"], watchAny...)
	}
	for _, kind := range append(checkKinds, "prerequired") {
		if len(k.by[kind]) > 0 {
			k.present = true
		}
	}
	x.kinds[c] = k
	return k
}

// matching are the chunks r names, in run order (Salt's own included, as
// its fnmatch does not leave it out).
func (x *run) matching(r req) []*Chunk {
	var out []*Chunk
	for _, t := range x.index.candidates(x.chunks, r) {
		if r.matches(t) {
			out = append(out, t)
		}
	}
	return out
}

// callChunk is Salt's call_chunk: c's requisites first, then c.
func (x *run) callChunk(ctx context.Context, low *Chunk, depth int) {
	if x.depth >= maxDepth || x.overflow {
		// Unwound at once: no state on the way retries.
		x.overflow = true
		if !x.has(low) {
			res := failed(low, "Recursive requisite found")
			res["__sls__"], res["__id__"] = low.SLS, low.ID
			res["__run_num__"] = x.nextRunNum()
			x.set(low, res)
		}
		return
	}
	x.depth++
	defer func() { x.depth-- }()
	k := x.kindsOf(low)
	if !k.prerequired {
		x.active[low] = true
	}
	status, reqs := x.checkRequisite(low, !x.prereq[low])
	switch status {
	case "unmet":
		x.unmet(ctx, low, depth)
	case "met":
		if x.prereq[low] {
			x.pre[low] = x.call(ctx, low)
		} else {
			x.run(ctx, low, false)
		}
	case "fail":
		var res map[string]any
		if p, ok := x.pre[low]; ok {
			// The test-mode result of a prereq's target, whose prereq
			// failed: its changes were never made.
			res = p
			if hasChanges(res) {
				res["changes"] = map[string]any{}
			}
			res["__sls__"], res["__id__"], res["name"] = low.SLS, low.ID, low.Name
		} else {
			failed := map[string]bool{}
			for _, kind := range append(checkKinds, "prerequired") {
				for _, t := range reqs[kind] {
					r, ok := x.pre[t]
					if !ok {
						r, ok = x.result(t)
					}
					if ok && r["result"] == false {
						failed[t.SLS+"."+t.ID] = true
					}
				}
			}
			// Salt joins a set, in no order: sorted here.
			res = skipped(low, false, "One or more requisite failed: "+strings.Join(sortedKeys(failed), ", "))
			x.pre[low] = res
		}
		res["__run_num__"] = x.nextRunNum()
		x.set(low, res)
	case "change":
		if x.prereq[low] {
			x.pre[low] = x.call(ctx, low)
			break
		}
		x.run(ctx, low, true)
	case "pre":
		res := skipped(low, true, "No changes detected")
		res["__run_num__"] = x.nextRunNum()
		x.pre[low] = res
		x.set(low, res)
	case "onfail", "onchanges":
		comment := "State was not run because onfail req did not change"
		if status == "onchanges" {
			comment = "State was not run because none of the onchanges reqs changed"
		}
		res := skipped(low, true, comment)
		res["__state_ran__"] = false
		res["__run_num__"] = x.nextRunNum()
		x.set(low, res)
	}
}

// run runs low for real (in parallel when it says so), mod_watch after
// it when a watched state changed and it did not.
func (x *run) run(ctx context.Context, low *Chunk, watched bool) {
	do := func() map[string]any {
		res := x.call(ctx, low)
		if watched && !hasChanges(res) && res["skip_watch"] != true {
			if _, ok := x.Funcs.Lookup(low.State + ".mod_watch"); ok {
				res = x.invoke(ctx, low, "mod_watch", x.watchedResults(low), 1, false)
			}
		}
		return res
	}
	if resultTruth(low.Args["parallel"]) {
		// Salt numbers a parallel state when it starts it.
		x.mu.Lock()
		if x.reserved == nil {
			x.reserved = map[*Chunk]int{}
		}
		x.reserved[low] = x.runNum
		x.runNum++
		x.mu.Unlock()
		done := make(chan struct{})
		x.pending[low] = done
		go func() {
			defer close(done)
			x.set(low, do())
		}()
		return
	}
	x.set(low, do())
}

// unmet is call_chunk's branch for a state whose requisites have not all
// run: it runs them, then itself again.
func (x *run) unmet(ctx context.Context, low *Chunk, depth int) {
	k := x.kindsOf(low)
	kinds := unmetKinds
	if !x.prereq[low] {
		kinds = append(append([]string{}, unmetKinds...), "prerequired")
	}
	var reqs []*Chunk
	lost := map[string][]req{}
	for _, kind := range kinds {
		for _, r := range k.by[kind] {
			found := false
			for _, t := range x.matching(r) {
				switch kind {
				case "prereq":
					x.prereq[t] = true
				case "prerequired":
					x.prerequired[t] = true
				}
				reqs = append(reqs, t)
				found = true
			}
			if !found {
				lost[kind] = append(lost[kind], r)
			}
		}
	}
	if len(lost) > 0 {
		var b strings.Builder
		b.WriteString("The following requisites were not found:\n")
		for _, kind := range kinds {
			if len(lost[kind]) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat(" ", 19), kind)
			for _, r := range lost[kind] {
				fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat(" ", 23), r.state, r.target)
			}
		}
		res := failed(low, b.String())
		res["__sls__"], res["__id__"] = low.SLS, low.ID
		res["start_time"], res["duration"] = startTime(time.Now()), 0.0
		res["__run_num__"] = x.nextRunNum()
		if x.prereq[low] {
			x.pre[low] = res
		} else {
			x.set(low, res)
		}
		return
	}
	var last *Chunk
	for _, t := range reqs {
		last = t
		if x.has(t) {
			continue
		}
		if x.active[t] {
			if x.prerequired[t] {
				// A prereq's target requiring, in turn, what is being
				// run: low runs in test mode for it.
				if _, ok := x.pre[low]; !ok {
					x.prereq[low] = true
					x.pre[t] = x.call(ctx, low)
				}
				return
			}
			res := failed(low, "Recursive requisite found")
			res["__sls__"], res["__id__"] = low.SLS, low.ID
			res["__run_num__"] = x.nextRunNum()
			x.set(low, res)
			return
		}
		x.callChunk(ctx, t, 0)
		if x.failhard(t) {
			x.setStop()
			return
		}
	}
	if x.prereq[low] {
		status, _ := x.checkRequisite(low, false)
		res := x.call(ctx, low)
		if !hasChanges(res) && status == "change" {
			res["changes"] = map[string]any{"watch": "watch"}
			res["result"] = nil
		}
		x.pre[low] = res
	} else {
		depth++
		if depth >= 20 {
			res := failed(low, "Recursive requisite found")
			res["__sls__"], res["__id__"] = low.SLS, low.ID
			x.mu.Lock()
			res["__run_num__"] = x.runNum
			x.mu.Unlock()
			x.set(low, res)
		} else {
			x.callChunk(ctx, low, depth)
		}
	}
	if last != nil && x.failhard(last) {
		x.setStop()
	}
}

// checkRequisite is Salt's check_requisite: met, unmet (a requisite has
// not run yet), fail, change (a watched state changed), pre (no prereq
// target would change), onfail, onchanges; and the chunks of each kind.
func (x *run) checkRequisite(low *Chunk, pre bool) (string, map[string][]*Chunk) {
	k := x.kindsOf(low)
	if !k.present {
		return "met", nil
	}
	kinds := checkKinds
	if pre {
		kinds = append(append([]string{}, checkKinds...), "prerequired")
	}
	reqs := map[string][]*Chunk{}
	for _, kind := range kinds {
		for _, r := range k.by[kind] {
			ts := x.matching(r)
			if len(ts) == 0 {
				return "unmet", nil
			}
			reqs[kind] = append(reqs[kind], ts...)
		}
	}
	stats := map[string]bool{}
	for _, kind := range kinds {
		rs := map[string]bool{}
		for _, t := range reqs[kind] {
			var res map[string]any
			var ok bool
			if kind == "prereq" {
				res, ok = x.pre[t]
			} else {
				res, ok = x.result(t)
			}
			if !ok {
				rs["unmet"] = true
				continue
			}
			if strings.HasPrefix(kind, "onfail") {
				if res["result"] == true {
					rs["onfail"] = true
					continue
				}
			} else if res["result"] == false {
				rs["fail"] = true
				continue
			}
			if strings.HasPrefix(kind, "onchanges") {
				if hasChanges(res) {
					rs["onchangesmet"] = true
				} else {
					rs["onchanges"] = true
				}
				continue
			}
			if strings.HasPrefix(kind, "watch") && hasChanges(res) {
				rs["change"] = true
				continue
			}
			if kind == "prereq" {
				if res["result"] == nil {
					rs["premet"] = true
				} else {
					rs["pre"] = true
				}
				continue
			}
			if ran, ok := res["__state_ran__"].(bool); !ok || ran {
				rs["met"] = true
			}
		}
		if strings.HasSuffix(kind, "_any") || kind == "onfail" {
			if rs["met"] || rs["change"] {
				delete(rs, "fail")
			}
			if rs["onchangesmet"] {
				delete(rs, "onchanges")
				delete(rs, "fail")
			}
			if rs["onfail"] && rs["met"] {
				delete(rs, "onfail")
			}
		}
		if strings.HasSuffix(kind, "_all") && rs["onfail"] && rs["met"] {
			delete(rs, "met")
		}
		for s := range rs {
			stats[s] = true
		}
	}
	switch {
	case stats["unmet"]:
		return "unmet", reqs
	case stats["fail"]:
		return "fail", reqs
	case stats["pre"]:
		if stats["premet"] {
			return "met", reqs
		}
		return "pre", reqs
	case stats["onfail"] && !stats["onchangesmet"]:
		return "onfail", reqs
	case stats["onchanges"] && !stats["onchangesmet"]:
		return "onchanges", reqs
	case stats["change"]:
		return "change", reqs
	case stats["onfail"]:
		return "onfail", reqs
	}
	return "met", reqs
}

// skipped is the result of a chunk whose function did not run.
func skipped(c *Chunk, ok bool, comment string) map[string]any {
	return map[string]any{"__id__": c.ID, "__sls__": c.SLS, "name": c.Name, "changes": map[string]any{},
		"result": ok, "comment": comment, "start_time": startTime(time.Now()), "duration": 0.0}
}

// RunNumOrder returns ret's tags in run order.
func RunNumOrder(ret map[string]any) []string {
	tags := sortedKeys(ret)
	sort.SliceStable(tags, func(i, j int) bool {
		a, _ := py.Number(runNum(ret[tags[i]]))
		b, _ := py.Number(runNum(ret[tags[j]]))
		return a < b
	})
	return tags
}
