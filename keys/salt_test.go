package keys

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
)

// TestRSAKeyLifecycle: a salt-minion's RSA key goes through the store as a
// brine agent's does (pending, accepted, denied beside, rejected, deleted),
// compared as Salt compares it and fingerprinted as salt-key -F does.
func TestRSAKeyLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	ctx := testCtx(t)
	pub := saltPub(t)
	seen := 0
	steps := []struct {
		name  string
		do    func() (Result, error)
		state State // the record's state after
		act   string
		allow bool
	}{
		{"new key, sent with crlf", hello(e, "salt1", crlf(pub)), Pending, ActPend, false},
		{"again, sent as written", hello(e, "salt1", pub+"\n"), Pending, ActPend, false},
		{"accept", action(func() (Listing, error) { return e.s.Accept(ctx, "salt1", false, false) }), Accepted, "", false},
		{"accepted key", hello(e, "salt1", pub), Accepted, ActAccept, true},
		{"another rsa key", hello(e, "salt1", newRSAPub(t)), Accepted, ActDenied, false},
		{"a curve key for the id", hello(e, "salt1", newPub(t)), Accepted, ActDenied, false},
		{"reject", action(func() (Listing, error) { return e.s.Reject(ctx, "salt1", true, false) }), Rejected, "", false},
		{"rejected key", hello(e, "salt1", pub), Rejected, ActReject, false},
	}
	for _, st := range steps {
		r, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.act != "" && (r.Act != st.act || r.Allowed != st.allow) {
			t.Errorf("%s: %+v, want act %s allowed %v", st.name, r, st.act, st.allow)
		}
		k := e.get(t, "salt1")
		if k.State != st.state || k.Pub != pub {
			t.Errorf("%s: record %s %q, want %s and Salt's key as written", st.name, k.State, k.Pub, st.state)
		}
	}
	if k := e.get(t, "salt1"); len(k.Denied) != 2 || Kind(k.Denied[0]) != KindRSA || Kind(k.Denied[1]) != KindCurve {
		t.Errorf("denied %q, want the other RSA key and the curve key", k.Denied)
	}
	fp, err := e.s.Finger(ctx, "salt1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fp[ListRejected]["salt1"]; got != saltFinger {
		t.Errorf("finger %v, want Salt's %s", got, saltFinger)
	}
	if got, _ := fp[ListDenied]["salt1"].([]string); len(got) != 2 {
		t.Errorf("denied fingers %v", fp[ListDenied])
	}
	pr, err := e.s.Print(ctx, "salt1")
	if err != nil || pr[ListRejected]["salt1"] != pub {
		t.Errorf("print %v, %v", pr, err)
	}
	if _, err := e.s.Delete(ctx, "salt1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Get(ctx, "salt1"); err == nil {
		t.Error("deleted key is still there")
	}
	want := []string{
		"salt/auth pend salt1 true", "salt/key accept salt1 true", "salt/auth accept salt1 true",
		"salt/auth denied salt1 false", "salt/auth denied salt1 false", "salt/key reject salt1 true",
		"salt/auth reject salt1 false", "salt/key delete salt1 true", "salt/key delete salt1 true",
	}
	if got := e.events(&seen); !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	if err := e.s.AcceptKey(ctx, "salt2", crlf(pub)); err != nil {
		t.Fatal(err)
	}
	if k := e.get(t, "salt2"); k.State != Accepted || k.Pub != pub {
		t.Errorf("AcceptKey: %+v", k)
	}
	if err := e.s.AcceptKey(ctx, "salt3", readTestdata(t, "salt-minion.pem")); err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("AcceptKey(private key) = %v", err)
	}
}

// TestLocalKeys: the master's own keys are in key.finger's and key.print's
// local list when the match selects them, as salt-key's Local Keys.
func TestLocalKeys(t *testing.T) {
	pub := saltPub(t)
	e := newEnv(t, nil, WithLocal(LocalRSA, crlf(pub)), WithLocal("empty.pub", ""))
	e.hello(t, "web1", newPub(t), nil)
	reg := function.New()
	if err := reg.RegisterAll(e.s.Funcs()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fun, match string
		want       any // local's entry, nil: no local list
	}{
		{"key.finger", "*", saltFinger},
		{"key.finger", "master", saltFinger},
		{"key.finger", "master.*", saltFinger},
		{"key.finger", "web1,master.rsa.pub", saltFinger},
		{"key.finger", "web1", nil},
		{"key.print", "master", pub},
		{"key.print", "web*", nil},
	} {
		out, err := reg.Call(testCtx(t), tc.fun, []any{tc.match}, nil, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.fun, tc.match, err)
		}
		m := out.(map[string]map[string]any)
		local, ok := m[ListLocal]
		if tc.want == nil {
			if ok {
				t.Errorf("%s %s: local %v, want none", tc.fun, tc.match, local)
			}
			continue
		}
		if !reflect.DeepEqual(local, map[string]any{LocalRSA: tc.want}) {
			t.Errorf("%s %s: local %v, want %s: %v", tc.fun, tc.match, local, LocalRSA, tc.want)
		}
	}
}

// writePKI writes a Salt master's pki_dir: files by path under dir.
func writePKI(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if text == "<dir>" {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeFile(t, path, text)
	}
}

// TestImportSalt: a Salt master's pki_dir is read, bad files reported by
// path and the others recorded in their states; brine's own keys are kept,
// and a second import changes nothing.
func TestImportSalt(t *testing.T) {
	dir := t.TempDir()
	pub, other, third := saltPub(t), newRSAPub(t), newRSAPub(t)
	writePKI(t, dir, map[string]string{
		"master.pem":               readTestdata(t, "salt-minion.pem"), // the master's own: not a minion key
		"master.pub":               pub,
		"minions/web1":             pub,
		"minions/web4":             other,
		"minions/web5":             third,
		"minions/.web1.swp":        "junk",
		"minions/bad":              "not a key",
		"minions/web 6":            third,
		"minions/sub":              "<dir>",
		"minions_pre/web2":         crlf(other),
		"minions_rejected/web3":    third,
		"minions_denied/web1":      other,
		"minions_denied/orphan":    third,
		"minions_autosign/ignored": "x",
	})
	pki, skipped, err := ReadSaltPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, err := range skipped {
		bad = append(bad, err.Error())
	}
	for i, want := range []string{
		filepath.Join(dir, "minions", "bad") + ": invalid public key",
		filepath.Join(dir, "minions", "sub") + ": not a key file",
		filepath.Join(dir, "minions", "web 6") + ": not a minion id",
	} {
		if i >= len(bad) || !strings.HasPrefix(bad[i], want) {
			t.Errorf("skipped %q, want %q first", bad, want)
			break
		}
	}
	if len(bad) != 3 {
		t.Errorf("skipped %q, want 3", bad)
	}
	if pki.Len() != 7 || pki[ListPending]["web2"] != NormalizePub(other) {
		t.Errorf("read %d keys: %v", pki.Len(), pki)
	}

	e := newEnv(t, nil)
	ctx := testCtx(t)
	if err := e.s.AcceptKey(ctx, "web4", newPub(t)); err != nil { // brine's own agent web4
		t.Fatal(err)
	}
	if err := e.s.AcceptKey(ctx, "web5", third); err != nil { // already moved
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(e.s.Funcs()); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{}
	for list, ids := range pki {
		m := map[string]any{}
		for id, text := range ids {
			m[id] = text
		}
		args[list] = m
	}
	out, err := reg.Call(ctx, "key.import", nil, map[string]any{"keys": args}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(ImportResult)
	wantImported := Listing{ListAccepted: {"web1"}, ListPending: {"web2"}, ListRejected: {"web3"}, ListDenied: {"orphan", "web1"}}
	if !reflect.DeepEqual(res.Imported, wantImported) || !reflect.DeepEqual(res.Unchanged, Listing{ListAccepted: {"web5"}}) {
		t.Errorf("imported %v unchanged %v, want %v and web5", res.Imported, res.Unchanged, wantImported)
	}
	if len(res.Skipped) != 1 || !strings.HasPrefix(res.Skipped[0], "minions/web4: brine holds another key for web4 (accepted)") {
		t.Errorf("skipped %q", res.Skipped)
	}
	for id, want := range map[string]State{"web1": Accepted, "web2": Pending, "web3": Rejected, "web4": Accepted} {
		if k := e.get(t, id); k.State != want || id != "web4" && Kind(k.Pub) != KindRSA || id == "web4" && Kind(k.Pub) != KindCurve {
			t.Errorf("%s: %s %s key, want %s", id, k.State, Kind(k.Pub), want)
		}
	}
	if k := e.get(t, "web1"); !slices.Equal(k.Denied, []string{NormalizePub(other)}) {
		t.Errorf("web1 denied %q", k.Denied)
	}
	if r := e.hello(t, "web1", pub, nil); !r.Allowed {
		t.Errorf("imported accepted minion: %+v", r)
	}
	seen := 0
	if got := e.events(&seen); !reflect.DeepEqual(got, []string{"salt/auth accept web1 true"}) {
		t.Errorf("events %q: an import fires none", got)
	}
	again, err := e.s.Import(ctx, pki)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Imported) != 0 || len(again.Unchanged[ListAccepted]) != 2 || len(again.Skipped) != 1 {
		t.Errorf("second import %+v, want nothing new", again)
	}

	for _, tc := range []struct {
		keys map[string]any
		want string
	}{
		{map[string]any{"minions_x": map[string]any{}}, `no key list "minions_x"`},
		{map[string]any{ListAccepted: []any{"web1"}}, "want keys by minion id"},
	} {
		if _, err := reg.Call(ctx, "key.import", nil, map[string]any{"keys": tc.keys}, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("key.import %v = %v, want %q", tc.keys, err, tc.want)
		}
	}
	bogus, _ := e.s.Import(ctx, SaltPKI{ListPending: {"bad id": pub, "web9": "short"}})
	if len(bogus.Skipped) != 2 || len(bogus.Imported) != 0 {
		t.Errorf("bad ids and keys: %+v", bogus)
	}
	if _, _, err := ReadSaltPKI(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a Salt master's pki_dir") {
		t.Errorf("ReadSaltPKI(empty dir) = %v", err)
	}
}

func TestSaltPKIBatches(t *testing.T) {
	p := SaltPKI{ListDenied: {"a": "d"}, ListAccepted: {"b": "1", "a": "2"}, ListPending: {"c": "3"}}
	for _, tc := range []struct {
		n    int
		want []SaltPKI
	}{
		{10, []SaltPKI{p}},
		{2, []SaltPKI{{ListAccepted: {"a": "2", "b": "1"}}, {ListPending: {"c": "3"}, ListDenied: {"a": "d"}}}},
		{1, []SaltPKI{{ListAccepted: {"a": "2"}}, {ListAccepted: {"b": "1"}}, {ListPending: {"c": "3"}}, {ListDenied: {"a": "d"}}}},
	} {
		if got := p.Batches(tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Batches(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	if got := (SaltPKI{}).Batches(5); len(got) != 0 {
		t.Errorf("no keys: %v", got)
	}
}
