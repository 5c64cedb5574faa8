package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinehq/brine/api"
)

const (
	apiToken  = "api-token-0123456789abcdef"
	apiSecret = "github-hook-secret-0123456789"
)

// curlPath finds curl: the end-to-end tests drive the API with it, as
// operators and CI scripts do. Without it they fail, saying how to get it.
func curlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl is required by this test: install the Debian package curl (make deps): %v", err)
	}
	return p
}

// apiMaster is a master with the API on, a signed GitHub hook and a
// reaction file for it.
func apiMaster(t *testing.T) (*testMaster, string) {
	t.Helper()
	m := newTestMaster(t)
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Secret files are found next to the file that names them.
	for name, secret := range map[string]string{"api.tokens": apiToken + "\n", "github.secret": apiSecret + "\n"} {
		if err := os.WriteFile(filepath.Join(m.confDir, "master.d", name), []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sls, err := filepath.Abs("../testdata/api/github_push.sls")
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	conf := fmt.Sprintf(`api:
  listen: %s
  token_file: api.tokens
  hooks:
    'github/*':
      auth: hmac
      secret_file: github.secret
    'public/ping':
      auth: none
reactor:
  - 'salt/netapi/hook/github/*':
    - %s
`, addr, sls)
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "api.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return m, "http://" + addr
}

// waitAPI polls /healthz until the API answers.
func waitAPI(t *testing.T, m *testMaster, url string) {
	t.Helper()
	waitHTTP(t, m, "API", url+"/healthz")
}

// waitHTTP polls url until the master's server called what answers it.
func waitHTTP(t *testing.T, m *testMaster, what, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s at %s did not come up: %v; master log:\n%s", what, url, err, m.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runCurl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(curlPath(t), append([]string{"-sS", "--max-time", "30"}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("curl %v: %v: %s", args, err, stderr)
	}
	return string(out)
}

// follow runs `curl -N` on the event stream and returns its events as
// they arrive.
type follower struct {
	cmd *exec.Cmd
	br  *bufio.Reader
}

func follow(t *testing.T, url string, header ...string) *follower {
	t.Helper()
	args := []string{"-sS", "-N", "--max-time", "120", "-H", "Authorization: Bearer " + apiToken}
	for _, h := range header {
		args = append(args, "-H", h)
	}
	cmd := tied(exec.Command(curlPath(t), append(args, url)...))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	f := &follower{cmd: cmd, br: bufio.NewReader(out)}
	if line, err := f.br.ReadString('\n'); err != nil || line != "retry: 400\n" {
		t.Fatalf("curl -N %s: first line %q (%v), want retry: 400", url, line, err)
	}
	return f
}

// next returns the id, tag and data of the next event.
func (f *follower) next(t *testing.T) (id, tag, data string) {
	t.Helper()
	for {
		line, err := f.br.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream ended: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "tag: "):
			tag = line[5:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		case line == "" && data != "":
			return id, tag, data
		}
	}
}

// TestAPIEndToEnd drives a real master with curl: a GitHub-signed webhook
// runs a reaction, `curl -N` follows /events and resumes after a master
// restart with Last-Event-ID, with no gap and no duplicate.
func TestAPIEndToEnd(t *testing.T) {
	m, url := apiMaster(t)
	m.start()
	waitAPI(t, m, url)

	stream := follow(t, url+"/events?tag=myco/*")
	body, err := os.ReadFile("../testdata/api/github_push.json")
	if err != nil {
		t.Fatal(err)
	}
	sig := api.SignHook(api.GitHubSignatureHeader, "", []byte(apiSecret), body, time.Now())
	out := runCurl(t, "-X", "POST", "-H", "Content-Type: application/json", "-H", "X-GitHub-Event: push",
		"-H", api.GitHubSignatureHeader+": "+sig, "--data-binary", "@../testdata/api/github_push.json", url+"/hook/github/push")
	var reply api.HookReply
	if err := json.Unmarshal([]byte(out), &reply); err != nil || !reply.Success || reply.ID == "" {
		t.Fatalf("hook reply %q (%v)", out, err)
	}
	// The reaction fires myco/push/<repo>; the stream shows it.
	id, tag, data := stream.next(t)
	if tag != "myco/push/brinehq/brine" || !strings.Contains(data, `"ref": "refs/heads/main"`) || !strings.Contains(data, `"event": "push"`) {
		t.Fatalf("stream event %s %s %s", id, tag, data)
	}

	// The reaction ran as a job, which GET /jobs shows.
	var jobList []struct {
		JID  string `json:"jid"`
		Fun  string `json:"fun"`
		User string `json:"user"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(jobList) == 0 {
		out := runCurl(t, "-H", "Authorization: Bearer "+apiToken, url+"/jobs?fun=runner.event.send")
		if err := json.Unmarshal([]byte(out), &jobList); err != nil {
			t.Fatalf("GET /jobs: %s (%v)", out, err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the reaction's job never appeared in GET /jobs")
		}
		time.Sleep(100 * time.Millisecond)
	}
	jobOut := runCurl(t, "-H", "Authorization: Bearer "+apiToken, url+"/jobs/"+jobList[0].JID)
	if !strings.Contains(jobOut, `"jid":"`+jobList[0].JID+`"`) || !strings.Contains(jobOut, `"fun":"runner.event.send"`) {
		t.Errorf("GET /jobs/%s: %s", jobList[0].JID, jobOut)
	}
	for path, want := range map[string]string{
		"/jobs/20000101000000000000": "404", "/jobs?limit=x": "400", "/mine": "200", "/mine?tgt=x&tgt_type=bogus": "400",
	} {
		if code := runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+apiToken, url+path); code != want {
			t.Errorf("GET %s: HTTP %s, want %s", path, code, want)
		}
	}
	if code := runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", url+"/jobs"); code != "401" {
		t.Errorf("GET /jobs without a token: HTTP %s, want 401", code)
	}

	// Refusals through curl: wrong signature, no token.
	bad := runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
		"-H", api.GitHubSignatureHeader+": sha256=00", "--data-binary", "@../testdata/api/github_push.json", url+"/hook/github/push")
	if bad != "403" {
		t.Errorf("wrong signature: HTTP %s, want 403", bad)
	}
	if code := runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", url+"/events"); code != "401" {
		t.Errorf("stream without a token: HTTP %s, want 401", code)
	}

	post := func(tag string) string {
		t.Helper()
		out := runCurl(t, "-X", "POST", "-H", "Authorization: Bearer "+apiToken, "-H", "Content-Type: application/json",
			"--data", fmt.Sprintf(`{"tag": %q, "data": {"n": 1}}`, tag), url+"/events")
		var r api.HookReply
		if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Success {
			t.Fatalf("POST /events %s: %s (%v)", tag, out, err)
		}
		return r.ID
	}
	last := post("myco/one")
	if got, _, _ := stream.next(t); got != last {
		t.Fatalf("stream got %s, want %s", got, last)
	}
	_ = stream.cmd.Process.Kill()
	_ = stream.cmd.Wait()
	want := []string{post("myco/two"), post("myco/three")}

	m.stop(syscall.SIGTERM)
	m.start()
	waitAPI(t, m, url)
	want = append(want, post("myco/four"))
	resumed := follow(t, url+"/events?tag=myco/*", "Last-Event-ID: "+last)
	for i, w := range want {
		if got, _, _ := resumed.next(t); got != w {
			t.Fatalf("resumed event %d: %s, want %s", i, got, w)
		}
	}
	fresh := post("myco/five")
	if got, _, _ := resumed.next(t); got != fresh {
		t.Fatalf("after the replay: %s, want %s (a duplicate or a gap)", got, fresh)
	}

	// Health, metrics, and no secret in the log.
	var h api.Health
	if err := json.Unmarshal([]byte(runCurl(t, url+"/healthz")), &h); err != nil || h.Status != "ok" ||
		h.Checks["bus"].Status != "ok" || h.Checks["reactor"].Status != "ok" || h.Checks["integrations"].Status != "ok" {
		t.Errorf("healthz %+v (%v)", h, err)
	}
	metrics := runCurl(t, "-H", "Authorization: Bearer "+apiToken, url+"/metrics")
	for _, want := range []string{`brine_api_events_in_total{prefix="myco/five",route="events_post"} 1`, `brine_reactor_dead_letters 0`, `brine_bus_consumer_lag{consumer="reactor"}`, "brine_gateway_watchers "} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// SIGHUP rotates the token without a restart.
	rotated := "rotated-token-0123456789"
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "api.tokens"), []byte(rotated+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+rotated, url+"/jobs") != "200" {
		if time.Now().After(deadline) {
			t.Fatalf("the rotated token was not accepted after SIGHUP; log:\n%s", m.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := runCurl(t, "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+apiToken, url+"/jobs"); code != "403" {
		t.Errorf("the old token after SIGHUP: HTTP %s, want 403", code)
	}

	m.stop(syscall.SIGTERM)
	log := m.log.String()
	if !strings.Contains(log, "UNAUTHENTICATED") || !strings.Contains(log, "public/ping") {
		t.Errorf("auth: none not logged loudly at start:\n%s", log)
	}
	for _, secret := range []string{apiToken, apiSecret, rotated} {
		if strings.Contains(log, secret) {
			t.Errorf("a secret is in the master log")
		}
	}
}

func TestAPIConfigErrors(t *testing.T) {
	tests := []struct {
		name, conf, want string
	}{
		{"unknown key", "api:\n  listen: 127.0.0.1:0\n  tokenfile: x\n", `api.conf:3: unknown key api: "tokenfile" (did you mean "token_file"?)`},
		{"hmac without secret", "api:\n  hooks:\n    'gh/*': {auth: hmac}\n", `api.hooks["gh/*"]: auth hmac needs secret or secret_file`},
		{"typo in hook", "api:\n  hooks:\n    'gh/*': {auth: hmac, secret_fil: x}\n", `api.conf:3: unknown key api.hooks.*: "secret_fil" (did you mean "secret_file"?)`},
		{"plain http", "api:\n  listen: 0.0.0.0:8000\n", "reachable from other hosts"},
		{"short token", "api:\n  tokens: [short]\n", "api.tokens[0]: too short"},
		{"bad type", "api:\n  max_request_body_size: lots\n", "api"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMaster(t)
			if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(m.confDir, "master.d", "api.conf")
			if err := os.WriteFile(file, []byte(tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := tied(exec.Command(brineBin, "master", "-c", m.confDir))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("master started with a bad api: section")
				}
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("master kept running with a bad api: section; log:\n%s", stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, file) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q should name %s and say %q", lastLine(msg), file, tc.want)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
