package saltmaster

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/state"
	"github.com/brinehq/brine/wire"
)

// The AESFuncs a salt-minion calls, each in terms of the agent protocol.
// Salt's names and answers: salt/master.py AESFuncs, salt/daemons/
// masterapi.py, salt/fileserver.

// ret is _return: a job's return (or, for a find_job this transport
// published, the answer to the master's question).
func (t *Transport) ret(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	jid, _ := load["jid"].(string)
	if jid == "" {
		return nil, errors.New("_return without a jid")
	}
	t.mu.Lock()
	f, isFind := t.finds[jid]
	t.mu.Unlock()
	if isFind && f.req == "" {
		return nil, nil
	}
	if isFind {
		// saltutil.find_job returns the job's data while it runs, {}
		// once it has ended.
		r, _ := load["return"].(map[string]any)
		_, err := t.call(ctx, m, wire.MethodJobState, wire.JobState{JID: f.jid, Req: f.req, Running: len(r) > 0})
		return nil, err
	}
	r := wire.Return{ID: uuid.NewString(), JID: jid, Return: load["return"], Success: true, Time: time.Now().UTC()}
	r.Fun, _ = load["fun"].(string)
	r.FunArgs, _ = load["fun_args"].([]any)
	r.Out, _ = load["out"].(string)
	if rc, ok := load["retcode"].(int64); ok {
		r.Retcode = int(rc)
	}
	if s, ok := load["success"].(bool); ok {
		r.Success = s
	}
	_, err := t.call(ctx, m, wire.MethodReturn, r)
	return nil, err
}

// event is _minion_event: one event (tag and data; Salt fires the whole
// load as the event's data) or a list of them (beacons, and the pretag
// copies Salt fires beside them). The tok and nonce go no further.
func (t *Transport) event(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	fire := func(tag string, data map[string]any) error {
		_, err := t.call(ctx, m, wire.MethodEvent, wire.Event{ID: uuid.NewString(), Tag: tag, Load: data, Time: time.Now().UTC()})
		return err
	}
	events, ok := load["events"].([]any)
	if !ok {
		tag, _ := load["tag"].(string)
		if tag == "" {
			return false, nil
		}
		data := maps.Clone(load)
		for _, k := range []string{"tok", "sig", "cmd", "id", "tag"} {
			delete(data, k)
		}
		return true, fire(tag, data)
	}
	pretag, _ := load["pretag"].(string)
	var errs []error
	for _, e := range events {
		ev, _ := e.(map[string]any)
		tag, _ := ev["tag"].(string)
		if tag == "" {
			continue
		}
		data, ok := ev["data"].(map[string]any)
		if !ok {
			data = maps.Clone(ev)
			delete(data, "tag")
		}
		errs = append(errs, fire(tag, data))
		if pretag != "" {
			errs = append(errs, fire(strings.TrimSuffix(pretag, "/")+"/"+tag, maps.Clone(data)))
		}
	}
	return true, errors.Join(errs...)
}

// pillar is _pillar: the pillar compiled for the minion's id, answered
// encrypted to its key (handle), so that no other minion reads it. The
// grains it carries update the minion's targeting data once its address
// is proven.
func (t *Transport) pillar(ctx context.Context, m *minion, load map[string]any, host string) (any, error) {
	grains, ok := load["grains"].(map[string]any)
	if !ok {
		return false, nil
	}
	if m.provenFrom(host) {
		t.grains(ctx, m, grains)
	} else {
		m.holdGrains(grains, host)
	}
	req := wire.PillarRequest{Grains: grains}
	req.Saltenv, _ = load["saltenv"].(string)
	req.Pillarenv, _ = load["pillarenv"].(string)
	out, err := t.call(ctx, m, wire.MethodPillar, req)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var pillar map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&pillar); err != nil {
		return nil, fmt.Errorf("pillar: %w", err)
	}
	order, err := keyorder.ReadJSON(raw)
	if err != nil {
		return nil, err
	}
	// pillar= on the minion's command line, merged last as Salt's
	// compile_pillar merges it.
	if o, ok := load["pillar_override"].(map[string]any); ok && len(o) > 0 {
		pillar, _ = state.Merge(pillar, o).(map[string]any)
	}
	return ordered(pillar, order), nil
}

// grains records a minion's grains for targeting.
func (t *Transport) grains(ctx context.Context, m *minion, grains map[string]any) {
	if _, err := t.call(ctx, m, wire.MethodMine, wire.Mine{Grains: grains}); err != nil {
		t.log.Warn("salt-minion grains not recorded", "id", m.id, "err", err)
	}
}

// mine is _mine: the minion's mine functions' data.
func (t *Transport) mine(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	data, ok := load["data"].(map[string]any)
	if !ok {
		return false, nil
	}
	_, err := t.call(ctx, m, wire.MethodMine, wire.Mine{Data: data})
	return err == nil, err
}

// mineDelete is _mine_delete: one function's data removed.
func (t *Transport) mineDelete(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	fun, _ := load["fun"].(string)
	if fun == "" {
		return false, nil
	}
	_, err := t.call(ctx, m, wire.MethodMine, wire.Mine{Delete: []string{fun}})
	return err == nil, err
}

// mineFlush is _mine_flush: all of the minion's mine data removed. The
// master keeps the functions' names in the minion's record; mine.get on
// all of them ("*" on this minion) lists them.
func (t *Transport) mineFlush(ctx context.Context, m *minion, _ map[string]any, _ string) (any, error) {
	out, err := t.call(ctx, m, wire.MethodMineGet, wire.MineGet{Tgt: m.id, Fun: "*", TgtType: "list"})
	if err != nil {
		return false, err
	}
	var got map[string]map[string]any
	_ = convert(out, &got)
	funs := slices.Sorted(maps.Keys(got[m.id]))
	if len(funs) == 0 {
		return true, nil
	}
	_, err = t.call(ctx, m, wire.MethodMine, wire.Mine{Delete: funs})
	return err == nil, err
}

// mineGet is _mine_get: mine.get called on a minion.
func (t *Transport) mineGet(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	q := wire.MineGet{}
	switch tgt := load["tgt"].(type) {
	case string:
		q.Tgt = tgt
	case []any:
		ids := make([]string, 0, len(tgt))
		for _, x := range tgt {
			if s, ok := x.(string); ok {
				ids = append(ids, s)
			}
		}
		q.Tgt = strings.Join(ids, ",")
	}
	q.Fun, _ = load["fun"].(string)
	q.TgtType, _ = load["tgt_type"].(string)
	if q.TgtType == "" {
		q.TgtType, _ = load["expr_form"].(string)
	}
	out, err := t.call(ctx, m, wire.MethodMineGet, q)
	if err != nil {
		return nil, err
	}
	return toSalt(out)
}

// fileRecv is _file_recv: one chunk of cp.push.
func (t *Transport) fileRecv(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	p := wire.FilePush{}
	switch v := load["path"].(type) {
	case []any:
		for _, x := range v {
			s, _ := x.(string)
			p.Path = append(p.Path, s)
		}
	case string:
		p.Path = strings.Split(v, "/")
	}
	p.Loc, _ = load["loc"].(int64)
	p.Size, _ = load["size"].(int64)
	switch d := load["data"].(type) {
	case []byte:
		p.Data = d
	case string:
		p.Data = []byte(d)
	}
	if _, err := t.call(ctx, m, wire.MethodFilePush, p); err != nil {
		return false, err
	}
	return true, nil
}

// saltenv is a file server load's saltenv ("base" when absent, a number
// read as its text, as Salt's str()).
func saltenv(load map[string]any) string {
	switch v := load["saltenv"].(type) {
	case string:
		return v
	case nil:
		return "base"
	default:
		return fmt.Sprint(v)
	}
}

// filePath is a file server load's path: salt:// and a saltenv query
// taken off as Salt's find_file takes them.
func filePath(load map[string]any) (p, env string) {
	p, _ = load["path"].(string)
	env = saltenv(load)
	p = strings.TrimPrefix(p, "salt://")
	if before, q, ok := strings.Cut(p, "?"); ok {
		p = before
		for _, kv := range strings.Split(q, "&") {
			if v, ok := strings.CutPrefix(kv, "saltenv="); ok {
				env = v
			}
		}
	}
	return p, env
}

// files lists a saltenv's files under prefix.
func (t *Transport) files(ctx context.Context, m *minion, load map[string]any) ([]string, error) {
	prefix, _ := load["prefix"].(string)
	out, err := t.call(ctx, m, wire.MethodFileList, wire.FileList{Saltenv: saltenv(load), Prefix: strings.Trim(prefix, "/")})
	if err != nil {
		return nil, err
	}
	var list []string
	return list, convert(out, &list)
}

// fileList is _file_list.
func (t *Transport) fileList(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	list, err := t.files(ctx, m, load)
	if err != nil {
		return []any{}, nil
	}
	return strs(list), nil
}

// dirList is _dir_list: the directories of the saltenv's files.
func (t *Transport) dirList(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	list, err := t.files(ctx, m, load)
	if err != nil {
		return []any{}, nil
	}
	prefix, _ := load["prefix"].(string)
	prefix = strings.Trim(prefix, "/")
	dirs := map[string]bool{}
	for _, f := range list {
		for d := path.Dir(f); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var out []string
	for d := range dirs {
		if strings.HasPrefix(d, prefix) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return strs(out), nil
}

// stat is a file's description, "" when the file is not there (the
// minion then reports it missing in Salt's words).
func (t *Transport) stat(ctx context.Context, m *minion, load map[string]any) (*wire.FileStat, error) {
	p, env := filePath(load)
	if p == "" {
		return nil, nil
	}
	out, err := t.call(ctx, m, wire.MethodFileStat, wire.FileRequest{Path: p, Saltenv: env})
	if err != nil {
		return nil, nil //nolint:nilerr // a file not served is "not found" to the minion, as in Salt
	}
	var st wire.FileStat
	if err := convert(out, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// hashOf is roots.file_hash's answer.
func hashOf(st *wire.FileStat) saltproto.Ordered {
	return saltproto.Ordered{{Key: "hash_type", Value: "sha256"}, {Key: "hsum", Value: st.Hash}}
}

// fileHash is _file_hash.
func (t *Transport) fileHash(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	st, err := t.stat(ctx, m, load)
	if err != nil || st == nil {
		return "", err
	}
	return hashOf(st), nil
}

// fileHashAndStat is _file_hash_and_stat: the hash and os.stat's tuple,
// of which the minion reads the mode (file.managed's mode: keep) and
// size.
func (t *Transport) fileHashAndStat(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	st, err := t.stat(ctx, m, load)
	if err != nil || st == nil {
		return []any{"", nil}, err
	}
	mode := int64(0o100000 | st.Mode)
	return []any{hashOf(st), []any{mode, int64(0), int64(0), int64(1), int64(0), int64(0), st.Size, int64(0), int64(0), int64(0)}}, nil
}

// fileFind is _file_find: where a file is, in the fileserver's "fnd"
// shape (the minion only tests that path is set).
func (t *Transport) fileFind(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	p, _ := filePath(load)
	if st, err := t.stat(ctx, m, load); err != nil || st == nil {
		return map[string]any{"path": "", "rel": ""}, err
	}
	return map[string]any{"path": p, "rel": p}, nil
}

// serveFile is _serve_file: one chunk from loc, gzipped when the minion
// asks (its gzip option holds the level).
func (t *Transport) serveFile(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	p, env := filePath(load)
	loc, ok := load["loc"].(int64)
	if p == "" || !ok || loc < 0 {
		return map[string]any{"data": "", "dest": ""}, nil
	}
	out, err := t.call(ctx, m, wire.MethodFileRead, wire.FileRequest{Path: p, Saltenv: env, Offset: loc})
	if err != nil {
		return map[string]any{"data": "", "dest": ""}, nil //nolint:nilerr // Salt's answer for a file it does not serve
	}
	var chunk wire.FileChunk
	if err := convert(out, &chunk); err != nil {
		return nil, err
	}
	data := chunk.Data
	if len(data) > t.cfg.FileBufferSize {
		data = data[:t.cfg.FileBufferSize]
	}
	ret := saltproto.Ordered{{Key: "data", Value: data}, {Key: "dest", Value: p}}
	if level, ok := load["gzip"].(int64); ok && level > 0 {
		var b bytes.Buffer
		w, err := gzip.NewWriterLevel(&b, int(min(level, 9)))
		if err != nil {
			return nil, err
		}
		w.Write(data)
		w.Close()
		ret = append(ret, saltproto.KV{Key: "gzip", Value: level})
		ret[0].Value = b.Bytes()
	}
	return ret, nil
}

// envs lists the master's saltenvs.
func (t *Transport) envs(ctx context.Context, m *minion) ([]string, error) {
	out, err := t.call(ctx, m, wire.MethodFileEnvs, struct{}{})
	if err != nil {
		return nil, err
	}
	var envs []string
	return envs, convert(out, &envs)
}

// fileEnvs is _file_envs.
func (t *Transport) fileEnvs(ctx context.Context, m *minion, _ map[string]any, _ string) (any, error) {
	envs, err := t.envs(ctx, m)
	if err != nil {
		return []any{}, nil
	}
	return strs(envs), nil
}

// masterOpts is _master_opts: the options a minion's highstate reads
// from its master (masterapi._master_opts).
func (t *Transport) masterOpts(ctx context.Context, m *minion, load map[string]any, _ string) (any, error) {
	envs, _ := t.envs(ctx, m)
	roots := map[string]any{}
	for _, e := range envs {
		roots[e] = []any{}
	}
	o := t.cfg.MasterOpts
	out := map[string]any{"file_roots": roots}
	keys := []string{"top_file_merging_strategy", "env_order", "default_top"}
	if env, _ := load["env_only"].(bool); !env {
		keys = append(keys, "renderer", "failhard", "state_top", "state_top_saltenv", "nodegroups", "state_auto_order",
			"state_events", "state_aggregate", "jinja_env", "jinja_sls_env", "jinja_lstrip_blocks", "jinja_trim_blocks")
	}
	for _, k := range keys {
		out[k] = o[k]
	}
	return out, nil
}

// strs is a string list as the codec packs lists.
func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// toSalt is an agent method's answer as Salt's codec packs it: mappings
// in the order the JSON has them, integers as integers.
func toSalt(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	order, err := keyorder.ReadJSON(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return ordered(out, order), nil
}

// ordered makes v's mappings Ordered in o's order and its JSON numbers
// integers or floats.
func ordered(v any, o *keyorder.Order) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(saltproto.Ordered, 0, len(x))
		for _, k := range o.KeysOf(x) {
			out = append(out, saltproto.KV{Key: k, Value: ordered(x[k], o.At(k))})
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = ordered(item, o.Item(i))
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
