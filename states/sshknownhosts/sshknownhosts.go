// Package sshknownhosts is Salt's ssh_known_hosts state module:
// ssh_known_hosts.present and ssh_known_hosts.absent, a host's keys in a
// known_hosts file (a user's .ssh/known_hosts, or without a user an
// absolute config, /etc/ssh/ssh_known_hosts by default), with Salt's
// comments, changes and test mode. The file is handled by the ssh
// execution module with OpenSSH's tools, as Salt's states do: present
// without a key asks the host with ssh-keyscan, and a file is hashed
// (ssh-keygen -H) unless hash_known_hosts is False.
package sshknownhosts

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/ssh"
	"github.com/brinehq/brine/state"
)

// Module declares the ssh_known_hosts states.
func Module(*modules.Env) []function.Func {
	opt := func(name string) function.Param { return function.Param{Name: name, Kind: function.Any} }
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "ssh_known_hosts.present", Doc: "Ensure the host name's key (key with enc, or read with ssh-keyscan and " +
			"checked against fingerprint) is in the known_hosts file.",
			Params: []function.Param{name, opt("user"), opt("fingerprint"), opt("key"), opt("port"), opt("enc"), opt("config"),
				{Name: "hash_known_hosts", Kind: function.Bool, Default: true}, {Name: "timeout", Kind: function.Int, Default: int64(5)},
				opt("fingerprint_hash_type")},
			Run: func(ctx context.Context, in *function.Input) (any, error) { return present(ctx, in), nil }},
		{Name: "ssh_known_hosts.absent", Doc: "Ensure the host name has no entry in the known_hosts file.",
			Params: []function.Param{name, opt("user"), opt("config")},
			Run:    func(ctx context.Context, in *function.Input) (any, error) { return absent(ctx, in), nil }},
	}
}

// config is the states' default file: a user's .ssh/known_hosts, else
// /etc/ssh/ssh_known_hosts; ok is false for a relative one without a
// user.
func config(user, config string) (string, bool) {
	if config == "" {
		config = "/etc/ssh/ssh_known_hosts"
		if user != "" {
			config = ".ssh/known_hosts"
		}
	}
	return config, user != "" || filepath.IsAbs(config)
}

const needAbs = `If not specifying a "user", specify an absolute "config".`

func present(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	test := state.From(ctx).Test
	k := ssh.KnownHostArgs(in)
	cfg, ok := config(k.User, k.Config)
	if !ok {
		return state.Failed(name, needAbs)
	}
	k.Config = cfg
	if test {
		if k.Key != "" && k.Fingerprint != "" {
			return state.Failed(name, `Specify either "key" or "fingerprint", not both.`)
		}
		if k.Key != "" && ssh.Str(k.Enc) == "" {
			return state.Failed(name, `Required argument "enc" if using "key" argument.`)
		}
		check, err := ssh.CheckKnownHost(ctx, k.User, name, k.Key, k.Fingerprint, cfg, k.Port, k.HashType)
		if err != nil {
			return state.Failed(name, "ssh.check_known_host error: %v", err)
		}
		switch check {
		case "exists":
			return state.Succeeded(name, fmt.Sprintf("Host %s is already in %s", name, cfg), nil)
		case "add":
			return state.Pending(name, fmt.Sprintf("Key for %s is set to be added to %s", name, cfg), nil)
		}
		return state.Pending(name, fmt.Sprintf("Key for %s is set to be updated in %s", name, cfg), nil)
	}
	res, err := ssh.SetKnownHost(ctx, k)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	switch res["status"] {
	case "exists":
		return state.Succeeded(name, fmt.Sprintf("%s already exists in %s", name, cfg), nil)
	case "error":
		return state.Failed(name, "%s", ssh.Str(res["error"]))
	}
	changes := map[string]any{"old": res["old"], "new": res["new"]}
	first := map[string]any{}
	if l, _ := res["new"].([]any); len(l) > 0 {
		first, _ = l[0].(map[string]any)
	}
	if k.Key != "" {
		return state.Succeeded(name, fmt.Sprintf("%s's key saved to %s (key: %s)", name, cfg, ssh.Str(first["key"])), changes)
	}
	return state.Succeeded(name, fmt.Sprintf("%s's key saved to %s (fingerprint: %s)", name, cfg,
		ssh.Str(first["fingerprint"])), changes)
}

func absent(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	user := ssh.Str(in.Value("user"))
	cfg, ok := config(user, ssh.Str(in.Value("config")))
	if !ok {
		return state.Failed(name, needAbs)
	}
	entries, fail, err := ssh.GetKnownHostEntries(ctx, user, name, cfg, nil, "")
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	if len(entries) == 0 && fail == nil {
		return state.Succeeded(name, "Host is already absent", nil)
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Key for %s is set to be removed from %s", name, cfg), nil)
	}
	rm, err := ssh.RmKnownHost(ctx, user, name, cfg, nil)
	if err != nil {
		return state.Failed(name, "%v", err)
	}
	if rm["status"] == "error" {
		return state.Failed(name, "%s", ssh.Str(rm["error"]))
	}
	return state.Succeeded(name, ssh.Str(rm["comment"]), map[string]any{"old": entries, "new": nil})
}
