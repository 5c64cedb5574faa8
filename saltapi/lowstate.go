package saltapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/jobs"
)

// Backend is what salt-api needs of the master: its publisher (the
// reactor's local.* path), its targeting (for the ACLs' per-target
// entries) and its runner and wheel functions.
type Backend interface {
	Targets
	RunJob(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration) (jobs.Outcome, error)
	PublishJob(ctx context.Context, t jobs.Targeted, o bus.Origin) (jobs.Published, error)
	// Call runs a runner (wheel false) or wheel function as a job of its
	// own (salt/run/<jid>/… or salt/wheel/<jid>/…), refusing an unknown
	// function or wrong arguments before any job starts; async returns
	// once the job is announced.
	Call(ctx context.Context, wheel, async bool, fun string, args []any, kwargs map[string]any, user string) (jobs.Result, error)
}

// The refusals of a lowstate chunk, as salt-api words them; the HTTP
// status follows from which (statusOf).
var (
	// errAuth: no or bad credentials, or an ACL refusal (Salt's
	// EauthAuthenticationError and AuthorizationError: 401).
	errAuth = errors.New("authentication")
	// errInvocation: a chunk salt-api refuses to run (Salt's
	// SaltInvocationError: 400).
	errInvocation = errors.New("invocation")
)

// refusal is a lowstate refusal in salt-api's own words (which begin
// with a capital, as Salt's exceptions' messages do), of kind errAuth or
// errInvocation.
type refusal struct {
	kind error
	msg  string
}

func (r refusal) Error() string { return r.msg }
func (r refusal) Unwrap() error { return r.kind }

// refuse is a refusal of kind, its message formatted.
func refuse(kind error, format string, args ...any) error {
	return refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// defaultTimeout is LocalClient.cmd's wait for returns (Salt's timeout
// option, 5 s).
const defaultTimeout = 5 * time.Second

// lowstate runs lowstate chunks for the identities tokens give.
type lowstate struct {
	backend Backend
	enabled []string
	source  string
	// authList is the permission list a login's calls are checked
	// against.
	authList func(*Token) []any
}

// run runs one chunk for the login tok, as NetapiClient.run does.
func (l *lowstate) run(ctx context.Context, tok *Token, chunk map[string]any) (any, error) {
	client, _ := chunk["client"].(string)
	if !slices.Contains(Clients, client) {
		return nil, refuse(errInvocation, "Invalid client specified: '%v'", chunk["client"])
	}
	if !slices.Contains(l.enabled, client) {
		return nil, refuse(errInvocation, "Client disabled: '%s'. Add to 'netapi_enable_clients' master config option to enable.", client)
	}
	fun, _ := chunk["fun"].(string)
	if fun == "" {
		return nil, refuse(errInvocation, "Missing required argument: fun")
	}
	args := asList(chunk["arg"])
	kwargs, _ := chunk["kwarg"].(map[string]any)
	o := bus.Origin{Source: l.source}
	switch client {
	case "local", "local_async", "local_batch":
		tgt := chunk["tgt"]
		if tgt == nil {
			return nil, refuse(errInvocation, "Missing required argument: tgt")
		}
		tgtType, _ := chunk["tgt_type"].(string)
		if tgtType == "" {
			tgtType = "glob"
		}
		// auth_check sees the arguments as published: the keyword
		// arguments packed after the positional ones.
		packed := jobs.PackArgs(args, kwargs)
		ok, err := CheckLocal(ctx, l.authList(tok), l.backend, fun, packed, tgt, tgtType)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, refuse(errAuth, "Authorization error occurred.")
		}
		t := jobs.Targeted{Fun: fun, Arg: packed, Tgt: tgt, TgtType: tgtType, User: tok.Name}
		if ret, ok := chunk["ret"].(string); ok {
			t.Ret = ret
		}
		if client == "local_async" {
			pub, err := l.backend.PublishJob(ctx, t, o)
			if err != nil {
				return map[string]any{}, nil //nolint:nilerr // run_job's answer when no minion matched
			}
			return map[string]any{"jid": pub.JID, "minions": nonNil(pub.Minions)}, nil
		}
		wait := defaultTimeout
		if s, ok := number(chunk["timeout"]); ok && s > 0 {
			wait = time.Duration(s * float64(time.Second))
		}
		full, _ := chunk["full_return"].(bool)
		if client == "local_batch" {
			return l.batches(ctx, t, o, wait, full, chunk["batch"])
		}
		out, err := l.backend.RunJob(ctx, t, o, wait)
		if err != nil {
			return map[string]any{}, nil //nolint:nilerr // cmd's answer when no minion matched
		}
		return returns(out, full), nil
	case "runner", "runner_async", "wheel", "wheel_async":
		wheel := client == "wheel" || client == "wheel_async"
		async := client == "runner_async" || client == "wheel_async"
		// Runner and wheel functions take keyword arguments: the chunk's
		// other keys, beside arg and kwarg (format_call).
		kw := map[string]any{}
		// KEY=VALUE strings in arg are keyword arguments, as Salt's
		// clients parse them (parse_input) before the ACL sees them.
		var pos []any
		for _, a := range args {
			if str, ok := a.(string); ok {
				if k, v, ok := strings.Cut(str, "="); ok && jobs.ArgKey(k) {
					kw[k] = jobs.ArgValue(v)
					continue
				}
			}
			pos = append(pos, a)
		}
		args = pos
		maps.Copy(kw, kwargs)
		for k, v := range chunk {
			switch k {
			case "client", "fun", "arg", "kwarg", "token", "eauth", "username", "password", "timeout", "full_return", "print_event":
			default:
				kw[k] = v
			}
		}
		check := CheckRunner
		if wheel {
			check = CheckWheel
		}
		if !check(l.authList(tok), fun, map[string]any{"arg": nonNil(args), "kwarg": kw}) {
			return nil, refuse(errAuth, "Authorization error occurred.")
		}
		kind := "run"
		if wheel {
			kind = "wheel"
		}
		res, err := l.backend.Call(ctx, wheel, async, fun, args, kw, tok.Name)
		if errors.Is(err, jobs.ErrNotAnnounced) {
			return nil, err
		}
		if err != nil {
			// Salt's clients catch a function that is not there or
			// arguments that do not bind inside the job: the call
			// answers, with the error as its return.
			if !wheel {
				return err.Error(), nil
			}
			return map[string]any{"tag": "salt/wheel/", "data": map[string]any{"fun": "wheel." + fun, "user": tok.Name,
				"return": err.Error(), "success": false}}, nil
		}
		tag := "salt/" + kind + "/" + res.JID
		if async {
			return map[string]any{"tag": tag, "jid": res.JID}, nil
		}
		if !wheel {
			if full, _ := chunk["full_return"].(bool); full {
				return map[string]any{"jid": res.JID, "return": res.Return, "success": res.Success}, nil
			}
			return res.Return, nil
		}
		return map[string]any{"tag": tag, "data": map[string]any{"fun": "wheel." + fun, "jid": res.JID, "tag": tag,
			"user": tok.Name, "return": res.Return, "success": res.Success}}, nil
	}
	return nil, refuse(errInvocation, "Invalid client specified: '%s'", client)
}

// returns is LocalClient.cmd's answer: each minion's return (full_return:
// with its retcode and jid).
func returns(out jobs.Outcome, full bool) map[string]any {
	ret := map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(out.Returns)) {
		r := out.Returns[id]
		if full {
			ret[id] = map[string]any{"ret": r.Return, "retcode": r.Retcode, "jid": out.JID}
		} else {
			ret[id] = r.Return
		}
	}
	return ret
}

// batches is local_batch (LocalClient.cmd_batch): the target's minions
// run the job batch at a time (N, or N% of them; default 10%), each batch
// a job of its own to the list of its minions, one after another (Salt
// keeps a rolling window; brine exec --batch does too). The answer is a
// mapping per minion's return, in the order the batches returned.
func (l *lowstate) batches(ctx context.Context, t jobs.Targeted, o bus.Origin, wait time.Duration, full bool, spec any) (any, error) {
	ids, err := l.backend.Minions(ctx, t.Tgt, t.TgtType)
	if err != nil {
		return nil, refuse(errInvocation, "%v", err)
	}
	size := "10%"
	if spec != nil {
		size = fmt.Sprint(spec)
	}
	n, err := jobs.BatchSize(size, len(ids))
	if err != nil {
		return nil, refuse(errInvocation, "%v", err)
	}
	out := flat{}
	for start := 0; start < len(ids); start += n {
		part := ids[start:min(start+n, len(ids))]
		bt := t
		bt.JID, bt.Tgt, bt.TgtType = "", anyList(part), "list"
		res, err := l.backend.RunJob(ctx, bt, o, wait)
		if err != nil {
			continue
		}
		ret := returns(res, full)
		for _, id := range slices.Sorted(maps.Keys(ret)) {
			out = append(out, map[string]any{id: ret[id]})
		}
	}
	return out, nil
}

// flat is a chunk's answer that salt-api spreads into the reply's return
// list, item by item, as exec_lowstate does with a client's iterator
// (cmd_batch's).
type flat []any

// anyList is ids as a target list.
func anyList(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// asList is salt-api's arg: a list, or one value made a list
// (exec_lowstate).
func asList(v any) []any {
	switch a := v.(type) {
	case nil:
		return nil
	case []any:
		return a
	}
	return []any{v}
}

// number is a JSON or YAML number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
