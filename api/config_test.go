package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/config"
)

// loadSettings reads the api: key of conf the way the master does; the
// error is Decode's into Settings.
func loadSettings(t *testing.T, dir, conf string) (Settings, map[string]any, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	var s Settings
	if err := m.Decode("api", &raw); err != nil {
		t.Fatal(err)
	}
	return s, raw, m.Decode("api", &s)
}

func writeSecret(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsResolve(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../testdata/api/master.conf")
	if err != nil {
		t.Fatal(err)
	}
	writeSecret(t, filepath.Join(dir, "api.tokens"), "# tokens\n"+testToken+"\n\nsecond-token-0123456789\n", 0o600)
	writeSecret(t, filepath.Join(dir, "github.secret"), testSecret+"\n", 0o600)
	s, raw, err := loadSettings(t, dir, string(src))
	if err == nil {
		err = CheckKeys(raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tokens) != 2 || string(cfg.Tokens[0]) != testToken || !cfg.PublicHealth || !cfg.PublicMetrics || cfg.MaxBody != 65536 {
		t.Errorf("resolved %+v", cfg)
	}
	hooks := map[string]Hook{}
	for _, h := range cfg.Hooks {
		hooks[h.Path] = h
	}
	if h := hooks["github/*"]; h.Auth != AuthHMAC || string(h.Secret) != testSecret || h.SignatureHeader != GitHubSignatureHeader {
		t.Errorf("github hook %+v", h)
	}
	if h := hooks["stripe/*"]; h.SignatureHeader != BrineSignatureHeader || string(h.Secret) != "brine-inline-secret-0123" {
		t.Errorf("stripe hook %+v", h)
	}
	if hooks["public/ping"].Auth != AuthNone || hooks["ci/**"].Auth != AuthToken {
		t.Errorf("hooks %+v", hooks)
	}
}

func TestSettingsErrors(t *testing.T) {
	dir := t.TempDir()
	writeSecret(t, filepath.Join(dir, "open.tokens"), testToken+"\n", 0o644)
	writeSecret(t, filepath.Join(dir, "short.tokens"), "\n"+"short\n", 0o600)
	writeSecret(t, filepath.Join(dir, "empty.tokens"), "# none\n", 0o600)
	writeSecret(t, filepath.Join(dir, "two.secret"), testSecret+"\n"+testToken+"\n", 0o600)
	tests := []struct{ name, conf, want string }{
		{"unknown key", "api:\n  tokenfile: x\n", `api: unknown key "tokenfile"`},
		{"unknown hook key", "api:\n  hooks:\n    'a/*': {auth: none, secrte: x}\n", `api.hooks["a/*"]: unknown key "secrte"`},
		{"hook not a mapping", "api:\n  hooks:\n    'a/*': none\n", `api.hooks["a/*"]: want a mapping`},
		{"no auth", "api:\n  hooks:\n    'a/*': {}\n", `api.hooks["a/*"]: auth is required`},
		{"bad auth", "api:\n  hooks:\n    'a/*': {auth: basic}\n", `auth "basic": want token, hmac or none`},
		{"hmac no secret", "api:\n  hooks:\n    'a/*': {auth: hmac}\n", "auth hmac needs secret or secret_file"},
		{"hmac both", "api:\n  hooks:\n    'a/*': {auth: hmac, secret: " + testSecret + ", secret_file: x}\n", "not both"},
		{"hmac short", "api:\n  hooks:\n    'a/*': {auth: hmac, secret: abc}\n", "secret: too short"},
		{"secret file with two", "api:\n  hooks:\n    'a/*': {auth: hmac, secret_file: two.secret}\n", "holds 2 secrets, want 1"},
		{"none with secret", "api:\n  hooks:\n    'a/*': {auth: none, secret: " + testSecret + "}\n", "takes no secret"},
		{"token hook, no tokens", "api:\n  hooks:\n    'a/*': {auth: token}\n", "no tokens or token_file"},
		{"absolute hook path", "api:\n  hooks:\n    '/hook/a': {auth: none}\n", "relative to /hook/"},
		{"short token", "api:\n  tokens: [abc]\n", "api.tokens[0]: too short (3 characters, at least 16)"},
		{"token file others read", "api:\n  token_file: open.tokens\n", "chmod 600"},
		{"short token in file", "api:\n  token_file: short.tokens\n", "short.tokens:2: too short"},
		{"empty token file", "api:\n  token_file: empty.tokens\n", "no secret in the file"},
		{"missing token file", "api:\n  token_file: nope\n", "api.token_file: open"},
		{"plain http outside", "api:\n  listen: 0.0.0.0:8000\n", "reachable from other hosts"},
		{"tls half", "api:\n  tls_cert: a.crt\n", "tls_cert and tls_key go together"},
		{"tls missing", "api:\n  tls_cert: a.crt\n  tls_key: a.key\n", "a.crt"},
		{"bad listen", "api:\n  listen: nope\n", `api.listen "nope"`},
		{"bad public", "api:\n  public: [events]\n", `api.public: "events"`},
		{"negative body", "api:\n  max_request_body_size: -1\n", "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, raw, decodeErr := loadSettings(t, dir, tc.conf)
			err := CheckKeys(raw)
			if err == nil {
				err = decodeErr
			}
			if err == nil {
				_, err = s.Resolve(dir)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	// Plain HTTP beyond loopback is allowed when asked for explicitly.
	s, _, err := loadSettings(t, dir, "api:\n  listen: 0.0.0.0:8000\n  allow_plain_http: true\n")
	if err == nil {
		_, err = s.Resolve(dir)
	}
	if err != nil {
		t.Errorf("allow_plain_http: %v", err)
	}
}

func TestHookMatchOrder(t *testing.T) {
	hooks := compileHooks([]Hook{
		{Path: "*", Auth: AuthToken},
		{Path: "github/*", Auth: AuthHMAC},
		{Path: "github/special", Auth: AuthNone},
		{Path: "git*", Auth: AuthToken},
	})
	tests := []struct{ path, want string }{
		{"github/special", "github/special"},
		{"github/push", "github/*"},
		{"gitlab/push", "git*"},
		{"other", "*"},
	}
	for _, tc := range tests {
		if h := matchHook(hooks, tc.path); h == nil || h.Path != tc.want {
			t.Errorf("matchHook(%q) = %v, want %s", tc.path, h, tc.want)
		}
	}
}

func TestReloadRotatesCredentials(t *testing.T) {
	f := start(t, testConfig(), nil)
	post := func(tok string) int {
		status, _ := f.do("POST", "/events", []byte(`{"tag": "myco/x"}`), map[string]string{"Authorization": "Bearer " + tok})
		return status
	}
	if got := post(testToken); got != 200 {
		t.Fatalf("before the reload: %d", got)
	}
	next := testConfig()
	next.Tokens = [][]byte{[]byte("rotated-token-0123456789")}
	next.Hooks = nil
	next.MaxBody = 10
	if err := f.srv.Reload(next); err != nil {
		t.Fatal(err)
	}
	if got := post(testToken); got != 403 {
		t.Errorf("old token after the reload: %d, want 403", got)
	}
	if got := post("rotated-token-0123456789"); got != 413 {
		t.Errorf("new token, body over the new cap: %d, want 413", got)
	}
	if status, _ := f.do("POST", "/hook/public/ping", nil, nil); status != 401 {
		t.Errorf("removed auth: none hook: %d, want 401", status)
	}
	next.Listen = "127.0.0.1:1"
	if err := f.srv.Reload(next); err == nil || !strings.Contains(err.Error(), "next start") {
		t.Errorf("changing listen: %v, want a next-start notice", err)
	}
}

// TestLoadConfigNamesTheLineOfATypo: LoadConfig, as the master calls it,
// reports an unknown key of the section with its file, line and the key it
// probably means.
func TestLoadConfigNamesTheLineOfATypo(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"id: m\napi:\n  tokenfile: x\n", `master:3: unknown key api: "tokenfile" (did you mean "token_file"?)`},
		{"api:\n  hooks:\n    'a/*': {auth: none, secrte: x}\n", `master:3: unknown key api.hooks.*: "secrte" (did you mean "secret"?)`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "master"), []byte(tc.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := config.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadConfig(m); err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s", tc.conf, err, tc.want)
		}
	}
}
