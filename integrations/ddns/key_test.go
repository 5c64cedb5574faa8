package ddns

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/miekg/dns"

	"github.com/brinehq/brine/config"
)

const secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"

func TestLoadKeyFile(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ring := file("ring.json", `{"ddns-key.": "`+secret+`"}`)
	ring2 := file("ring2.json", `{"a.": "`+secret+`", "b": "`+secret+`"}`)
	bind := file("k.key", "key \"ddns-key\" {\n\talgorithm hmac-sha512;\n\tsecret \""+secret+"\";\n};\n")
	bind2 := file("k2.key", `key a { algorithm hmac-sha1; secret "`+secret+`"; }; key "b" { algorithm hmac-md5; secret "`+secret+`"; };`)
	for _, tc := range []struct {
		name, path, keyname, alg string
		wantName, wantAlg        string
		wantErr                  string
	}{
		{"salt keyring", ring, "", "", "ddns-key.", dns.HmacSHA256, ""},
		{"salt keyring, name without dot", ring, "ddns-key", "hmac-md5", "ddns-key.", dns.HmacMD5, ""},
		{"salt keyring, Salt's md5 spelling", ring, "", "HMAC-MD5.SIG-ALG.REG.INT", "ddns-key.", dns.HmacMD5, ""},
		{"keyring of two needs keyname", ring2, "", "", "", "", "holds 2 keys (a., b): set keyname"},
		{"keyring of two", ring2, "b.", "", "b.", dns.HmacSHA256, ""},
		{"bind file", bind, "", "", "ddns-key.", dns.HmacSHA512, ""},
		{"bind file, same algorithm", bind, "ddns-key", "hmac-sha512", "ddns-key.", dns.HmacSHA512, ""},
		{"bind file, other algorithm", bind, "", "hmac-sha256", "", "", "is hmac-sha512, but keyalgorithm says hmac-sha256"},
		{"bind file of two", bind2, "b", "", "b.", dns.HmacMD5, ""},
		{"bind file, unknown key", bind2, "c", "", "", "", `has no key "c"`},
		{"bad algorithm", ring, "", "hmac-sha3", "", "", `algorithm "hmac-sha3"`},
		{"raw secret, Salt's #30422", file("raw", secret), "", "", "", "", "neither a JSON keyring nor a BIND key file"},
		{"bad JSON", file("bad.json", `{"a": `), "", "", "", "", "not a JSON keyring"},
		{"bad base64", file("b64.json", `{"a.": "not base64!"}`), "", "", "", "", "not base64"},
		{"missing", filepath.Join(dir, "nope"), "", "", "", "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := LoadKeyFile(tc.path, tc.keyname, tc.alg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrKey) {
					t.Fatalf("err %v, want %q (ErrKey)", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Name != tc.wantName || k.Algorithm != tc.wantAlg {
				t.Errorf("got %s %s, want %s %s", k.Name, k.Algorithm, tc.wantName, tc.wantAlg)
			}
		})
	}
}

// TestKeyNeverPrintsSecret covers every way a key reaches a log or event.
func TestKeyNeverPrintsSecret(t *testing.T) {
	k, err := NewKey("ddns-key", "hmac-sha256", secret)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(map[string]any{"key": k})
	cfg := Config{Keys: map[string]InlineKey{"k": {Algorithm: "hmac-sha256", Secret: secret}}}
	cj, _ := json.Marshal(cfg)
	inline := fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cj)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "key", k)
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "key", k)
	for _, out := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %s", k, k, k), string(j), logged.String(),
		fmt.Sprint(target{key: k}), inline} {
		if strings.Contains(out, secret) || strings.Contains(out, "secret-secret") {
			t.Errorf("secret printed: %s", out)
		}
	}
	if !strings.Contains(string(j), "ddns-key.") {
		t.Errorf("JSON lacks the key name: %s", j)
	}
}

func TestFQDN(t *testing.T) {
	for _, tc := range []struct{ zone, name, want, err string }{
		{"example.com", "web1", "web1.example.com.", ""},
		{"example.com.", "web1.example.com", "web1.example.com.", ""},
		{"example.com", "web1.example.com.", "web1.example.com.", ""},
		{"example.com", "WEB1", "web1.example.com.", ""},
		{"example.com", "@", "example.com.", ""},
		// Salt's name.replace(zone, "") would make this "-db".
		{"example.com", "example.com-db", "example.com-db.example.com.", ""},
		{"example.com", "a.b", "a.b.example.com.", ""},
		{"example.com", "web1.other.org.", "", "not in zone example.com"},
		{"example.com", "bad..name", "", "not a domain name"},
		{"", "web1", "", "zone"},
	} {
		got, err := FQDN(tc.zone, tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("FQDN(%q, %q) err %v, want %q", tc.zone, tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FQDN(%q, %q) = %q, %v; want %q", tc.zone, tc.name, got, err, tc.want)
		}
	}
}

func TestParseIPs(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
		err  bool
	}{
		{"10.0.0.1", "[10.0.0.1]", false},
		{"10.0.0.1, 2001:db8::1", "[10.0.0.1 2001:db8::1]", false},
		{[]any{"::ffff:10.0.0.2"}, "[10.0.0.2]", false},
		{"10.0.0.300", "", true},
		{"", "", true},
		{int64(3), "", true},
		{[]any{1}, "", true},
	} {
		got, err := ParseIPs(tc.in)
		if (err != nil) != tc.err || (!tc.err && fmt.Sprint(got) != tc.want) {
			t.Errorf("ParseIPs(%#v) = %v, %v", tc.in, got, err)
		}
	}
}

// masterConfig loads a master configuration holding section as ddns:.
func masterConfig(t *testing.T, section map[string]any) *config.Master {
	t.Helper()
	dir := t.TempDir()
	text := []byte("id: m1\n")
	if section != nil {
		b, err := yaml.Marshal(map[string]any{"ddns": section})
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "master"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		ddns map[string]any
		err  string
	}{
		{"empty", nil, ""},
		{"full", map[string]any{"nameserver": "10.0.0.1", "port": 5353, "keyname": "k", "retries": 0, "ownership": true,
			"keys": map[string]any{"k": map[string]any{"secret": secret}}, "zones": map[string]any{"example.com": map[string]any{"ttl": 60}}}, ""},
		{"typo", map[string]any{"nameservr": "x"}, `master:3: unknown key ddns: "nameservr" (did you mean "nameserver"?)`},
		{"typo in a zone", map[string]any{"zones": map[string]any{"a.b": map[string]any{"keyfle": "x"}}}, `unknown key ddns.zones.*: "keyfle" (did you mean "keyfile"?)`},
		{"typo in sync", map[string]any{"sync": map[string]any{"zone": "a.b", "target": "*"}}, `unknown key ddns.sync: "target" (did you mean "targets"?)`},
		{"bad port", map[string]any{"port": 70000}, "port 70000"},
		{"bad zone", map[string]any{"zones": map[string]any{"a..b": map[string]any{}}}, "not a domain name"},
		{"bad algorithm", map[string]any{"zones": map[string]any{"a.b": map[string]any{"keyalgorithm": "rot13"}}}, "zones: a.b: ddns:"},
		{"bad inline secret", map[string]any{"keys": map[string]any{"k": map[string]any{"secret": "!!"}}}, "not base64"},
		{"negative retries", map[string]any{"retries": -1}, "negative"},
		{"sync", map[string]any{"sync": map[string]any{"zone": "example.com", "targets": []any{"web1", "web2"}, "tgt_type": "list"}}, ""},
		{"sync without zone", map[string]any{"sync": map[string]any{"targets": "*"}}, "sync: zone"},
		{"sync, bad target", map[string]any{"sync": map[string]any{"zone": "example.com", "targets": "(", "tgt_type": "pcre"}}, "sync: targets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(masterConfig(t, tc.ddns), "master1")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Owner != "master1" {
				t.Errorf("owner %q", c.Owner)
			}
		})
	}
}

// TestTargetPrecedence: call over zone over top level over defaults.
func TestTargetPrecedence(t *testing.T) {
	c := Config{
		Settings: Settings{Nameserver: "10.0.0.1", TTL: 120},
		Zones:    map[string]Settings{"example.com": {Port: 5353, TTL: 60}},
		Keys:     map[string]InlineKey{"k": {Algorithm: "hmac-sha512", Secret: secret}},
	}
	for _, tc := range []struct {
		zone string
		call Settings
		want string
	}{
		{"other.org", Settings{}, "10.0.0.1:53 ttl=120 key=<nil>"},
		{"example.com.", Settings{}, "10.0.0.1:5353 ttl=60 key=<nil>"},
		{"EXAMPLE.com", Settings{Nameserver: "::1", TTL: 5, Keyname: "k"}, "[::1]:5353 ttl=5 key=k (hmac-sha512)"},
	} {
		tg, err := c.target(tc.zone, tc.call)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s ttl=%d key=%v", tg.server, tg.ttl, tg.key); got != tc.want || tg.timeout != DefaultTimeout {
			t.Errorf("%s %+v: %s (timeout %v), want %s", tc.zone, tc.call, got, tg.timeout, tc.want)
		}
	}
	if _, err := c.target("example.com", Settings{Keyname: "nokey"}); !errors.Is(err, ErrKey) {
		t.Errorf("unknown inline key: %v", err)
	}
}
