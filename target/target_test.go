package target

import (
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	minions := []Facts{
		{ID: "web1", Grains: map[string]any{"salt-cloud": map[string]any{"driver": "ec2"}, "roles": []any{"web", "lb"}}},
		{ID: "web2.example.com", Grains: map[string]any{"os": "Debian"}},
		{ID: "db1", Grains: map[string]any{"os": "Ubuntu"}},
	}
	for _, tc := range []struct {
		tgt     any
		typ     string
		want    []string
		names   []string // Names(), nil when any id may match
		wantErr bool
	}{
		{"web*", "", []string{"web1", "web2.example.com"}, nil, false},
		{"web[!1]*", "glob", []string{"web2.example.com"}, nil, false},
		{"*", "glob", []string{"web1", "web2.example.com", "db1"}, nil, false},
		{"db1", "glob", []string{"db1"}, []string{"db1"}, false},
		{"db1,web1", "list", []string{"web1", "db1"}, []string{"db1", "web1"}, false},
		{[]any{"web2.example.com"}, "list", []string{"web2.example.com"}, []string{"web2.example.com"}, false},
		{nil, "list", nil, []string{}, false},
		{`web\d`, "pcre", []string{"web1", "web2.example.com"}, nil, false}, // re.match: anchored at the start only
		{`\d`, "pcre", nil, nil, false},
		{"salt-cloud:driver:ec*", "grain", []string{"web1"}, nil, false},
		{"roles:lb", "grain", []string{"web1"}, nil, false},
		{"os:Deb*", "grain", []string{"web2.example.com"}, nil, false},
		{"os", "grain", nil, nil, true},
		{"(", "pcre", nil, nil, true},
		{"x", "compound", nil, nil, true},
		{42.0, "glob", nil, nil, true},
		{[]any{"a", 1}, "list", nil, nil, true},
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
		var got []string
		for _, m := range minions {
			if tg.Match(m) {
				got = append(got, m.ID)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%v, %q) selects %v, want %v", tc.tgt, tc.typ, got, tc.want)
		}
		names, only := tg.Names()
		if only != (tc.names != nil) || !reflect.DeepEqual(names, tc.names) {
			t.Errorf("Parse(%v, %q).Names() = %v, %v; want %v", tc.tgt, tc.typ, names, only, tc.names)
		}
	}
}
