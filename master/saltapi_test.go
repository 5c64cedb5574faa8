package master

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/internal/loopback"
)

// TestSaltAPIOnTheMaster: a master with rest_cherrypy: serves salt-api:
// a login through the file eauth, then wheel and runner calls that run as
// the master's own jobs (salt/wheel/… and salt/run/…), and a local call
// refused for a target that selects no agent rather than run.
func TestSaltAPIOnTheMaster(t *testing.T) {
	port, err := loopback.Port()
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(users, []byte("ops:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, fmt.Sprintf(`rest_cherrypy:
  port: %d
  host: 127.0.0.1
  disable_ssl: true
netapi_enable_clients: [local, runner, wheel]
external_auth:
  file:
    ^filename: %s
    ops:
      - .*
      - '@runner'
      - '@wheel'
`, port, users))
	start(t, cfg)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	post := func(path, token, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		var resp *http.Response
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err = http.DefaultClient.Do(req)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %q", path, b)
		}
		return resp.StatusCode, v
	}
	code, v := post("/login", "", `{"username": "ops", "password": "s3cret", "eauth": "file"}`)
	if code != http.StatusOK {
		t.Fatalf("login: %d %v", code, v)
	}
	tok := v["return"].([]any)[0].(map[string]any)["token"].(string)

	code, v = post("/", tok, `[{"client": "wheel", "fun": "key.list_all"}]`)
	ret, _ := v["return"].([]any)
	if code != http.StatusOK || len(ret) != 1 {
		t.Fatalf("wheel key.list_all: %d %v", code, v)
	}
	w := ret[0].(map[string]any)
	data := w["data"].(map[string]any)
	if !strings.HasPrefix(w["tag"].(string), "salt/wheel/") || data["success"] != true || data["fun"] != "wheel.key.list_all" {
		t.Fatalf("wheel reply %v", w)
	}
	if _, ok := data["return"].(map[string]any)["minions_pre"]; !ok {
		t.Fatalf("key.list_all's return %v", data["return"])
	}
	code, v = post("/", tok, `[{"client": "runner", "fun": "manage.up"}]`)
	if code != http.StatusOK {
		t.Fatalf("runner manage.up: %d %v", code, v)
	}
	code, v = post("/", tok, `[{"client": "runner", "fun": "no.such_function"}]`)
	if ret, _ := v["return"].([]any); code != http.StatusOK || len(ret) != 1 || !strings.Contains(fmt.Sprint(ret[0]), "no.such_function") {
		t.Fatalf("unknown runner: %d %v", code, v)
	}
	// SaltGUI's calls at login and on the minions page.
	for _, c := range []string{`{"client": "wheel", "fun": "config.values"}`, `{"client": "wheel", "fun": "minions.connected"}`,
		`{"client": "runner", "fun": "state.orchestrate_show_sls", "arg": ["*"]}`} {
		code, v = post("/", tok, "["+c+"]")
		if code != http.StatusOK || strings.Contains(fmt.Sprint(v), "success:false") {
			t.Errorf("%s: %d %v", c, code, v)
		}
	}
	code, v = post("/", tok, `[{"client": "local", "tgt": "nobody", "fun": "test.ping"}]`)
	if got, _ := json.Marshal(v["return"]); code != http.StatusOK || string(got) != `[{}]` {
		t.Fatalf("local to no agent: %d %s", code, got)
	}
}
