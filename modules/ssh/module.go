package ssh

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/user"
)

// Str is an optional argument as a string: "" for None.
func Str(v any) string {
	if v == nil {
		return ""
	}
	return py.Str(v)
}

// Options are the options argument as a list of strings (one string is
// one option).
func Options(v any) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return py.Strs(t)
	}
	return []string{py.Str(v)}
}

// Fetch is Salt's cp.cache_file for a key file: a salt:// source
// (?saltenv= honoured) fetched into the agent's cache, or an absolute
// local path as it is; found is false when the master has no such file.
func Fetch(ctx context.Context, env *modules.Env, source, saltenv string) (local string, found bool, err error) {
	if !strings.HasPrefix(source, "salt://") {
		if filepath.IsAbs(source) && isFile(source) {
			return source, true, nil
		}
		if filepath.IsAbs(source) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("source %s: only salt:// sources and absolute paths are fetched", source)
	}
	path := source
	if i := strings.Index(path, "?"); i >= 0 {
		for _, kv := range strings.Split(path[i+1:], "&") {
			if v, ok := strings.CutPrefix(kv, "saltenv="); ok {
				saltenv = v
			}
		}
		path = path[:i]
	}
	if env == nil || env.Files == nil {
		return "", false, fmt.Errorf("source %s: salt:// needs a master (this agent runs without one)", source)
	}
	local, err = env.Files.Cache(ctx, path, saltenv)
	if errors.Is(err, modules.ErrNoFile) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return local, true, nil
}

// Module declares the ssh functions.
func Module(env *modules.Env) []function.Func {
	p := func(name string, kind function.Kind, def any) function.Param {
		return function.Param{Name: name, Kind: kind, Default: def}
	}
	req := func(name string) function.Param {
		return function.Param{Name: name, Kind: function.String, Required: true}
	}
	opt := func(name string) function.Param { return function.Param{Name: name, Kind: function.Any} }
	authConfig := p("config", function.String, ".ssh/authorized_keys")
	hashType := opt("fingerprint_hash_type")
	saltenv := p("saltenv", function.String, "base")
	fromFile := func(in *function.Input, ctx context.Context) (string, bool, error) {
		return Fetch(ctx, env, in.String("source"), in.String("saltenv"))
	}
	// pulled is fromFile for the functions that change keys, which fail,
	// in Salt's words, when the source is missing.
	pulled := func(in *function.Input, ctx context.Context) (string, error) {
		local, found, err := fromFile(in, ctx)
		if err == nil && !found {
			//lint:ignore ST1005 Salt's words.
			err = errors.New("Failed to pull key file from salt file server")
		}
		return local, err
	}
	return []function.Func{
		{Name: "ssh.auth_keys", ReadOnly: true,
			Doc:    "The authorized keys of user (a name, a list, or every user), {key: {enc, comment, options, fingerprint}}.",
			Params: []function.Param{opt("user"), authConfig, hashType},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				one := true
				var names []string
				switch u := in.Value("user").(type) {
				case []any:
					one, names = false, Options(u)
				default:
					names = []string{Str(u)}
				}
				if one && names[0] == "" {
					// Salt's `if not user`: every user, by name.
					users, err := user.Users(passwdRoot)
					if err != nil {
						return nil, err
					}
					one, names = false, nil
					for _, x := range users {
						names = append(names, x.Name)
					}
				}
				out := map[string]any{}
				for _, n := range names {
					full, err := ConfigFile(n, in.String("config"))
					if err != nil || !isFile(full) {
						continue
					}
					keys, err := ValidateKeys(full, Str(in.Value("fingerprint_hash_type")))
					if err != nil {
						return nil, err
					}
					out[n] = keys.Map()
				}
				if one {
					if k, ok := out[names[0]]; ok {
						return k, nil
					}
					return map[string]any{}, nil
				}
				return out, nil
			}},
		{Name: "ssh.check_key", ReadOnly: true,
			Doc: "Whether user's authorized keys need key: update, add or exists.",
			Params: []function.Param{req("user"), req("key"), req("enc"), {Name: "comment", Kind: function.Any, Required: true},
				{Name: "options", Kind: function.Any, Required: true}, authConfig, opt("cache_keys"), hashType},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return CheckKey(in.String("user"), in.String("key"), in.String("enc"), Str(in.Value("comment")),
					Options(in.Value("options")), in.String("config"), Str(in.Value("fingerprint_hash_type")))
			}},
		{Name: "ssh.check_key_file", ReadOnly: true,
			Doc:    "What ssh.check_key says of each key of the file source, {key: status}; {} when it is missing or holds none.",
			Params: []function.Param{req("user"), req("source"), authConfig, saltenv, hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				local, found, err := fromFile(in, ctx)
				if err != nil || !found {
					return map[string]any{}, err
				}
				st, _, err := CheckKeyFile(in.String("user"), local, in.String("source"), in.String("config"),
					Str(in.Value("fingerprint_hash_type")))
				out := map[string]any{}
				for _, s := range st {
					out[s.Key] = s.Status
				}
				return out, err
			}},
		{Name: "ssh.set_auth_key",
			Doc: "Add key (its base64 body) to user's authorized keys: new, replace, no change, invalid, " +
				"Invalid public key or fail.",
			Params: []function.Param{req("user"), req("key"), p("enc", function.String, "ssh-rsa"), p("comment", function.Any, ""),
				opt("options"), authConfig, opt("cache_keys"), hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return SetAuthKey(ctx, in.String("user"), in.String("key"), in.String("enc"), Str(in.Value("comment")),
					Options(in.Value("options")), in.String("config"), Str(in.Value("fingerprint_hash_type")))
			}},
		{Name: "ssh.set_auth_key_from_file",
			Doc:    "Add every key of the file source to user's authorized keys: fail, replace, new or no change.",
			Params: []function.Param{req("user"), req("source"), authConfig, saltenv, hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				local, err := pulled(in, ctx)
				if err != nil {
					return nil, err
				}
				r, _, err := SetAuthKeyFromFile(ctx, in.String("user"), local, in.String("source"), in.String("config"),
					Str(in.Value("fingerprint_hash_type")))
				return r, err
			}},
		{Name: "ssh.rm_auth_key",
			Doc:    "Remove key from user's authorized keys: Key removed, Key not present or Key not removed.",
			Params: []function.Param{req("user"), req("key"), authConfig, hashType},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				return RmAuthKey(in.String("user"), in.String("key"), in.String("config"), Str(in.Value("fingerprint_hash_type")))
			}},
		{Name: "ssh.rm_auth_key_from_file",
			Doc:    "Remove every key of the file source from user's authorized keys.",
			Params: []function.Param{req("user"), req("source"), authConfig, saltenv, hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				local, err := pulled(in, ctx)
				if err != nil {
					return nil, err
				}
				r, _, err := RmAuthKeyFromFile(in.String("user"), local, in.String("source"), in.String("config"),
					Str(in.Value("fingerprint_hash_type")))
				return r, err
			}},
		{Name: "ssh.get_known_host_entries", ReadOnly: true,
			Doc:    "The known_hosts entries of hostname (ssh-keygen -F), [{hostname, key, enc, fingerprint}]; None when none.",
			Params: []function.Param{opt("user"), req("hostname"), opt("config"), opt("port"), hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				e, fail, err := GetKnownHostEntries(ctx, Str(in.Value("user")), in.String("hostname"), Str(in.Value("config")),
					in.Value("port"), Str(in.Value("fingerprint_hash_type")))
				if fail != nil || err != nil {
					return fail, err
				}
				if e == nil {
					return nil, nil
				}
				return e, nil
			}},
		{Name: "ssh.recv_known_host_entries", ReadOnly: true,
			Doc: "The host's public keys as ssh-keyscan reads them, [{hostname, key, enc, fingerprint}]; None when none came.",
			Params: []function.Param{req("hostname"), opt("enc"), opt("port"), p("hash_known_hosts", function.Bool, true),
				p("timeout", function.Int, int64(5)), hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				e, err := RecvKnownHostEntries(ctx, in.String("hostname"), in.Value("enc"), in.Value("port"),
					in.Bool("hash_known_hosts"), in.Int("timeout"), Str(in.Value("fingerprint_hash_type")))
				if err != nil || e == nil {
					return nil, err
				}
				return e, nil
			}},
		{Name: "ssh.check_known_host", ReadOnly: true,
			Doc:    "Whether the known_hosts file needs hostname's key (or fingerprint): add, update or exists.",
			Params: []function.Param{opt("user"), opt("hostname"), opt("key"), opt("fingerprint"), opt("config"), opt("port"), hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return CheckKnownHost(ctx, Str(in.Value("user")), Str(in.Value("hostname")), Str(in.Value("key")),
					Str(in.Value("fingerprint")), Str(in.Value("config")), in.Value("port"), Str(in.Value("fingerprint_hash_type")))
			}},
		{Name: "ssh.rm_known_host",
			Doc:    "Remove hostname's entries from the known_hosts file (ssh-keygen -R).",
			Params: []function.Param{opt("user"), opt("hostname"), opt("config"), opt("port")},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return RmKnownHost(ctx, Str(in.Value("user")), Str(in.Value("hostname")), Str(in.Value("config")), in.Value("port"))
			}},
		{Name: "ssh.set_known_host",
			Doc: "Write hostname's key (key, or read with ssh-keyscan and checked against fingerprint) to the known_hosts file: " +
				"{status: exists|updated|error, …}.",
			Params: []function.Param{opt("user"), opt("hostname"), opt("fingerprint"), opt("key"), opt("port"), opt("enc"),
				opt("config"), p("hash_known_hosts", function.Bool, true), p("timeout", function.Int, int64(5)), hashType},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return SetKnownHost(ctx, KnownHostArgs(in))
			}},
		{Name: "ssh.hash_known_hosts",
			Doc:    "Hash every host name of the known_hosts file (ssh-keygen -H).",
			Params: []function.Param{opt("user"), opt("config")},
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return HashKnownHosts(ctx, Str(in.Value("user")), Str(in.Value("config")))
			}},
	}
}

// KnownHostArgs reads set_known_host's arguments (the state's are the
// same, name being the host).
func KnownHostArgs(in *function.Input) KnownHost {
	host := Str(in.Value("hostname"))
	if in.Has("name") {
		host = in.String("name")
	}
	return KnownHost{User: Str(in.Value("user")), Hostname: host, Fingerprint: Str(in.Value("fingerprint")),
		Key: Str(in.Value("key")), Port: in.Value("port"), Enc: in.Value("enc"), Config: Str(in.Value("config")),
		Hash: in.Bool("hash_known_hosts"), Timeout: in.Int("timeout"), HashType: Str(in.Value("fingerprint_hash_type"))}
}
