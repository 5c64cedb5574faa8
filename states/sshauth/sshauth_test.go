package sshauth

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// The public keys the Salt run used (ssh-keygen's, comments x@host).
var keys = map[string]string{
	"a": "AAAAC3NzaC1lZDI1NTE5AAAAIFu0kvBUro8UX0COM4Wbs2PKiTb1fiRfckncL1MFKREH",
	"b": "AAAAC3NzaC1lZDI1NTE5AAAAIEv6JRjjoi3c+miPLwiPZ4ykp/M9RaYEc7+RYTRCRs22",
	"c": "AAAAC3NzaC1lZDI1NTE5AAAAICjZkL5xoEG9bHVitYC3whiJskwHuuUxmjfjdGVCpLUE",
	"d": "AAAAC3NzaC1lZDI1NTE5AAAAIC0rPUaZ5tb5gPff4zxFqr/oQXytUMuyktF8WDGbfeHk",
	"e": "AAAAC3NzaC1lZDI1NTE5AAAAII81E+axemmLXJZwG0m4KzVF2u3YXSTmSmD0Aa+uzrkf",
	"f": "AAAAC3NzaC1lZDI1NTE5AAAAIG0Umo9FrGIrP25+qQqyVr+B36ydYl/OeTh1JvpM2rOm",
	"g": "AAAAC3NzaC1lZDI1NTE5AAAAIFj206DwSXvDKKL84PUiep4iqzhqIGEZyDHIKckRQH48",
	"r": "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDTNTWOf7rnKLlDSLgmwkAX2gYXWSo9G1KVfghPpIzI9j7hb5kqv36dBpU60OgcM+Y+Nr0H5vvIu6BeARdR" +
		"hw4r5GAEgN/Zi30yXukistLgG4D2dYVO0lHj81U4ViPcd/5U3loLxd8hu7oqSemVNWOCVoCUMKcZbSbV/73pgjKnhQ==",
}

// expander replaces {a}… with the keys and {dir} with the test's
// directory, in SLS arguments and in Salt's returns alike.
func expander(dir string) func(string) string {
	pairs := []string{"{dir}", dir}
	for k, v := range keys {
		pairs = append(pairs, "{"+k+"}", v)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

func expand(x func(string) string, v any) any {
	switch t := v.(type) {
	case string:
		return x(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = expand(x, e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out[x(k)] = expand(x, e)
		}
		return out
	}
	return v
}

type want struct {
	result  any
	comment string
	changes map[string]any
}

func requireRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t, "this test writes key files owned by the user root and needs to run as root (Salt's runs chown them)")
}

// TestSSHAuth runs the SLS Salt 3006.6 was run on (salt-call --local,
// user root, config files in a temporary directory, the same salt://
// sources) three times, test mode first, and holds Salt's returns and
// the files it left.
func TestSSHAuth(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	x := expander(dir)
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": {
		"keys/set.pub":   x("ssh-ed25519 {d} d@host\nssh-ed25519 {a} a@host\n"),
		"keys/opts.pub":  x("no-pty ssh-ed25519 {f} f@host\n"),
		"keys/gone.pub":  x("ssh-ed25519 {g} g@host\n"),
		"keys/empty.pub": "# nothing\n",
	}}}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(x(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ak", "# managed by hand\n\nssh-ed25519 {a} a@host\nno-pty ssh-ed25519 {b} b@host\n  \n"+
		"environment=\"X=1\" ssh-ed25519 {e} e@host")
	write("ak2", "ssh-ed25519 {b} b@host\nssh-ed25519 {a} a@host\n")
	write("ak3", "ssh-ed25519 {g} g@host\n")
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{Files: files, CacheDir: t.TempDir()})); err != nil {
		t.Fatal(err)
	}
	ak := map[string]any{"user": "root", "config": "{dir}/ak"}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	sls := []struct {
		id, fun string
		kwargs  map[string]any
	}{
		{"already", "ssh_auth.present", with(ak, "name", "{a}", "enc", "ssh-ed25519", "comment", "a@host")},
		{"fullline", "ssh_auth.present", with(ak, "name", "ssh-ed25519 {c} c@host")},
		{"update", "ssh_auth.present", with(ak, "name", "{b}", "enc", "ed25519", "comment", "b@host")},
		{"withopts", "ssh_auth.present", with(ak, "name", `command="ls",no-pty ssh-rsa {r} rsa@host`)},
		{"optslist", "ssh_auth.present", with(ak, "name", "{f} f comment", "enc", "ssh-ed25519",
			"options", []any{"no-agent-forwarding", `from="10.0.0.1"`})},
		{"invalid", "ssh_auth.present", with(ak, "name", "not-base64!")},
		{"fromsource", "ssh_auth.present", with(ak, "name", "fromsource", "source", "salt://keys/set.pub")},
		{"removed", "ssh_auth.absent", with(ak, "name", "{e}")},
		{"notpresent", "ssh_auth.absent", with(ak, "name", "ssh-ed25519 {g} g@host")},
		{"nouser", "ssh_auth.present", map[string]any{"name": "{a}", "user": "nosuchuser"}},
		{"nofile", "ssh_auth.absent", map[string]any{"name": "{a}", "user": "root", "config": "{dir}/nofile"}},
		{"nosource", "ssh_auth.present", with(ak, "name", "nosource", "source", "salt://keys/nothere.pub")},
		{"emptysource", "ssh_auth.present", with(ak, "name", "emptysource", "source", "salt://keys/empty.pub")},
		{"managed", "ssh_auth.manage", map[string]any{"name": "managed", "user": "root", "config": "{dir}/ak2",
			"ssh_keys": []any{"ssh-ed25519 {a} a@host", "ssh-ed25519 {d} d@host"}}},
		{"optsource", "ssh_auth.present", map[string]any{"name": "optsource", "user": "root", "config": "{dir}/ak3",
			"source": "salt://keys/opts.pub"}},
		{"sourceabsent", "ssh_auth.absent", map[string]any{"name": "sourceabsent", "user": "root", "config": "{dir}/ak3",
			"source": "salt://keys/gone.pub"}},
		{"newdir", "ssh_auth.present", map[string]any{"name": "{a}", "user": "root", "enc": "ssh-ed25519",
			"config": "{dir}/newdir/sub/keys"}},
	}
	runs := []struct {
		test  bool
		wants []want
	}{
		{true, []want{
			{true, "The authorized host key {a} is already present for user root", nil},
			{nil, "Key {c} for user root is set to be added", nil},
			{nil, "Key {b} for user root is set to be updated", nil},
			{nil, "Key {r} for user root is set to be added", nil},
			{nil, "Key {f} for user root is set to be added", nil},
			{nil, "Key not-base64! for user root is set to be added", nil},
			{nil, "Set to add: {d}\n", nil},
			{nil, "Key {e} for user root is set for removal", nil},
			{true, "Key is already absent", nil},
			{nil, "Key {a} for user nosuchuser is set to be added", nil},
			{true, "Key is already absent", nil},
			{true, "All host keys in file salt://keys/nothere.pub are already present", nil},
			{false, "No keys detected in salt://keys/empty.pub. Is file properly formatted?", nil},
			{nil, "{b} Key set for removal\nThe authorized host key {a} is already present for user root\n" +
				"Key {d} for user root is set to be added", nil},
			{nil, "Set to add: {f}\n", nil},
			{nil, "Set to remove: {g}\n", nil},
			{nil, "Key {a} for user root is set to be added", nil},
		}},
		{false, []want{
			{true, "The authorized host key {a} is already present for user root", nil},
			{true, "The authorized host key {c} for user root was added", map[string]any{"{c}": "New"}},
			{true, "The authorized host key {b} for user root was updated", map[string]any{"{b}": "Updated"}},
			{true, "The authorized host key {r} for user root was added", map[string]any{"{r}": "New"}},
			{true, "The authorized host key {f} for user root was added", map[string]any{"{f}": "New"}},
			{false, "Invalid public ssh key, most likely has spaces or invalid syntax", nil},
			{true, "The authorized host key fromsource is already present for user root", nil},
			{true, "Key removed", map[string]any{"{e}": "Removed"}},
			{true, "Key not present", nil},
			{false, "Failed to add the ssh key. Is the home directory available, and/or does the key file exist?", nil},
			{true, "Key not present", nil},
			{false, "Failed to add the ssh key. Source file salt://keys/nothere.pub is missing", nil},
			{false, "No keys detected in salt://keys/empty.pub. Is file properly formatted?", nil},
			{true, "The authorized host key {a} is already present for user root",
				map[string]any{"{b}": "Key removed", "{d}": "New"}},
			{true, "The authorized host key optsource for user root was added", map[string]any{"optsource": "New"}},
			{true, "Key removed", map[string]any{"sourceabsent": "Removed"}},
			{true, "The authorized host key {a} for user root was added", map[string]any{"{a}": "New"}},
		}},
		{false, []want{
			{true, "The authorized host key {a} is already present for user root", nil},
			{true, "The authorized host key {c} is already present for user root", nil},
			{true, "The authorized host key {b} is already present for user root", nil},
			{true, "The authorized host key {r} is already present for user root", nil},
			{true, "The authorized host key {f} is already present for user root", nil},
			{false, "Invalid public ssh key, most likely has spaces or invalid syntax", nil},
			{true, "The authorized host key fromsource is already present for user root", nil},
			{true, "Key not present", nil},
			{true, "Key not present", nil},
			{false, "Failed to add the ssh key. Is the home directory available, and/or does the key file exist?", nil},
			{true, "Key not present", nil},
			{false, "Failed to add the ssh key. Source file salt://keys/nothere.pub is missing", nil},
			{false, "No keys detected in salt://keys/empty.pub. Is file properly formatted?", nil},
			{true, "The authorized host key {a} is already present for user root\n" +
				"The authorized host key {d} is already present for user root", nil},
			{true, "The authorized host key optsource is already present for user root", nil},
			{true, "Key not present", nil},
			{true, "The authorized host key {a} is already present for user root", nil},
		}},
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	origAK := read("ak")
	afterAK := x("# managed by hand\nssh-ed25519 {a} a@host\nssh-ed25519 {b} b@host\nssh-ed25519 {c} c@host\n" +
		"command=\"ls\",no-pty ssh-rsa {r} rsa@host\nno-agent-forwarding,from=\"10.0.0.1\" ssh-ed25519 {f} f comment\n" +
		"ssh-ed25519 {d} d@host\n")
	for n, run := range runs {
		for i, c := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test, ID: c.id, Saltenv: "base"})
			out, err := reg.Call(ctx, c.fun, nil, expand(x, c.kwargs).(map[string]any), nil)
			if err != nil {
				t.Fatal(err)
			}
			r, ok := out.(state.Result)
			if m, isMap := out.(map[string]any); isMap {
				// ssh_auth.manage's return, named "" as Salt's.
				if m["name"] != "" {
					t.Errorf("run %d, %s: name %q, want Salt's \"\"", n+1, c.id, m["name"])
				}
				r = state.Result{Comment: m["comment"].(string), Changes: m["changes"].(map[string]any)}
				if b, isBool := m["result"].(bool); isBool {
					r.Result = &b
				}
			} else if !ok {
				t.Fatalf("run %d, %s: returned %T", n+1, c.id, out)
			}
			w := run.wants[i]
			wc := expand(x, w.changes)
			if state.Value(r.Result) != w.result || r.Comment != x(w.comment) ||
				!(reflect.DeepEqual(map[string]any(r.Changes), wc) || len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("run %d, %s: got %v %q %#v\nwant %v %q %#v", n+1, c.id, state.Value(r.Result), r.Comment, r.Changes,
					w.result, x(w.comment), wc)
			}
		}
		wantAK := afterAK
		if run.test {
			wantAK = origAK
		}
		if got := read("ak"); got != wantAK {
			t.Errorf("run %d: ak\n%s\nwant\n%s", n+1, got, wantAK)
		}
	}
	for name, body := range map[string]string{"ak2": "ssh-ed25519 {a} a@host\nssh-ed25519 {d} d@host\n",
		"ak3": "no-pty ssh-ed25519 {f} f@host\n", "newdir/sub/keys": "ssh-ed25519 {a} \n"} {
		if got := read(name); got != x(body) {
			t.Errorf("%s\n%q\nwant\n%q", name, got, x(body))
		}
	}
	for name, mode := range map[string]os.FileMode{"newdir/sub": 0o700 | os.ModeDir, "newdir/sub/keys": 0o600, "ak": 0o644} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v (Salt's)", name, st.Mode(), err, mode)
		}
	}
}

// TestSplitName holds the state's reading of a name to Salt's regular
// expression and splits.
func TestSplitName(t *testing.T) {
	base := params{enc: "ssh-rsa", comment: "dflt"}
	cases := []struct {
		name         string
		bare, full   int
		key          string
		enc, comment string
		options      []string
	}{
		{"AAAA", 1, 2, "AAAA", "ssh-rsa", "dflt", nil},
		{"AAAA my comment", 1, 2, "AAAA", "ssh-rsa", "my comment", nil},
		{"AAAA my comment", -1, -1, "AAAA", "ssh-rsa", "dflt", nil},
		{"AAAA me", -1, -1, "AAAA", "ssh-rsa", "me", nil},
		{"ssh-ed25519 AAAA me@x and more", 1, 2, "AAAA", "ssh-ed25519", "me@x and more", nil},
		{"ssh-ed25519 AAAA me@x and more", 1, -1, "AAAA", "ssh-ed25519", "dflt", nil},
		{`no-pty,command="x" ecdsa-sha2-nistp256 AAAA c`, 1, 2, "AAAA", "ecdsa-sha2-nistp256", "c", []string{"no-pty", `command="x"`}},
		// Salt's expression takes no "@" in the type: the name is a bare key.
		{"sk-ssh-ed25519@openssh.com AAAA c", 1, 2, "sk-ssh-ed25519@openssh.com", "ssh-rsa", "AAAA c", nil},
	}
	for _, c := range cases {
		key, p := splitName(c.name, base, c.bare, c.full)
		if key != c.key || p.enc != c.enc || p.comment != c.comment || !reflect.DeepEqual(p.options, c.options) {
			t.Errorf("splitName(%q, %d, %d) = %q %q %q %q", c.name, c.bare, c.full, key, p.enc, p.comment, p.options)
		}
	}
}
