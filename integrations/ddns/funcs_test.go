package ddns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/integrations/ddns"
)

// TestFunctions calls the registered functions the ways Salt users do:
// positionally in Salt's order (salt-run ddns.add_host zone name ttl ip
// keyname keyfile nameserver timeout), by keyword with "None" for unset
// values, and with arguments left to the configuration.
func TestFunctions(t *testing.T) {
	s := startNamed(t)
	host, port := splitAddr(t, s.Addr)
	keyfile := filepath.Join(t.TempDir(), "tsig.keyring")
	write(t, keyfile, fmt.Sprintf(`{"ddns-key.": "%s"}`, s.Key("ddns-key").Secret))
	reg := function.New()
	cfg := config(t, s, "ddns-key")
	cfg.Zones = map[string]ddns.Settings{"example.test": {}}
	if err := reg.RegisterAll(ddns.New(cfg).Funcs()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := func(name string, args []any, kwargs map[string]any) (string, error) {
		t.Helper()
		out, err := reg.Call(ctx, name, args, kwargs, nil)
		b, _ := json.Marshal(out)
		return string(b), err
	}

	// Salt's CLI order, every argument given (the key from a Salt keyring).
	out, err := call("ddns.add_host", []any{"example.test", "pos", 3600, "10.20.0.101", "ddns-key", keyfile, host, 5, port}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pos.example.test":["Created record of type 'A': pos.example.test. -\u003e 10.20.0.101","Created record of type 'PTR': 101.0.20.10.in-addr.arpa. -\u003e pos.example.test."]}`
	if out != want {
		t.Errorf("add_host returned\n%s\nwant\n%s", out, want)
	}
	if got := lookup(t, s, "pos.example.test", dns.TypeA); !slices.Equal(got, []string{"10.20.0.101"}) {
		t.Errorf("A %v", got)
	}

	// Keywords, "None" meaning "use the configuration", ttl from it too.
	if _, err := call("ddns.add_host", nil, map[string]any{"zone": "example.test", "name": "kw", "ip": "2001:db8::101",
		"keyname": "None", "keyfile": "None"}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(t, s, "kw.example.test", dns.TypeAAAA); !slices.Equal(got, []string{"2001:db8::101"}) {
		t.Errorf("AAAA %v", got)
	}
	// No zone: the configured zone holding the name.
	if _, err := call("ddns.create", nil, map[string]any{"name": "txt.example.test", "rdtype": "TXT", "data": `"hi"`}); err != nil {
		t.Fatal(err)
	}
	out, err = call("ddns.update", []any{"example.test", "txt", 60, "TXT", `"ho"`}, map[string]any{"replace": true})
	if err != nil || !strings.Contains(out, "Updated record of type 'TXT'") {
		t.Errorf("update: %s %v", out, err)
	}
	out, err = call("ddns.delete", []any{"example.test", "txt"}, map[string]any{"rdtype": "TXT"})
	if err != nil || out != `{"txt.example.test":["Deleted DNS record(s)"]}` {
		t.Errorf("delete: %s %v", out, err)
	}
	out, err = call("ddns.delete_host", []any{"example.test", "pos"}, nil)
	if err != nil || !strings.Contains(out, "Deleted DNS record(s) of type 'A'") || !strings.Contains(out, "of type 'PTR'") {
		t.Errorf("delete_host: %s %v", out, err)
	}

	for _, tc := range []struct {
		name   string
		fun    string
		args   []any
		kwargs map[string]any
		arg    string
		is     error
	}{
		{"missing ip", "ddns.add_host", []any{"example.test", "x"}, nil, "ip", function.ErrMissingArgument},
		{"unknown keyword", "ddns.add_host", nil, map[string]any{"name": "x", "ip": "10.20.0.1", "ipaddr": "x"}, "ipaddr", function.ErrUnexpectedArgument},
		{"ttl not a number", "ddns.add_host", nil, map[string]any{"name": "x", "ip": "10.20.0.1", "ttl": "soon"}, "ttl", function.ErrArgumentType},
		{"no zone for the name", "ddns.delete_host", nil, map[string]any{"name": "x.other.test"}, "zone", function.ErrMissingArgument},
		{"bad ip", "ddns.add_host", nil, map[string]any{"zone": "example.test", "name": "x", "ip": "10.20.0.300"}, "", ddns.ErrConfig},
		{"bad rdtype", "ddns.create", nil, map[string]any{"zone": "example.test", "name": "x", "rdtype": "AX", "data": "1"}, "", ddns.ErrConfig},
		{"bad data", "ddns.create", nil, map[string]any{"zone": "example.test", "name": "x", "rdtype": "A", "data": "nope"}, "", ddns.ErrConfig},
		{"data without rdtype", "ddns.delete", nil, map[string]any{"zone": "example.test", "name": "x", "data": "1"}, "", ddns.ErrConfig},
		{"missing keyfile", "ddns.add_host", nil, map[string]any{"zone": "example.test", "name": "x", "ip": "10.20.0.1", "keyfile": "/nonexistent"}, "", ddns.ErrKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(tc.fun, tc.args, tc.kwargs)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err %v, want %v", err, tc.is)
			}
			var ae *function.ArgError
			if tc.arg != "" && (!errors.As(err, &ae) || ae.Arg != tc.arg || ae.Func != tc.fun) {
				t.Errorf("err %v does not name %s of %s", err, tc.arg, tc.fun)
			}
		})
	}
}
