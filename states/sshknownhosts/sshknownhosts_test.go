package sshknownhosts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// The public keys the Salt run used.
var keys = map[string]string{
	"a": "AAAAC3NzaC1lZDI1NTE5AAAAIFu0kvBUro8UX0COM4Wbs2PKiTb1fiRfckncL1MFKREH",
	"b": "AAAAC3NzaC1lZDI1NTE5AAAAIEv6JRjjoi3c+miPLwiPZ4ykp/M9RaYEc7+RYTRCRs22",
	"c": "AAAAC3NzaC1lZDI1NTE5AAAAICjZkL5xoEG9bHVitYC3whiJskwHuuUxmjfjdGVCpLUE",
	"d": "AAAAC3NzaC1lZDI1NTE5AAAAIC0rPUaZ5tb5gPff4zxFqr/oQXytUMuyktF8WDGbfeHk",
	"e": "AAAAC3NzaC1lZDI1NTE5AAAAII81E+axemmLXJZwG0m4KzVF2u3YXSTmSmD0Aa+uzrkf",
	"r": "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDTNTWOf7rnKLlDSLgmwkAX2gYXWSo9G1KVfghPpIzI9j7hb5kqv36dBpU60OgcM+Y+Nr0H5vvIu6BeARdR" +
		"hw4r5GAEgN/Zi30yXukistLgG4D2dYVO0lHj81U4ViPcd/5U3loLxd8hu7oqSemVNWOCVoCUMKcZbSbV/73pgjKnhQ==",
}

const (
	fpD = "ee:5b:2b:4d:fe:4b:59:aa:d9:07:81:c3:09:19:db:db:3e:5f:5d:b8:ce:2c:9a:2c:dc:cd:58:0d:45:1f:a3:6b"
	fpR = "c4:72:be:97:71:1c:f5:d9:ba:9c:98:fe:b2:a5:68:16:26:a8:08:94:04:91:fe:b5:1c:42:cc:bd:7d:0d:4f:3a"
	fpA = "ff:19:95:64:2c:10:24:9e:6b:e9:f3:1a:4d:31:a2:75:76:14:2a:7b:e4:e3:85:56:44:0e:b7:bc:b7:8b:0e:e1"
)

// hashed is ssh-keygen's hashed host name, whose salt differs every run:
// returns are compared with it as |1|*.
var hashed = regexp.MustCompile(`\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+`)

// norm expands {a}… and {dir} in what Salt's returns were written with,
// and hides hashed names in what brine returned.
func norm(v any, x func(string) string) any {
	switch t := v.(type) {
	case string:
		return hashed.ReplaceAllString(x(t), "|1|*")
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = norm(e, x)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out[k] = norm(e, x)
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

func entry(host, enc, key string) map[string]any {
	return map[string]any{"hostname": host, "enc": enc, "key": key}
}

func stored(enc, key, fp string) map[string]any {
	return map[string]any{"hostname": "|1|*", "enc": enc, "key": key, "fingerprint": fp}
}

// TestKnownHosts runs the SLS Salt 3006.6 was run on (salt-call --local,
// no user, files in a temporary directory) three times, test mode first,
// and holds Salt's returns and, through ssh-keygen -F, the file it left.
func TestKnownHosts(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is needed (apt-get install openssh-client): Salt's ssh module runs it")
	}
	dir := t.TempDir()
	pairs := []string{"{dir}", dir}
	for k, v := range keys {
		pairs = append(pairs, "{"+k+"}", v)
	}
	x := strings.NewReplacer(pairs...).Replace
	kh := filepath.Join(dir, "kh")
	if err := os.WriteFile(kh, []byte(x("old.example ssh-ed25519 {a}\nother.example ssh-rsa {r}\n"+
		"change.example ssh-ed25519 {d}\nchange.example ssh-rsa {r}\n")), 0o640); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(&modules.Env{})); err != nil {
		t.Fatal(err)
	}
	ed := "ssh-ed25519"
	sls := []struct {
		id, fun string
		kwargs  map[string]any
	}{
		{"added", "ssh_known_hosts.present", map[string]any{"name": "new.example", "key": "{b}", "enc": ed, "config": "{dir}/kh"}},
		{"exists", "ssh_known_hosts.present", map[string]any{"name": "old.example", "key": "{a}", "enc": ed, "config": "{dir}/kh"}},
		{"changed", "ssh_known_hosts.present", map[string]any{"name": "change.example", "key": "{c}", "enc": ed, "config": "{dir}/kh"}},
		{"byfp", "ssh_known_hosts.present", map[string]any{"name": "old.example", "fingerprint": fpA, "config": "{dir}/kh"}},
		{"port", "ssh_known_hosts.present", map[string]any{"name": "plain.example", "key": "{d}", "enc": ed, "port": int64(2222),
			"hash_known_hosts": false, "config": "{dir}/kh"}},
		{"porthash", "ssh_known_hosts.present", map[string]any{"name": "plain.example", "key": "{d}", "enc": ed,
			"port": int64(2222), "config": "{dir}/kh"}},
		{"both", "ssh_known_hosts.present", map[string]any{"name": "both.example", "key": "{d}", "fingerprint": "aa:bb",
			"enc": ed, "config": "{dir}/kh"}},
		{"noenc", "ssh_known_hosts.present", map[string]any{"name": "noenc.example", "key": "{d}", "config": "{dir}/kh2"}},
		{"relative", "ssh_known_hosts.present", map[string]any{"name": "rel.example", "key": "{d}", "enc": ed, "config": "relative/kh"}},
		{"removed", "ssh_known_hosts.absent", map[string]any{"name": "other.example", "config": "{dir}/kh"}},
		{"absent", "ssh_known_hosts.absent", map[string]any{"name": "nothere.example", "config": "{dir}/kh"}},
		{"newfile", "ssh_known_hosts.present", map[string]any{"name": "fresh.example", "key": "{e}", "enc": ed,
			"hash_known_hosts": false, "config": "{dir}/khdir/sub/kh"}},
	}
	portMsg := "argument port can not be used in conjunction with argument hash_known_hosts"
	relMsg := `If not specifying a "user", specify an absolute "config".`
	noenc := map[string]any{"old": nil, "new": []any{map[string]any{"hostname": "noenc.example", "enc": nil, "key": "{d}"}}}
	runs := []struct {
		test  bool
		wants []want
	}{
		{true, []want{
			{nil, "Key for new.example is set to be added to {dir}/kh", nil},
			{true, "Host old.example is already in {dir}/kh", nil},
			{nil, "Key for change.example is set to be updated in {dir}/kh", nil},
			{true, "Host old.example is already in {dir}/kh", nil},
			{nil, "Key for plain.example is set to be added to {dir}/kh", nil},
			{nil, "Key for plain.example is set to be added to {dir}/kh", nil},
			{false, `Specify either "key" or "fingerprint", not both.`, nil},
			{false, `Required argument "enc" if using "key" argument.`, nil},
			{false, relMsg, nil},
			{nil, "Key for other.example is set to be removed from {dir}/kh", nil},
			{true, "Host is already absent", nil},
			{nil, "Key for fresh.example is set to be added to {dir}/khdir/sub/kh", nil},
		}},
		{false, []want{
			{true, "new.example's key saved to {dir}/kh (key: {b})",
				map[string]any{"old": nil, "new": []any{entry("new.example", ed, "{b}")}}},
			{true, "old.example already exists in {dir}/kh", nil},
			{true, "change.example's key saved to {dir}/kh (key: {c})", map[string]any{
				"old": []any{stored(ed, "{d}", fpD), stored("ssh-rsa", "{r}", fpR)},
				"new": []any{entry("change.example", ed, "{c}")}}},
			{true, "old.example already exists in {dir}/kh", nil},
			{true, "plain.example's key saved to {dir}/kh (key: {d})", map[string]any{"old": nil, "new": []any{
				map[string]any{"hostname": "plain.example", "enc": ed, "key": "{d}", "port": int64(2222)}}}},
			{false, portMsg, nil},
			{true, "both.example's key saved to {dir}/kh (key: {d})",
				map[string]any{"old": nil, "new": []any{entry("both.example", ed, "{d}")}}},
			{true, "noenc.example's key saved to {dir}/kh2 (key: {d})", noenc},
			{false, relMsg, nil},
			{true, "# Host other.example found: line 2\n{dir}/kh updated.\nOriginal contents retained as {dir}/kh.old",
				map[string]any{"old": []any{stored("ssh-rsa", "{r}", fpR)}, "new": nil}},
			{true, "Host is already absent", nil},
			{true, "fresh.example's key saved to {dir}/khdir/sub/kh (key: {e})",
				map[string]any{"old": nil, "new": []any{entry("fresh.example", ed, "{e}")}}},
		}},
		{false, []want{
			{true, "new.example already exists in {dir}/kh", nil},
			{true, "old.example already exists in {dir}/kh", nil},
			{true, "change.example already exists in {dir}/kh", nil},
			{true, "old.example already exists in {dir}/kh", nil},
			{true, "plain.example already exists in {dir}/kh", nil},
			{false, portMsg, nil},
			{true, "both.example's key saved to {dir}/kh (key: {d})", map[string]any{
				"old": []any{stored(ed, "{d}", fpD)}, "new": []any{entry("both.example", ed, "{d}")}}},
			{true, "noenc.example's key saved to {dir}/kh2 (key: {d})", noenc},
			{false, relMsg, nil},
			{true, "Host is already absent", nil},
			{true, "Host is already absent", nil},
			{true, "fresh.example already exists in {dir}/khdir/sub/kh", nil},
		}},
	}
	for n, run := range runs {
		for i, c := range sls {
			ctx := state.With(context.Background(), &state.Running{Test: run.test, ID: c.id})
			out, err := reg.Call(ctx, c.fun, nil, norm(c.kwargs, x).(map[string]any), nil)
			if err != nil {
				t.Fatal(err)
			}
			r, w := out.(state.Result), run.wants[i]
			got, wc := norm(map[string]any(r.Changes), x), norm(w.changes, x)
			if state.Value(r.Result) != w.result || r.Comment != x(w.comment) ||
				!(reflect.DeepEqual(got, wc) || len(r.Changes) == 0 && len(w.changes) == 0) {
				t.Errorf("run %d, %s: got %v %q %#v\nwant %v %q %#v", n+1, c.id, state.Value(r.Result), r.Comment, got,
					w.result, x(w.comment), wc)
			}
		}
	}
	// The file Salt left: every name hashed, in this order of keys, each
	// host found by ssh-keygen -F with its key.
	b, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		got = append(got, hashed.ReplaceAllString(l, "|1|*"))
	}
	wantLines := []string{"|1|* ssh-ed25519 {a}", "|1|* ssh-rsa {r}", "|1|* ssh-ed25519 {b}", "|1|* ssh-ed25519 {c}",
		"|1|* ssh-ed25519 {d}", "|1|* ssh-ed25519 {d}"}
	for i := range wantLines {
		wantLines[i] = x(wantLines[i])
	}
	if !reflect.DeepEqual(got, wantLines) {
		t.Errorf("known_hosts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	for host, key := range map[string]string{"old.example": "a", "new.example": "b", "change.example": "c",
		"[plain.example]:2222": "d", "both.example": "d"} {
		out, _ := exec.Command("ssh-keygen", "-F", host, "-f", kh).Output()
		if !strings.Contains(string(out), keys[key]) {
			t.Errorf("ssh-keygen -F %s:\n%s\nwant key %s", host, out, key)
		}
	}
	if out, _ := exec.Command("ssh-keygen", "-F", "other.example", "-f", kh).Output(); len(out) != 0 {
		t.Errorf("other.example still known:\n%s", out)
	}
	for name, body := range map[string]string{"kh2": "noenc.example None {d}\nnoenc.example None {d}\n",
		"khdir/sub/kh": "fresh.example ssh-ed25519 {e}\n"} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if string(b) != x(body) {
			t.Errorf("%s %q, want %q", name, b, x(body))
		}
	}
	for name, mode := range map[string]os.FileMode{"kh": 0o640, "kh2": 0o600, "khdir/sub/kh": 0o600} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode() != mode {
			t.Errorf("%s: mode %v, %v; want %v (Salt's)", name, st.Mode(), err, mode)
		}
	}
}
