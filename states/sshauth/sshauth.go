// Package sshauth is Salt's ssh_auth state module: ssh_auth.present,
// ssh_auth.absent and ssh_auth.manage, keys in a user's authorized_keys
// file (config, .ssh/authorized_keys under the user's home by default,
// %h and %u expanded), with Salt's comments, changes and test mode. The
// file is edited by the ssh execution module, as Salt's states call it.
//
// Salt's quirks are kept where a formula can see them: a key given with
// its type and comment ("ssh-ed25519 AAAA… me@host") or with options in
// front is split as Salt splits it; with a source whose lines start with
// a key type, each line is set on its own and the state reports what the
// last one gave; ssh_auth.manage's return is named "", as Salt's.
package sshauth

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/ssh"
	"github.com/brinehq/brine/state"
)

// Module declares the ssh_auth states.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env}
	common := []function.Param{
		{Name: "user", Kind: function.String, Required: true},
		{Name: "enc", Kind: function.String, Default: "ssh-rsa"},
		{Name: "comment", Kind: function.Any, Default: ""},
		{Name: "source", Kind: function.String, Default: ""},
		{Name: "options", Kind: function.Any},
		{Name: "config", Kind: function.String, Default: ".ssh/authorized_keys"},
		{Name: "fingerprint_hash_type", Kind: function.Any},
	}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "ssh_auth.present", Doc: "Ensure the key name (a key, or a whole authorized_keys line), or the keys of source, " +
			"are in user's authorized keys.",
			Params: append([]function.Param{name}, common...), VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.present(ctx, in.String("name"), args(in)), nil
			}},
		{Name: "ssh_auth.absent", Doc: "Ensure the key name, or the keys of source, are not in user's authorized keys.",
			Params: append([]function.Param{name}, common...),
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				return s.absent(ctx, in.String("name"), args(in)), nil
			}},
		{Name: "ssh_auth.manage", Doc: "Ensure ssh_keys are user's only authorized keys: the others removed, each added as ssh_auth.present.",
			Params: append([]function.Param{{Name: "name", Kind: function.String, Default: ""},
				{Name: "ssh_keys", Kind: function.List, Required: true}}, common...), VarKwargs: true,
			Run: func(ctx context.Context, in *function.Input) (any, error) {
				// A mapping, not a state.Result, so that the state system
				// keeps Salt's empty name rather than filling in the id.
				r := s.manage(ctx, in.List("ssh_keys"), args(in))
				var result any
				if r.Result != nil {
					result = *r.Result
				}
				return map[string]any{"name": "", "result": result, "changes": r.Changes, "comment": r.Comment}, nil
			}},
	}
}

type states struct{ env *modules.Env }

// params are the arguments the three states share.
type params struct {
	user, enc, comment, source string
	options                    []string
	config, hashType           string
}

func args(in *function.Input) params {
	return params{user: in.String("user"), enc: in.String("enc"), comment: ssh.Str(in.Value("comment")),
		source: in.String("source"), options: ssh.Options(in.Value("options")), config: in.String("config"),
		hashType: ssh.Str(in.Value("fingerprint_hash_type"))}
}

// fullKeyRE is how Salt's state tells a whole line (options, type, key,
// comment) from a bare key.
var fullKeyRE = regexp.MustCompile(`^(.*?)\s?((?:sk-)?(?:ssh\-|ecds)[\w-]+\s.+)$`)

// typedLineRE is a source line that starts with a key type.
var typedLineRE = regexp.MustCompile(`^(sk-)?(ssh\-|ecds)`)

// splitName reads name as Salt's states do: a whole line gives the key,
// its type, comment and options; a bare key may be followed by its
// comment. bareMax and fullMax are the split limits Salt uses for each
// (Python's str.split(None, n); -1 splits fully): present uses 1 and 2,
// absent 1 and none, the test checks none and none.
func splitName(name string, p params, bareMax, fullMax int) (string, params) {
	m := fullKeyRE.FindStringSubmatch(name)
	if m == nil {
		parts := pySplit(name, bareMax)
		if len(parts) == 0 {
			return name, p
		}
		if len(parts) == 2 {
			p.comment = parts[1]
		}
		return parts[0], p
	}
	comps := pySplit(m[2], fullMax)
	if len(comps) < 2 {
		return name, p
	}
	if m[1] != "" {
		p.options = strings.Split(m[1], ",")
	}
	p.enc = comps[0]
	if len(comps) == 3 {
		p.comment = comps[2]
	}
	return comps[1], p
}

// pySplit is Python's str.split(None, n): n < 0 splits fully.
func pySplit(s string, n int) []string {
	if n < 0 {
		return strings.Fields(s)
	}
	var out []string
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	for s != "" && len(out) < n {
		i := strings.IndexAny(s, " \t\n\r\v\f")
		if i < 0 {
			break
		}
		out = append(out, s[:i])
		s = strings.TrimLeft(s[i:], " \t\n\r\v\f")
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func (s *states) saltenv(ctx context.Context) string {
	if e := state.From(ctx).Saltenv; e != "" {
		return e
	}
	return "base"
}

// checkSource is the source half of Salt's test checks: ssh.check_key_file
// on the fetched file. keys is nil when the source is missing.
func (s *states) checkSource(ctx context.Context, p params) (keys []ssh.KeyStatus, noKeys string, err error) {
	local, found, err := ssh.Fetch(ctx, s.env, p.source, s.saltenv(ctx))
	if err != nil || !found {
		return nil, "", err
	}
	return ssh.CheckKeyFile(p.user, local, p.source, p.config, p.hashType)
}

// sourceTest is the test-mode answer for a source file of keys: pending
// with line's words for each key the state would change, a failure when
// the file has no keys, else that they all are already (present or
// absent).
func (s *states) sourceTest(ctx context.Context, p params, already string, line func(ssh.KeyStatus) string) (*bool, string, error) {
	keys, noKeys, err := s.checkSource(ctx, p)
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(line(k))
	}
	if b.Len() > 0 {
		return nil, b.String(), nil
	}
	if noKeys != "" {
		return state.Bool(false), noKeys, nil
	}
	return state.Bool(true), fmt.Sprintf("All host keys in file %s are already %s", p.source, already), nil
}

// tested is ret with what presentTest or absentTest found.
func tested(ret state.Result, result *bool, comment string, err error) state.Result {
	if err != nil {
		return state.Failed(ret.Name, "%v", err)
	}
	ret.Result, ret.Comment = result, comment
	return ret
}

func (s *states) presentTest(ctx context.Context, name string, p params) (*bool, string, error) {
	if p.source != "" {
		return s.sourceTest(ctx, p, "present", func(k ssh.KeyStatus) string {
			if k.Status != "exists" {
				return fmt.Sprintf("Set to %s: %s\n", k.Status, k.Key)
			}
			return ""
		})
	}
	name, p = splitName(name, p, -1, -1)
	check, err := ssh.CheckKey(p.user, name, p.enc, p.comment, p.options, p.config, p.hashType)
	if err != nil {
		return nil, "", err
	}
	switch check {
	case "update":
		return nil, fmt.Sprintf("Key %s for user %s is set to be updated", name, p.user), nil
	case "add":
		return nil, fmt.Sprintf("Key %s for user %s is set to be added", name, p.user), nil
	}
	return state.Bool(true), fmt.Sprintf("The authorized host key %s is already present for user %s", name, p.user), nil
}

func (s *states) present(ctx context.Context, name string, p params) state.Result {
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if p.source == "" {
		name, p = splitName(name, p, 1, 2)
	}
	if state.From(ctx).Test {
		r, c, err := s.presentTest(ctx, name, p)
		return tested(ret, r, c, err)
	}
	data, noKeys, err := s.set(ctx, name, p)
	if err != nil {
		return state.Failed(ret.Name, "%v", err)
	}
	switch data {
	case "replace":
		ret.Changes[name] = "Updated"
		ret.Comment = fmt.Sprintf("The authorized host key %s for user %s was updated", name, p.user)
	case "no change":
		ret.Comment = fmt.Sprintf("The authorized host key %s is already present for user %s", name, p.user)
	case "new":
		ret.Changes[name] = "New"
		ret.Comment = fmt.Sprintf("The authorized host key %s for user %s was added", name, p.user)
	case "no key":
		ret.Result = state.Bool(false)
		ret.Comment = fmt.Sprintf("Failed to add the ssh key. Source file %s is missing", p.source)
	case "fail":
		ret.Result = state.Bool(false)
		ret.Comment = noKeys
		if noKeys == "" {
			ret.Comment = "Failed to add the ssh key. Is the home directory available, and/or does the key file exist?"
		}
	case "invalid", "Invalid public key":
		ret.Result = state.Bool(false)
		ret.Comment = "Invalid public ssh key, most likely has spaces or invalid syntax"
	}
	return ret
}

// set is present's change: the key, or each line of the source.
func (s *states) set(ctx context.Context, name string, p params) (data, noKeys string, err error) {
	if p.source == "" {
		data, err = ssh.SetAuthKey(ctx, p.user, name, p.enc, p.comment, p.options, p.config, p.hashType)
		return data, "", err
	}
	local, found, err := ssh.Fetch(ctx, s.env, p.source, s.saltenv(ctx))
	if err != nil {
		return "", "", err
	}
	if !found {
		return "no key", "", nil
	}
	body, err := os.ReadFile(local)
	if err != nil {
		return "", "", fmt.Errorf("source %s: %w", p.source, err)
	}
	for _, line := range strings.Split(strings.TrimRight(string(body), " \t\n\r\v\f"), "\n") {
		if !typedLineRE.MatchString(line) {
			data, noKeys, err = ssh.SetAuthKeyFromFile(ctx, p.user, local, p.source, p.config, p.hashType)
		} else {
			f := strings.Split(line, " ")
			if len(f) < 2 {
				return "", "", fmt.Errorf("source %s: the line %q has no key", p.source, line)
			}
			comment := ""
			if len(f) > 2 {
				comment = f[2]
			}
			data, err = ssh.SetAuthKey(ctx, p.user, f[1], f[0], comment, p.options, p.config, p.hashType)
			noKeys = ""
		}
		if err != nil {
			return "", "", err
		}
	}
	return data, noKeys, nil
}

func (s *states) absentTest(ctx context.Context, name string, p params) (*bool, string, error) {
	if p.source != "" {
		return s.sourceTest(ctx, p, "absent", func(k ssh.KeyStatus) string {
			if k.Status != "add" {
				return fmt.Sprintf("Set to remove: %s\n", k.Key)
			}
			return ""
		})
	}
	name, p = splitName(name, p, -1, -1)
	check, err := ssh.CheckKey(p.user, name, p.enc, p.comment, p.options, p.config, p.hashType)
	if err != nil {
		return nil, "", err
	}
	if check == "update" || check == "exists" {
		return nil, fmt.Sprintf("Key %s for user %s is set for removal", name, p.user), nil
	}
	return state.Bool(true), "Key is already absent", nil
}

func (s *states) absent(ctx context.Context, name string, p params) state.Result {
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	if state.From(ctx).Test {
		r, c, err := s.absentTest(ctx, name, p)
		return tested(ret, r, c, err)
	}
	var err error
	if p.source != "" {
		ret.Comment, err = s.removeSource(ctx, p)
	} else {
		name, p = splitName(name, p, 1, -1)
		ret.Comment, err = ssh.RmAuthKey(p.user, name, p.config, p.hashType)
	}
	if err != nil {
		return state.Failed(ret.Name, "%v", err)
	}
	switch ret.Comment {
	case "User authorized keys file not present":
		ret.Result = state.Bool(false)
	case "Key removed":
		ret.Changes[name] = "Removed"
	}
	return ret
}

// removeSource is absent's change with a source: each of its lines, the
// comment being what the last one gave.
func (s *states) removeSource(ctx context.Context, p params) (string, error) {
	local, found, err := ssh.Fetch(ctx, s.env, p.source, s.saltenv(ctx))
	if err != nil {
		return "", err
	}
	if !found {
		//lint:ignore ST1005 A state comment.
		return "", fmt.Errorf("Source file %s is missing", p.source)
	}
	body, err := os.ReadFile(local)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", p.source, err)
	}
	comment := ""
	for _, line := range strings.Split(strings.TrimRight(string(body), " \t\n\r\v\f"), "\n") {
		if !typedLineRE.MatchString(line) {
			comment, _, err = ssh.RmAuthKeyFromFile(p.user, local, p.source, p.config, p.hashType)
		} else {
			f := strings.Split(line, " ")
			if len(f) < 2 {
				return "", fmt.Errorf("source %s: the line %q has no key", p.source, line)
			}
			comment, err = ssh.RmAuthKey(p.user, f[1], p.config, p.hashType)
		}
		if err != nil {
			return "", err
		}
	}
	return comment, nil
}

func (s *states) manage(ctx context.Context, sshKeys []any, p params) state.Result {
	ret := state.Result{Name: "", Result: state.Bool(true), Changes: map[string]any{}}
	keys := make([]string, len(sshKeys))
	potential := map[string]bool{}
	for i, k := range sshKeys {
		keys[i] = ssh.Str(k)
		for _, tok := range strings.Split(keys[i], " ") {
			potential[tok] = true
		}
	}
	existing, err := ssh.AuthKeys(p.user, p.config, p.hashType)
	if err != nil {
		return state.Failed("", "%v", err)
	}
	test := state.From(ctx).Test
	for _, k := range existing {
		if potential[k.Key] {
			continue
		}
		if test {
			ret.Comment = k.Key + " Key set for removal"
			ret.Result = nil
			continue
		}
		ret.Changes[k.Key] = s.absent(ctx, k.Key, p).Comment
	}
	for _, k := range keys {
		r := s.present(ctx, k, p)
		if len(r.Changes) > 0 {
			for ck, cv := range r.Changes {
				ret.Changes[ck] = cv
			}
		} else {
			ret.Comment = strings.TrimSpace(ret.Comment + "\n" + r.Comment)
		}
		switch {
		case r.Result == nil:
			ret.Result = nil
		case !*r.Result:
			ret.Result = state.Bool(false)
		}
	}
	return ret
}
