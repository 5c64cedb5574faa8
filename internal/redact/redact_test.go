package redact

import "testing"

func TestRedactor(t *testing.T) {
	r := New([]string{`^pin$`}, []string{`sekrit\d+`}, []string{"xoxb-own-token"})
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"password", "hunter2", Masked},
		{"db_pass", "x", Masked},
		{"ssh_key", "x", Masked},
		{"keyname", "tsig-key.", "tsig-key."},
		{"pin", "1234", Masked},
		{"name", "web1", "web1"},
		{"password", nil, nil},
		{"", "token=abc123 rest", "token=*** rest"},
		{"", `password="a b"`, `password="***"`},
		{"", "use xoxb-own-token now", "use *** now"},
		{"", "AKIAIOSFODNN7EXAMPLE", Masked},
		{"", "sekrit7", Masked},
		{"", "https://u:pw@host/x", "https://u:***@host/x"},
		{"", "mysql -p s3cret", "mysql -p ***"},
		{"", "mysql -ps3cret db", "mysql -p*** db"},
		{"", "mysql --password=s3cret", "mysql --password=***"},
		{"", "-p s3cret", "-p ***"},
		{"", "host web-prod1 key agent-public-key", "host web-prod1 key agent-public-key"},
		{"", map[string]any{"token": "t", "list": []any{"api_key=zz"}}, map[string]any{"token": Masked, "list": []any{"api_key=***"}}},
		// A state's result is not a secret because its id or name
		// looks like one; what it holds still is, key by key.
		{"file_|-tls_|-/etc/ssl/private/x.pem_|-managed", map[string]any{"result": true, "password": "p"},
			map[string]any{"result": true, "password": Masked}},
		{"cmd_|-set_password_|-passwd x_|-run", "done", "done"},
	}
	for _, tt := range tests {
		got := r.Value(tt.name, tt.in)
		if !equal(got, tt.want) {
			t.Errorf("Value(%q, %#v) = %#v, want %#v", tt.name, tt.in, got, tt.want)
		}
	}
}

func equal(a, b any) bool {
	switch ta := a.(type) {
	case map[string]any:
		tb, ok := b.(map[string]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for k := range ta {
			if !equal(ta[k], tb[k]) {
				return false
			}
		}
		return true
	case []any:
		tb, ok := b.([]any)
		if !ok || len(ta) != len(tb) {
			return false
		}
		for i := range ta {
			if !equal(ta[i], tb[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
