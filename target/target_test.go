package target

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// minions are the facts every table below matches against.
var minions = []Facts{
	{
		ID: "web1",
		Grains: map[string]any{
			"os": "Debian", "salt-cloud": map[string]any{"driver": "ec2"}, "roles": []any{"web", "lb"},
			"num_cpus": 4.0, "virtual": nil, "disks": []any{map[string]any{"sda": map[string]any{"size": 100.0}}},
			"ipv4": []any{"127.0.0.1", "10.0.0.5"}, "ipv6": []any{"::1", "fe80::1"},
		},
		Pillar: map[string]any{"role": "web", "tier": map[string]any{"name": "frontend"}},
	},
	{
		ID:     "web2.example.com",
		Grains: map[string]any{"os": "Debian", "roles": []any{"web"}, "ipv4": []any{"10.0.1.7"}},
		Pillar: map[string]any{"role": "web"},
	},
	{
		ID:     "db1",
		Grains: map[string]any{"os": "Ubuntu", "roles": []any{"db"}, "ipv4": []any{"192.168.1.10"}, "ipv6": []any{"2001:db8::10"}},
		Pillar: map[string]any{"role": "db:primary"},
	},
	{ID: "nopillar", Grains: map[string]any{"os": "CentOS"}},
}

var nodegroups = map[string]any{
	"webs":    "web*",
	"ids":     []any{"web1", "db1"},
	"idwords": "web1 db1",
	"re":      `web\d`,
	"deb":     "G@os:Debian and not E@web1",
	"nested":  "N@deb or db1",
	"twice":   "N@deb or N@deb",
	"cycleA":  "N@cycleB",
	"cycleB":  "N@cycleA or web1",
	"broken":  "web1 and",
	"missing": "N@nope",
	"number":  42,
	"orgroup": "db1 or web1",
	"exact":   "I@role:web",
}

// selected returns the ids of minions t selects.
func selected(t *Target) []string {
	var got []string
	for _, m := range minions {
		if t.Match(m) {
			got = append(got, m.ID)
		}
	}
	return got
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		tgt     any
		typ     string
		want    []string
		names   []string // Names(), nil when any id may match
		wantErr bool
	}{
		{"web*", "", []string{"web1", "web2.example.com"}, nil, false},
		{"web[!1]*", "glob", []string{"web2.example.com"}, nil, false},
		{"*", "glob", []string{"web1", "web2.example.com", "db1", "nopillar"}, nil, false},
		{"db1", "glob", []string{"db1"}, []string{"db1"}, false},
		{"db1,web1", "list", []string{"web1", "db1"}, []string{"db1", "web1"}, false},
		{[]any{"web2.example.com"}, "list", []string{"web2.example.com"}, []string{"web2.example.com"}, false},
		{[]string{"db1"}, "list", []string{"db1"}, []string{"db1"}, false},
		{nil, "list", nil, []string{}, false},
		{`web\d`, "pcre", []string{"web1", "web2.example.com"}, nil, false}, // re.match: anchored at the start only
		{`\d`, "pcre", nil, nil, false},
		{"salt-cloud:driver:ec*", "grain", []string{"web1"}, nil, false},
		{"roles:lb", "grain", []string{"web1"}, nil, false},
		{"os:Deb*", "grain", []string{"web1", "web2.example.com"}, nil, false},
		{"os", "grain", nil, nil, true},
		{"(", "pcre", nil, nil, true},
		{"x", "range", nil, nil, true},
		{42.0, "glob", nil, nil, true},
		{[]any{"a", 1}, "list", nil, nil, true},
		{"web1 or db1", "compound", []string{"web1", "db1"}, nil, false},
	} {
		tg, err := Parse(tc.tgt, tc.typ)
		if (err != nil) != tc.wantErr {
			t.Errorf("Parse(%v, %q) error = %v, want error %v", tc.tgt, tc.typ, err, tc.wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrTarget) {
				t.Errorf("Parse(%v, %q) error %v is not ErrTarget", tc.tgt, tc.typ, err)
			}
			continue
		}
		if got := selected(tg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%v, %q) selects %v, want %v", tc.tgt, tc.typ, got, tc.want)
		}
		names, only := tg.Names()
		if only != (tc.names != nil) || !reflect.DeepEqual(names, tc.names) {
			t.Errorf("Parse(%v, %q).Names() = %v, %v; want %v", tc.tgt, tc.typ, names, only, tc.names)
		}
	}
}

// TestParseWith covers every tgt_type with nodegroups and pillar data.
func TestParseWith(t *testing.T) {
	withPillar := Options{Nodegroups: nodegroups, Pillar: true}
	for _, tc := range []struct {
		tgt  any
		typ  string
		want []string
	}{
		// grain: subdict_match, case-insensitive, deepest key first.
		{"os:debian", "grain", []string{"web1", "web2.example.com"}},
		{"OS:Debian", "grain", nil}, // keys are not lowercased
		{"*:Ubuntu", "grain", []string{"db1"}},
		{"salt-cloud:driver", "grain", []string{"web1"}}, // a key of a mapping
		{"salt-cloud:*", "grain", []string{"web1"}},
		{"num_cpus:4", "grain", []string{"web1"}}, // Python's str(4), not 4.0
		{"virtual:none", "grain", []string{"web1"}},
		{"disks:sda:size:1??", "grain", []string{"web1"}}, // a mapping inside a list
		{"roles:0:web", "grain", []string{"web1", "web2.example.com"}},
		{"roles:-1:lb", "grain", []string{"web1"}},
		{"missing:*", "grain", nil},
		// grain_pcre: re.match on the lowercased value.
		{"os:(deb|ubu)", "grain_pcre", []string{"web1", "web2.example.com", "db1"}},
		{"os:ian", "grain_pcre", nil},
		{"os:.*IAN$", "grain_pcre", []string{"web1", "web2.example.com"}},
		{"roles:l.", "grain_pcre", []string{"web1"}},
		// pillar, pillar_pcre, pillar_exact.
		{"role:web", "pillar", []string{"web1", "web2.example.com"}},
		{"role:db:primary", "pillar", []string{"db1"}}, // a value with the delimiter in it
		{"role:db:*", "pillar", []string{"db1"}},
		{"tier:name:front*", "pillar", []string{"web1"}},
		{"role:d.*", "pillar_pcre", []string{"db1"}},
		{"role:web*", "pillar_exact", nil},
		{"role:WEB", "pillar_exact", []string{"web1", "web2.example.com"}},
		// ipcidr against the ipv4 and ipv6 grains.
		{"10.0.0.0/16", "ipcidr", []string{"web1", "web2.example.com"}},
		{"10.0.0.0/255.255.255.0", "ipcidr", []string{"web1"}},
		{"10.0.0.5", "ipcidr", []string{"web1"}},
		{"10.0.0.6", "ipcidr", nil},
		{"fe80::/10", "ipcidr", []string{"web1"}},
		{"2001:DB8::10", "ipcidr", []string{"db1"}},
		{"0.0.0.0/0", "ipcidr", []string{"web1", "web2.example.com", "db1"}},
		// nodegroup.
		{"webs", "nodegroup", []string{"web1", "web2.example.com"}},
		{"ids", "nodegroup", []string{"web1", "db1"}},
		{"idwords", "nodegroup", []string{"web1", "db1"}}, // no operator: L@web1,db1
		{"re", "nodegroup", []string{"web1", "web2.example.com"}},
		{"deb", "nodegroup", []string{"web2.example.com"}},
		{"nested", "nodegroup", []string{"web2.example.com", "db1"}},
		{"twice", "nodegroup", []string{"web2.example.com"}},
		{"exact", "nodegroup", []string{"web1", "web2.example.com"}},
		// compound: engines.
		{"G@os:Debian", "compound", []string{"web1", "web2.example.com"}},
		{"G|@salt-cloud|driver|ec2", "compound", []string{"web1"}},
		{"P@os:deb.*", "compound", []string{"web1", "web2.example.com"}},
		{"I@role:db*", "compound", []string{"db1"}},
		{"J@role:^w", "compound", []string{"web1", "web2.example.com"}},
		{"L@web1,db1 and S@10.0.0.0/8", "compound", []string{"web1"}},
		{"E@web(1|2)", "compound", []string{"web1", "web2.example.com"}},
		{"S@2001:db8::/32", "compound", []string{"db1"}},
		{"N@ids and not db1", "compound", []string{"web1"}},
		{"X@foo", "compound", nil}, // not an engine: a glob on the id
		{[]any{"G@os:Debian", "and", "web1"}, "compound", []string{"web1"}},
		{[]string{"G@os:Red Hat", "or", "db1"}, "compound", []string{"db1"}}, // a list's words may hold spaces
		// compound: precedence, as Python's: not > and > or.
		{"G@os:Debian or db1 and G@roles:web", "compound", []string{"web1", "web2.example.com"}},
		{"( G@os:Debian or db1 ) and G@roles:web", "compound", []string{"web1", "web2.example.com"}},
		{"( G@os:Debian or db1 ) and G@roles:lb", "compound", []string{"web1"}},
		{"db1 or web1 and G@os:Ubuntu", "compound", []string{"db1"}},
		{"( db1 or web1 ) and G@os:Debian", "compound", []string{"web1"}},
		{"not web1 or db1", "compound", []string{"web2.example.com", "db1", "nopillar"}},
		{"not ( web1 or db1 )", "compound", []string{"web2.example.com", "nopillar"}},
		{"not not web1", "compound", []string{"web1"}},
		{"web* not web1", "compound", []string{"web2.example.com"}}, // Salt's implicit and
		{"( web* ) not web1", "compound", []string{"web2.example.com"}},
		{"N@orgroup and G@os:Debian", "compound", []string{"web1"}}, // a nodegroup is one term
		// compound: parentheses attached to words.
		{"(web1 or db1)", "compound", []string{"web1", "db1"}},
		{"(G@os:Debian and not web1) or (L@db1)", "compound", []string{"web2.example.com", "db1"}},
		{"(E@web(1|2))", "compound", []string{"web1", "web2.example.com"}},
		{"((web1))", "compound", []string{"web1"}},
		{`E@db\)`, "compound", nil},
		// compound_pillar_exact: I@ and J@ compare whole values.
		{"I@role:web*", "compound_pillar_exact", nil},
		{"I@role:web", "compound_pillar_exact", []string{"web1", "web2.example.com"}},
		{"J@role:db:primary", "compound_pillar_exact", []string{"db1"}},
	} {
		tg, err := ParseWith(tc.tgt, tc.typ, withPillar)
		if err != nil {
			t.Errorf("ParseWith(%v, %q) error %v", tc.tgt, tc.typ, err)
			continue
		}
		if got := selected(tg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseWith(%v, %q) selects %v, want %v", tc.tgt, tc.typ, got, tc.want)
		}
		if names, only := tg.Names(); only {
			t.Errorf("ParseWith(%v, %q).Names() = %v, true; want false", tc.tgt, tc.typ, names)
		}
	}
}

func TestParseErrors(t *testing.T) {
	o := Options{Nodegroups: nodegroups}
	for _, tc := range []struct {
		tgt  any
		typ  string
		opts *Options
		want string // the error's text after "bad target: "
	}{
		{"G@os:Debian and or web*", "compound", nil, `compound target "G@os:Debian and or web*": position 17: unexpected "or"`},
		{"", "compound", nil, `compound target "": empty`},
		{"   ", "compound", nil, `compound target "   ": empty`},
		{"web1 web2", "compound", nil, `compound target "web1 web2": position 6: unexpected "web2"`},
		{"( web1", "compound", nil, `compound target "( web1": position 1: "(" is not closed`},
		{"(web1 or (db1)", "compound", nil, `compound target "(web1 or (db1)": position 1: "(" is not closed`},
		{"web1 )", "compound", nil, `compound target "web1 )": position 6: unexpected ")"`},
		{"web1)", "compound", nil, `compound target "web1)": position 5: unexpected ")"`},
		{"and web1", "compound", nil, `compound target "and web1": position 1: unexpected "and"`},
		{"( and web1 )", "compound", nil, `compound target "( and web1 )": position 3: unexpected "and"`},
		{"( )", "compound", nil, `compound target "( )": position 3: unexpected ")"`},
		{"wéb1 and", "compound", nil, `compound target "wéb1 and": position 9: a target is missing after "and"`},
		{"not", "compound", nil, `compound target "not": position 4: a target is missing after "not"`},
		{"web1 (db1)", "compound", nil, `compound target "web1 (db1)": position 6: unexpected "("`},
		{"R@%cluster", "compound", nil, `compound target "R@%cluster": position 1: range targets (R@%cluster) are not supported`},
		{"web1 or E@(", "compound", nil, "compound target \"web1 or E@(\": position 9: pcre \"(\": error parsing regexp: missing closing ): `^(?:()`"},
		{"G@os", "compound", nil, `compound target "G@os": position 1: a grain target is "key:value", got "os"`},
		{"S@10.0.0.1/8", "compound", nil, `compound target "S@10.0.0.1/8": position 1: ipcidr "10.0.0.1/8": has host bits set`},
		{"I@role:web", "compound", nil, `compound target "I@role:web": position 1: pillar targeting needs pillar data, which this master does not have yet`},
		{"role:web", "pillar", nil, `pillar targeting needs pillar data, which this master does not have yet`},
		{"role:web", "pillar_exact", nil, `pillar targeting needs pillar data, which this master does not have yet`},
		{"exact", "nodegroup", &o, `nodegroup "exact": position 1: pillar targeting needs pillar data, which this master does not have yet`},
		{[]any{"web1", 2}, "compound", nil, `compound target: word 1: want a string, got int`},
		{42, "compound", nil, `a compound target is a string or a list of words, got int`},
		{"N@webs", "compound", nil, `compound target "N@webs": position 1: unknown nodegroup "webs"`},
		{"nope", "nodegroup", &o, `unknown nodegroup "nope"`},
		{"number", "nodegroup", &o, `nodegroup "number" is neither a string nor a list, got int`},
		{"cycleA", "nodegroup", &o, `nodegroup "cycleA": position 1: nodegroup "cycleB": position 1: nodegroup "cycleA" includes itself (cycleA → cycleB → cycleA)`},
		{"broken", "nodegroup", &o, `nodegroup "broken": position 9: a target is missing after "and"`},
		{"missing", "nodegroup", &o, `nodegroup "missing": position 1: unknown nodegroup "nope"`},
		{"web1 and N@broken", "compound", &o, `compound target "web1 and N@broken": position 10: nodegroup "broken": position 9: a target is missing after "and"`},
		{"os:(", "grain_pcre", nil, "grain_pcre \"os:(\": regular expression \"(\": error parsing regexp: missing closing ): `(?i)^(?:()`"},
		{"bogus", "ipcidr", nil, `ipcidr "bogus": not an address or a network`},
		{"10.0.0.0/255.0.255.0", "ipcidr", nil, `ipcidr "10.0.0.0/255.0.255.0": bad netmask "255.0.255.0"`},
		{"x", "range", nil, `tgt_type "range" is not supported (glob, pcre, list, grain, grain_pcre, pillar, pillar_pcre, pillar_exact, ipcidr, nodegroup, compound, compound_pillar_exact)`},
		{strings.Repeat("( ", 300) + "web1" + strings.Repeat(" )", 300), "compound", nil, "position 401: nested more than 200 deep"},
		{strings.Repeat("not ", 300) + "web1", "compound", nil, "position 801: nested more than 200 deep"},
	} {
		opts := Options{}
		if tc.opts != nil {
			opts = *tc.opts
		}
		_, err := ParseWith(tc.tgt, tc.typ, opts)
		if err == nil {
			t.Errorf("ParseWith(%v, %q) = nil error, want %q", tc.tgt, tc.typ, tc.want)
			continue
		}
		if !errors.Is(err, ErrTarget) {
			t.Errorf("ParseWith(%v, %q) error %v is not ErrTarget", tc.tgt, tc.typ, err)
		}
		msg := strings.TrimPrefix(err.Error(), "bad target: ")
		if msg != tc.want && !strings.HasSuffix(msg, tc.want) {
			t.Errorf("ParseWith(%v, %q) error\n got %s\nwant %s", tc.tgt, tc.typ, msg, tc.want)
		}
		if strings.Contains(tc.want, "pillar data") && !errors.Is(err, ErrNoPillar) {
			t.Errorf("ParseWith(%v, %q) error %v is not ErrNoPillar", tc.tgt, tc.typ, err)
		}
	}
}

// TestNodegroupBlowup: nodegroups that each include the next twice would
// expand to 2^40 words; the expansion stops with an error instead.
func TestNodegroupBlowup(t *testing.T) {
	groups := map[string]any{"g40": "web1"}
	for i := 39; i >= 0; i-- {
		next := "N@g" + strconv.Itoa(i+1)
		groups["g"+strconv.Itoa(i)] = next + " or " + next
	}
	_, err := ParseWith("g0", "nodegroup", Options{Nodegroups: groups})
	if err == nil || !strings.Contains(err.Error(), "more than 10000 targets") {
		t.Fatalf("error %v, want one about too many targets", err)
	}
}

// TestTraverse: the same paths through Go maps and through the ordered
// mappings a YAML file reads as (yaml.MapSlice, keys matched by their
// text, as Salt retries a key YAML-loaded).
func TestTraverse(t *testing.T) {
	data := map[string]any{
		"a":     map[string]any{"b": []any{"x", "y", map[string]any{"c": 1.0}}},
		"disks": []any{map[string]any{"sda": "ssd"}, map[string]any{"sdb": "hdd"}},
		"386":   "i386",
	}
	ordered := yaml.MapSlice{
		{Key: "a", Value: yaml.MapSlice{{Key: "b", Value: []any{"x", "y", yaml.MapSlice{{Key: "c", Value: 1.0}}}}}},
		{Key: "disks", Value: []any{yaml.MapSlice{{Key: "sda", Value: "ssd"}}, yaml.MapSlice{{Key: "sdb", Value: "hdd"}}}},
		{Key: uint64(386), Value: "i386"},
	}
	for _, d := range []any{data, ordered} {
		traverse(t, d)
	}
}

func traverse(t *testing.T, data any) {
	t.Helper()
	for _, tc := range []struct {
		key   string
		want  any
		found bool
	}{
		{"a:b:0", "x", true},
		{"a:b:-1:c", 1.0, true},
		{"a:b:-4", nil, false},
		{"a:b:3", nil, false},
		{"a:b:c", 1.0, true}, // the list's mappings are searched
		{"disks:sdb", "hdd", true},
		{"disks:sdc", nil, false},
		{"a:b:0:z", nil, false},
		{"nope", nil, false},
		{"386", "i386", true},
	} {
		got, found := Traverse(data, tc.key, "")
		if found != tc.found || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Traverse(%q) = %v, %v; want %v, %v", tc.key, got, found, tc.want, tc.found)
		}
	}
}

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // text@pos, space separated
	}{
		{"G@os:Debian and  web*", "G@os:Debian@1 and@13 web*@18"},
		{"(a or (b))", "(@1 a@2 or@4 (@7 b@8 )@9 )@10"},
		{"(E@web(1|2))", "(@1 E@web(1|2)@2 )@12"},
		{"ü\tnot\x1fb", "ü@1 not@3 b@7"},
		{")", ")@1"},
	} {
		var parts []string
		for _, w := range splitWords(tc.in) {
			parts = append(parts, w.text+"@"+strconv.Itoa(w.pos))
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("splitWords(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestWildcardCost: subdict_match tries every split of "*:*:…" at every
// level of nested mappings; memoized, many wildcards on deep data stay fast.
func TestWildcardCost(t *testing.T) {
	deep := map[string]any{"x": "y"}
	for range 6 {
		deep = map[string]any{"a": deep, "b": deep, "c": "v"}
	}
	tg, err := ParseWith("G@"+strings.Repeat("*:", 62)+"zz", "compound", Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if tg.Match(Facts{ID: "x", Grains: deep}) {
		t.Error("matched")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("one match took %v", d)
	}
	if _, err := ParseWith("G@"+strings.Repeat("*:", 64)+"zz", "compound", Options{}); err == nil {
		t.Error("65 parts: no error")
	}
}
