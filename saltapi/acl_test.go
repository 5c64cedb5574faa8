package saltapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/saltpeer"
)

// fleet is the targeting both brine's checks and Salt's CkMinions see in
// these tests: "<tgt_type>:<expr>" (a list target joined with ',') to the
// ids it selects, of web1, web2 (role web) and db1 (role db).
var fleet = map[string][]string{
	"glob:*":                     {"web1", "web2", "db1"},
	"glob:web*":                  {"web1", "web2"},
	"glob:web1":                  {"web1"},
	"glob:db1":                   {"db1"},
	"glob:nomatch":               {},
	"list:web1,db1":              {"web1", "db1"},
	"list:web1,web2":             {"web1", "web2"},
	"grain:role:web":             {"web1", "web2"},
	"compound:*":                 {"web1", "web2", "db1"},
	"compound:web*":              {"web1", "web2"},
	"compound:web1":              {"web1"},
	"compound:db*":               {"db1"},
	"compound:G@role:db":         {"db1"},
	"compound:G@role:web":        {"web1", "web2"},
	"compound:L@web1,web2":       {"web1", "web2"},
	"compound:web* or db1":       {"web1", "web2", "db1"},
	"compound:web* and not web2": {"web1"},
}

type fakeTargets map[string][]string

func (f fakeTargets) Minions(_ context.Context, tgt any, tgtType string) ([]string, error) {
	if tgtType == "broken" {
		return nil, errors.New("no such target type")
	}
	return f[targetKey(tgt, tgtType)], nil
}

func targetKey(tgt any, tgtType string) string {
	if l, ok := tgt.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return tgtType + ":" + strings.Join(parts, ",")
	}
	return fmt.Sprintf("%s:%v", tgtType, tgt)
}

// aclCase is one check, run through brine and (in the differential test)
// through Salt's CkMinions; want is the verdict both must give.
type aclCase struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // local, runner, wheel
	Perms   any    `json:"perms"`
	Funs    any    `json:"funs,omitempty"`
	Fun     string `json:"fun,omitempty"`
	Args    any    `json:"args"`
	Tgt     any    `json:"tgt,omitempty"`
	TgtType string `json:"tgt_type,omitempty"`
	Want    bool   `json:"-"`
}

type (
	L = []any
	D = map[string]any
)

var kw = func(kv ...any) D {
	d := D{"__kwarg__": true}
	for i := 0; i < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1]
	}
	return d
}

func local(name string, perms L, funs, args, tgt any, tgtType string, want bool) aclCase {
	return aclCase{Name: name, Kind: "local", Perms: perms, Funs: funs, Args: args, Tgt: tgt, TgtType: tgtType, Want: want}
}

func spec(name, kind string, perms L, fun string, args any, want bool) aclCase {
	return aclCase{Name: name, Kind: kind, Perms: perms, Fun: fun, Args: args, Want: want}
}

var webACL = L{D{"web*": L{"test.*", "state.*"}}}

var aclCases = []aclCase{
	// Function expressions: Python's re.match, anchored at the start only.
	local("all", L{".*"}, "test.ping", L{}, "*", "glob", true),
	local("module glob", L{"test.*"}, "test.ping", L{}, "*", "glob", true),
	local("other module", L{"test.*"}, "cmd.run", L{}, "*", "glob", false),
	local("prefix match", L{"test.ping"}, "test.pingx", L{}, "*", "glob", true),
	local("dollar anchors", L{"test.ping$"}, "test.pingx", L{}, "*", "glob", false),
	local("backslash Z anchors", L{`test\.ping\Z`}, "test.pingx", L{}, "*", "glob", false),
	local("backslash Z matches", L{`test\.ping\Z`}, "test.ping", L{}, "*", "glob", true),
	local("dot is any", L{"test.ping"}, "testXping", L{}, "*", "glob", true),
	local("case sensitive", L{"TEST.*"}, "test.ping", L{}, "*", "glob", false),
	local("alternation anchored", L{"foo|test"}, "xtest.ping", L{}, "*", "glob", false),
	local("alternation second", L{"cmd.run|test.ping"}, "test.ping", L{}, "*", "glob", true),
	local("invalid regex skipped", L{"(", "test.*"}, "test.ping", L{}, "*", "glob", true),
	local("invalid regex alone", L{"("}, "test.ping", L{}, "*", "glob", false),
	local("no perms", L{}, "test.ping", L{}, "*", "glob", false),
	local("runner perm is no function", L{"@runner"}, "test.ping", L{}, "*", "glob", false),
	local("non-string perm skipped", L{5, "test.*"}, "test.ping", L{}, "*", "glob", true),

	// Per-target entries: every targeted minion must be one the entry selects.
	local("target inside", webACL, "state.apply", L{}, "web*", "glob", true),
	local("target wider", webACL, "state.apply", L{}, "*", "glob", false),
	local("target one", webACL, "test.ping", L{}, "web1", "glob", true),
	local("target list mixed", webACL, "test.ping", L{"web1", "db1"}, L{"web1", "db1"}, "list", false),
	local("target list inside", webACL, "test.ping", L{}, L{"web1", "web2"}, "list", true),
	local("target by grain", webACL, "test.ping", L{}, "role:web", "grain", true),
	local("target fun refused", webACL, "cmd.run", L{"ls"}, "web1", "glob", false),
	local("grain compound entry", L{D{"G@role:db": L{"cmd.*"}}}, "cmd.run", L{"ls"}, "db1", "glob", true),
	local("grain compound entry refuses web", L{D{"G@role:db": L{"cmd.*"}}}, "cmd.run", L{"ls"}, "web1", "glob", false),
	local("compound entry and not", L{D{"web* and not web2": L{"cmd.*"}}}, "cmd.run", L{}, "web1", "glob", true),
	local("compound entry or", L{D{"web* or db1": L{"cmd.*"}}}, "cmd.run", L{}, "*", "glob", true),
	local("empty target passes", webACL, "state.apply", L{}, "nomatch", "glob", true),
	local("two-key dict ignored", L{D{"web*": L{"test.*"}, "db*": L{"test.*"}}}, "test.ping", L{}, "web1", "glob", false),
	local("entry value a string", L{D{"web*": "test.*"}}, "test.ping", L{}, "web1", "glob", true),
	local("string then dict", L{"grains.*", D{"db*": L{"cmd.run"}}}, "cmd.run", L{}, "db1", "glob", true),

	// Compound calls: one allowed function is enough in Salt.
	local("compound any allowed", L{"test.*"}, L{"test.ping", "cmd.run"}, L{L{}, L{}}, "*", "glob", true),
	local("compound none allowed", L{D{"web*": L{"cmd.*"}}}, L{"test.ping", "grains.items"}, L{L{}, L{}}, "web1", "glob", false),
	local("compound second allowed", L{D{"web*": L{"cmd.*"}}}, L{"test.ping", "cmd.run"}, L{L{}, L{"ls"}}, "web1", "glob", true),
	local("compound without args raises", L{D{"*": L{"test.*"}}, "cmd.*"}, L{"test.ping"}, nil, "*", "glob", false),
	local("compound without args string first", L{"test.*", D{"*": L{"test.*"}}}, L{"test.ping"}, nil, "*", "glob", true),

	// Argument restrictions.
	local("args match", L{D{"*": L{D{"cmd.run": D{"args": L{"ls.*"}}}}}}, "cmd.run", L{"ls -l"}, "*", "glob", true),
	local("args refuse", L{D{"*": L{D{"cmd.run": D{"args": L{"ls.*"}}}}}}, "cmd.run", L{"rm -rf /"}, "*", "glob", false),
	local("args missing", L{D{"*": L{D{"cmd.run": D{"args": L{"ls.*"}}}}}}, "cmd.run", L{}, "*", "glob", false),
	local("args prefix only", L{D{"*": L{D{"cmd.run": D{"args": L{"ls"}}}}}}, "cmd.run", L{"ls; rm -rf /"}, "*", "glob", true),
	local("args none is any", L{D{"*": L{D{"pkg.install": D{"args": L{nil, "b"}}}}}}, "pkg.install", L{"x", "b"}, "*", "glob", true),
	local("args int", L{D{"*": L{D{"test.arg": D{"args": L{"5$"}}}}}}, "test.arg", L{5}, "*", "glob", true),
	local("args bool", L{D{"*": L{D{"test.arg": D{"args": L{"True$"}}}}}}, "test.arg", L{true}, "*", "glob", true),
	local("args list repr", L{D{"*": L{D{"test.arg": D{"args": L{`\['a', 'b'\]`}}}}}}, "test.arg", L{L{"a", "b"}}, "*", "glob", true),
	local("args null repr", L{D{"*": L{D{"test.arg": D{"args": L{"None"}}}}}}, "test.arg", L{nil}, "*", "glob", true),
	local("args alternatives", L{D{"*": L{D{"cmd.run": L{D{"args": L{"ls"}}, D{"args": L{"pwd"}}}}}}}, "cmd.run", L{"pwd"}, "*", "glob", true),
	local("args none condition raises", L{D{"*": L{D{"cmd.run": D{"args": nil}}}}}, "cmd.run", L{"ls"}, "*", "glob", false),
	local("args fun regex", L{D{"*": L{D{"cmd.*": D{"args": L{"ls"}}}}}}, "cmd.run", L{"ls"}, "*", "glob", true),
	local("kwargs match", L{D{"*": L{D{"state.apply": D{"kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web", kw("test", true)}, "*", "glob", true),
	local("kwargs refuse", L{D{"*": L{D{"state.apply": D{"kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web", kw("test", false)}, "*", "glob", false),
	local("kwargs missing", L{D{"*": L{D{"state.apply": D{"kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web"}, "*", "glob", false),
	local("kwargs without marker", L{D{"*": L{D{"state.apply": D{"kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web", D{"test": true}}, "*", "glob", false),
	local("kwargs none is any", L{D{"*": L{D{"state.apply": D{"kwargs": D{"pillar": nil}}}}}}, "state.apply", L{kw("pillar", D{"a": 1})}, "*", "glob", true),
	local("args and kwargs", L{D{"web*": L{D{"state.apply": D{"args": L{"web$"}, "kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web", kw("test", true)}, "web2", "glob", true),
	local("args and kwargs wrong target", L{D{"web*": L{D{"state.apply": D{"args": L{"web$"}, "kwargs": D{"test": "True"}}}}}}, "state.apply", L{"web", kw("test", true)}, "db1", "glob", false),
	local("kwarg marker only", L{D{"*": L{D{"test.arg": D{"args": L{"a"}}}}}}, "test.arg", L{"a", kw()}, "*", "glob", true),

	// Runner and wheel: spec_check.
	spec("runner all", "runner", L{"@runner"}, "jobs.list_jobs", D{}, true),
	spec("runners plural", "runner", L{"@runners"}, "manage.up", D{}, true),
	spec("jobs module", "runner", L{"@jobs"}, "jobs.lookup_jid", D{"kwarg": D{"jid": "1"}}, true),
	spec("jobs module refuses manage", "runner", L{"@jobs"}, "manage.up", D{}, false),
	spec("wheel perm is no runner", "runner", L{"@wheel"}, "jobs.list_jobs", D{}, false),
	spec("runner regex without at", "runner", L{".*"}, "jobs.list_jobs", D{}, false),
	spec("runner dict", "runner", L{D{"@runner": L{"jobs.*"}}}, "jobs.list_jobs", D{}, true),
	spec("runner dict refuses", "runner", L{D{"@runner": L{"jobs.*"}}}, "manage.up", D{}, false),
	spec("module dict", "runner", L{D{"@jobs": L{"list_jobs"}}}, "jobs.list_jobs", D{}, true),
	spec("module dict refuses", "runner", L{D{"@jobs": L{"list_jobs"}}}, "jobs.lookup_jid", D{}, false),
	spec("runner kwargs", "runner", L{D{"@runner": L{D{"jobs.lookup_jid": D{"kwargs": D{"jid": "2026.*"}}}}}}, "jobs.lookup_jid", D{"kwarg": D{"jid": "20261128"}}, true),
	spec("runner kwargs refuse", "runner", L{D{"@runner": L{D{"jobs.lookup_jid": D{"kwargs": D{"jid": "2026.*"}}}}}}, "jobs.lookup_jid", D{"kwarg": D{"jid": "1999"}}, false),
	spec("runner args", "runner", L{D{"@runner": L{D{"manage.*": D{"args": L{"up"}}}}}}, "manage.status", D{"arg": L{"up"}}, true),
	spec("runner no dot", "runner", L{"@runner"}, "jobs", D{}, false),
	spec("runner two dots", "runner", L{"@runner"}, "a.b.c", D{}, false),
	spec("runner no perms", "runner", L{}, "jobs.list_jobs", D{}, false),
	spec("runner dict without args raises", "runner", L{D{"@runner": L{"jobs.*"}}}, "jobs.list_jobs", nil, false),
	spec("runner empty perm raises", "runner", L{"", "@runner"}, "jobs.list_jobs", D{}, false),
	spec("runner two-key dict", "runner", L{D{"@runner": L{".*"}, "@wheel": L{".*"}}}, "jobs.list_jobs", D{}, false),
	spec("wheel all", "wheel", L{"@wheel"}, "key.list_all", D{}, true),
	spec("wheel module", "wheel", L{"@key"}, "key.accept", D{"kwarg": D{"match": "web1"}}, true),
	spec("wheel dict", "wheel", L{D{"@wheel": L{"key.list_.*"}}}, "key.list_all", D{}, true),
	spec("wheel dict refuses", "wheel", L{D{"@wheel": L{"key.list_.*"}}}, "key.delete", D{}, false),
	spec("runner perm is no wheel", "wheel", L{"@runner"}, "key.list_all", D{}, false),
	spec("wheel key args", "wheel", L{D{"@key": L{D{"accept": D{"kwargs": D{"match": "web.*"}}}}}}, "key.accept", D{"kwarg": D{"match": "web1"}}, true),
	spec("wheel key args refuse", "wheel", L{D{"@key": L{D{"accept": D{"kwargs": D{"match": "web.*"}}}}}}, "key.accept", D{"kwarg": D{"match": "db1"}}, false),
}

// roundTrip gives the checks what a salt-api request gives them: values
// decoded from JSON.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Decoded as salt-api's bodies are (api.ParseBody): integers stay
	// integers.
	out, err := api.ParseBody("application/json", b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runBrine(t *testing.T, c aclCase) bool {
	t.Helper()
	perms, _ := roundTrip(t, c.Perms).([]any)
	args := roundTrip(t, c.Args)
	switch c.Kind {
	case "local":
		ok, err := CheckLocal(context.Background(), perms, fakeTargets(fleet), roundTrip(t, c.Funs), args, roundTrip(t, c.Tgt), c.TgtType)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		return ok
	case "runner":
		return CheckRunner(perms, c.Fun, args)
	case "wheel":
		return CheckWheel(perms, c.Fun, args)
	}
	t.Fatalf("%s: unknown kind %s", c.Name, c.Kind)
	return false
}

func TestACL(t *testing.T) {
	for _, c := range aclCases {
		if got := runBrine(t, c); got != c.Want {
			t.Errorf("%s (%s %s): got %v, want %v", c.Name, c.Kind, py.ReprValue(roundTrip(t, c.Perms)), got, c.Want)
		}
	}
}

func TestACLTargetingError(t *testing.T) {
	_, err := CheckLocal(context.Background(), webACL, fakeTargets(fleet), "test.ping", L{}, "x", "broken")
	if err == nil || !strings.Contains(err.Error(), "no such target type") {
		t.Fatalf("want the targeting error, got %v", err)
	}
	// A string ACL allows without targeting.
	ok, err := CheckLocal(context.Background(), L{"test.*"}, fakeTargets(fleet), "test.ping", L{}, "x", "broken")
	if !ok || err != nil {
		t.Fatalf("got %v, %v", ok, err)
	}
}

// TestACLBeyondRE2 shows where brine and Salt part: a Python expression
// Go's RE2 cannot compile (a look-ahead) matches nothing in brine.
func TestACLBeyondRE2(t *testing.T) {
	ok, err := CheckLocal(context.Background(), L{`test\.(?!ping)`}, fakeTargets(fleet), "test.echo", L{}, "*", "glob")
	if ok || err != nil {
		t.Fatalf("got %v, %v: a look-ahead should match nothing", ok, err)
	}
}

func TestPyRepr(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "None"}, {true, "True"}, {int64(5), "5"}, {5.0, "5.0"}, {1.5, "1.5"}, {1e16, "1e+16"}, {1e-5, "1e-05"},
		{"a'b", `"a'b"`}, {"a\nb", `'a\nb'`}, {L{"a", int64(1), nil}, "['a', 1, None]"},
		{D{"b": L{}, "a": "x"}, "{'a': 'x', 'b': []}"},
	} {
		if got := py.ReprValue(c.in); got != c.want {
			t.Errorf("py.ReprValue(%#v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// oracle runs testdata/acl/oracle.py on Salt 3006.6 with req on stdin and
// decodes its verdicts. Without Debian's python3 or a Salt tree the test
// fails, saying which is missing.
func oracle(t *testing.T, req any) []map[string]any {
	t.Helper()
	if _, err := os.Stat(saltpeer.Python); err != nil {
		t.Fatalf("the differential test needs %s to run Salt 3006.6: %v", saltpeer.Python, err)
	}
	tree, err := saltpeer.Find()
	if err != nil {
		t.Fatalf("the differential test needs Salt 3006.6's tree: %v", err)
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "acl", "oracle.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(saltpeer.Python, "-W", "ignore", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+tree+":"+filepath.Join(tree, "shim"), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle.py: %v\n%s", err, stderr.String())
	}
	var verdicts []map[string]any
	if err := json.Unmarshal(out, &verdicts); err != nil {
		t.Fatalf("oracle.py's output: %v\n%s", err, out)
	}
	return verdicts
}

// TestACLAgainstSalt runs every case through Salt's CkMinions (auth_check,
// spec_check) on the same fleet and holds brine to its verdicts.
func TestACLAgainstSalt(t *testing.T) {
	var cases []any
	for _, c := range aclCases {
		cases = append(cases, c)
	}
	// fill_auth_list: which ACL a user gets.
	fillACL := D{"gene": L{".*"}, "web.*": L{"test.*"}, "w?b[0-9]": L{"state.*"}, "*": L{"grains.items"}, "ops%": L{"cmd.*"}}
	fillNames := []string{"gene", "webadmin", "wab7", "dean", "ops", "web.*", "*", "w?b[0-9]"}
	for _, n := range fillNames {
		cases = append(cases, D{"kind": "fill", "acl": fillACL, "name": n})
	}
	verdicts := oracle(t, D{"targets": fleet, "cases": cases})
	if len(verdicts) != len(cases) {
		t.Fatalf("oracle.py gave %d verdicts for %d cases", len(verdicts), len(cases))
	}
	agree := 0
	for i, c := range aclCases {
		salt := verdicts[i]["ok"] == true
		brine := runBrine(t, c)
		if salt != brine {
			t.Errorf("%s: Salt says %v (%v), brine %v", c.Name, salt, verdicts[i], brine)
			continue
		}
		if salt != c.Want {
			t.Errorf("%s: Salt and brine say %v, the table %v", c.Name, salt, c.Want)
			continue
		}
		agree++
	}
	e := &EAuth{backends: map[string]*fileEAuth{"file": {acl: map[string][]any{}}}}
	for k, v := range roundTrip(t, fillACL).(map[string]any) {
		e.backends["file"].acl[k] = v.([]any)
	}
	for j, n := range fillNames {
		v := verdicts[len(aclCases)+j]
		want := reprSorted(v["list"].([]any))
		got := reprSorted(e.AuthList("file", n))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("AuthList(%s) = %v, Salt's fill_auth_list %v", n, got, want)
			continue
		}
		agree++
	}
	t.Logf("%d of %d cases agree with Salt 3006.6", agree, len(cases))
}

func reprSorted(l []any) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = py.ReprValue(x)
	}
	sort.Strings(out)
	return out
}
