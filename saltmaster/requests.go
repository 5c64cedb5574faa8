package saltmaster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/brinehq/brine/bus/gateway/saltzmq"
	"github.com/brinehq/brine/saltproto"
	"github.com/brinehq/brine/wire"
)

// handle answers one message of a minion's REQ socket, as
// ReqServerChannel.handle_message does.
func (t *Transport) handle(ctx context.Context, remote string, payload []byte) ([]byte, error) {
	c := t.crypticle()
	req, err := saltproto.DecodeRequest(payload, c)
	if err != nil {
		// Undecryptable loads are what a minion holding a rotated-away
		// session key sends: Salt's "bad load", which its channel cannot
		// decrypt either, so it signs in again and retries.
		if errors.Is(err, saltproto.ErrAuthentication) {
			t.log.Debug("a salt-minion's request did not decrypt with the session key (rotated?)", "remote", remote)
		} else {
			t.log.Info("bad load from a salt-minion", "remote", remote, "err", err)
		}
		return saltproto.Dumps(saltError(err))
	}
	if req.IsAuth() {
		return t.auth(ctx, remote, req)
	}
	if req.Enc != "aes" {
		// ClearFuncs (publish, runner, wheel, tokens) are the operators'
		// and take no minion's word: brine's operators come through the
		// CLI and API. Salt answers an unknown clear command with {}.
		t.log.Warn("clear request from a salt-minion refused", "remote", remote, "cmd", req.Cmd())
		return saltproto.Dumps(map[string]any{})
	}
	// The load decrypted with the session key: its sender signed in.
	saltzmq.Authenticate(ctx)
	t.count.requests.Add(1)
	ret, private, err := t.aes(ctx, remote, req)
	if errors.Is(err, errNoSession) {
		t.log.Debug("salt-minion without a session asked to sign in again", "remote", remote, "id", req.ID())
		return saltproto.Dumps("bad load")
	}
	if err != nil {
		t.count.requestsRefused.Add(1)
		t.log.Warn("salt-minion request refused", "remote", remote, "cmd", req.Cmd(), "id", req.ID(), "err", err)
		ret = false
	}
	if private != nil {
		o, err := saltproto.EncryptPrivate(ret, "pillar", private.rsaPub, req.Nonce, req.Version > 1, t.cfg.Keys.Key)
		if err != nil {
			return nil, err
		}
		return saltproto.Dumps(o)
	}
	return req.Reply(c, ret)
}

// saltError is Salt's clear answer to a load it could not read.
func saltError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "bad load"); i >= 0 {
		return msg[i:]
	}
	if strings.Contains(msg, "must be a dict") {
		return "payload and load must be a dict"
	}
	return "bad load"
}

// auth answers a minion's _auth: the key store decides (through the
// master's hello, which also fires salt/auth), and an accepted minion gets
// the session key and a session the master knows it by.
func (t *Transport) auth(ctx context.Context, remote string, req *saltproto.Request) ([]byte, error) {
	var m *minion
	decide := func(a *saltproto.AuthLoad) (saltproto.KeyState, error) {
		if _, err := saltproto.ParsePublicKey(a.Pub); err != nil {
			return saltproto.KeyRejected, nil
		}
		m = t.sessionFor(a.ID, t.cfg.Normalize(a.Pub), remote)
		out, err := t.call(ctx, m, wire.MethodHello, wire.Hello{ID: a.ID, Version: "salt", AutosignGrains: a.AutosignGrains})
		if err != nil {
			if t.cfg.IsPending(err) {
				return saltproto.KeyFull, nil
			}
			if errors.Is(err, wire.ErrInvalidRequest) {
				return saltproto.KeyRejected, nil
			}
			return 0, err
		}
		var h wire.HelloReply
		if err := convert(out, &h); err != nil {
			return 0, err
		}
		switch h.State {
		case wire.StateAccepted:
			return saltproto.KeyAccepted, nil
		case wire.StatePending:
			return saltproto.KeyPending, nil
		case wire.StateDenied:
			return saltproto.KeyDenied, nil
		}
		return saltproto.KeyRejected, nil
	}
	res, err := t.master.Auth(req.Version, req.Load, t.crypticle().KeyString(), decide)
	if err != nil {
		return nil, err
	}
	if res.State == saltproto.KeyAccepted {
		t.count.signInsAccepted.Add(1)
	} else {
		t.count.signInsRefused.Add(1)
	}
	if m != nil {
		if res.State == saltproto.KeyAccepted {
			t.keep(m)
			t.log.Debug("salt-minion signed in", "id", m.id, "remote", remote)
		} else if t.accepted(m.id) != m {
			// Only accepted sessions are kept: a pending minion signs in
			// again every acceptance_wait_time.
			t.gone(m)
		}
	}
	return saltproto.Dumps(res.Reply)
}

// errNoSession answers a request for an id that has no session here (the
// master restarted, or the minion stopped listening): the reply does not
// decrypt, so the minion signs in again and retries.
var errNoSession = errors.New("no session")

// aes runs one AESFuncs command. It returns the answer and, for _pillar,
// the minion whose key the answer is encrypted to.
func (t *Transport) aes(ctx context.Context, remote string, req *saltproto.Request) (any, *minion, error) {
	load, cmd, host := req.Load, req.Cmd(), hostOf(remote)
	if strings.HasPrefix(cmd, "__") {
		return map[string]any{}, nil, nil
	}
	f, ok := aesFuncs[cmd]
	if !ok {
		// Salt: "Received function ... which is unavailable on the
		// master, returning False".
		return false, nil, fmt.Errorf("unknown command %q", cmd)
	}
	var m *minion
	if id, ok := load["id"].(string); ok {
		if m = t.accepted(id); m == nil {
			return false, nil, fmt.Errorf("%w for %s", errNoSession, id)
		}
		if f.tok {
			ok, grains := m.checkTok(load, host)
			if !ok {
				return false, nil, fmt.Errorf("the load for %s does not carry its key's token", id)
			}
			if grains != nil {
				t.grains(ctx, m, grains)
			}
		} else if f.sameHost && !m.provenFrom(host) {
			if cmd != "_pillar" {
				return false, nil, fmt.Errorf("%s has not proven it is at %s", id, host)
			}
		}
	} else if f.needID {
		return false, nil, errors.New("the load has no id")
	} else if m = t.onHost(host); m == nil {
		return false, nil, fmt.Errorf("no minion proven at %s", host)
	}
	m.touch(remote)
	ret, err := f.run(t, ctx, m, load, host)
	if err != nil {
		return false, nil, err
	}
	if cmd == "_pillar" {
		return ret, m, nil
	}
	return ret, nil, nil
}

// aesFunc is one of Salt's AESFuncs. tok: the load carries the minion's
// tok, which is checked (Salt's __verify_load); sameHost: it has none, so
// it is taken only from an address proven by one; needID: it names its
// minion (the file server's loads do not: any minion proven at the
// sender's address stands for them, the files are the same for all).
type aesFunc struct {
	run                   func(t *Transport, ctx context.Context, m *minion, load map[string]any, host string) (any, error)
	tok, sameHost, needID bool
}

var aesFuncs = map[string]aesFunc{
	"_return":               {run: (*Transport).ret, sameHost: true, needID: true},
	"_minion_event":         {run: (*Transport).event, tok: true, needID: true},
	"_pillar":               {run: (*Transport).pillar, sameHost: true, needID: true},
	"_mine":                 {run: (*Transport).mine, tok: true, needID: true},
	"_mine_delete":          {run: (*Transport).mineDelete, tok: true, needID: true},
	"_mine_get":             {run: (*Transport).mineGet, tok: true, needID: true},
	"_file_recv":            {run: (*Transport).fileRecv, tok: true, needID: true},
	"_file_list":            {run: (*Transport).fileList},
	"_file_list_emptydirs":  {run: empty(func() any { return []any{} })},
	"_dir_list":             {run: (*Transport).dirList},
	"_symlink_list":         {run: empty(func() any { return map[string]any{} })},
	"_file_hash":            {run: (*Transport).fileHash},
	"_file_hash_and_stat":   {run: (*Transport).fileHashAndStat},
	"_file_find":            {run: (*Transport).fileFind},
	"_serve_file":           {run: (*Transport).serveFile},
	"_file_envs":            {run: (*Transport).fileEnvs},
	"_master_opts":          {run: (*Transport).masterOpts},
	"_master_tops":          {run: empty(func() any { return map[string]any{} }), sameHost: true, needID: true},
	"_ext_nodes":            {run: empty(func() any { return map[string]any{} }), sameHost: true, needID: true},
	"_mine_flush":           {run: (*Transport).mineFlush, tok: true, needID: true},
	"_syndic_return":        {run: refused("syndics are not served"), needID: true},
	"minion_runner":         {run: refused("peer_run is not enabled"), tok: true, needID: true},
	"minion_pub":            {run: refused("peer publishing is not enabled"), tok: true, needID: true},
	"minion_publish":        {run: refused("peer publishing is not enabled"), tok: true, needID: true},
	"pub_ret":               {run: refused("peer publishing is not enabled"), tok: true, needID: true},
	"revoke_auth":           {run: refused("a minion cannot revoke its key here: use brine key -d"), tok: true, needID: true},
	"_file_recv_chunked":    {run: refused("not a Salt 3006 command"), needID: true},
	"_return_syndic_events": {run: refused("syndics are not served"), needID: true},
}

// empty answers what brine has nothing for (no master_tops, no empty
// directories in its file server) as Salt answers it then.
func empty(v func() any) func(*Transport, context.Context, *minion, map[string]any, string) (any, error) {
	return func(*Transport, context.Context, *minion, map[string]any, string) (any, error) { return v(), nil }
}

// refused answers False, as Salt does for what its configuration forbids.
func refused(why string) func(*Transport, context.Context, *minion, map[string]any, string) (any, error) {
	return func(*Transport, context.Context, *minion, map[string]any, string) (any, error) {
		return nil, errors.New(why)
	}
}

// convert reads v, a method's answer, into out (a wire type) through
// JSON, the agent protocol's encoding.
func convert(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
