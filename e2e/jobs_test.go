package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/master/rpc"
)

// slackRecorder is slacktest recording chat.postMessage and chat.update
// (slacktest keeps nothing by itself).
type slackRecorder struct {
	mu   sync.Mutex
	msgs []map[string]string
}

func newSlackRecorder(t *testing.T) (*slackRecorder, string) {
	t.Helper()
	rec := &slackRecorder{}
	record := func(method string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			rec.mu.Lock()
			ts := r.PostForm.Get("ts")
			if method == "chat.postMessage" {
				ts = fmt.Sprintf("1700000000.%06d", len(rec.msgs)+1)
			}
			rec.msgs = append(rec.msgs, map[string]string{"method": method, "channel": r.PostForm.Get("channel"),
				"text": r.PostForm.Get("text"), "thread_ts": r.PostForm.Get("thread_ts"), "ts": ts})
			rec.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": r.PostForm.Get("channel"), "ts": ts})
		}
	}
	srv := slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", record("chat.postMessage"))
		c.Handle("/chat.update", record("chat.update"))
	})
	srv.Start()
	t.Cleanup(srv.Stop)
	return rec, srv.GetAPIURL()
}

func (r *slackRecorder) wait(t *testing.T, n int) []map[string]string {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		msgs := append([]map[string]string(nil), r.msgs...)
		r.mu.Unlock()
		if len(msgs) >= n {
			return msgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("Slack got %d messages, want %d: %v", len(msgs), n, msgs)
		}
	}
}

func TestRunJobsAndSlackOnMaster(t *testing.T) {
	rec, apiURL := newSlackRecorder(t)
	m := newTestMaster(t)
	f, err := os.OpenFile(filepath.Join(m.confDir, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "keep_jobs: 2\nslack:\n  token: xoxb-test-token\n  api_url: %s\n  channel: '#audit'\n  rate: 0\n", apiURL)
	f.Close()
	m.start()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := m.run(nil, "run", "test.arg", "hello", "count=3")
	if code != 0 || out != "args:\n- hello\nkwargs:\n  count: 3\n" {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = m.run(nil, "run", "test.arg", "again", "--json")
	var res struct {
		JID     string `json:"jid"`
		Success bool   `json:"success"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Success {
		t.Fatalf("run --json: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := m.run(nil, "run", "test.exception", "message=boom"); code != 1 || !strings.Contains(errOut, "boom") {
		t.Errorf("failing function: exit %d %s", code, errOut)
	}
	if _, errOut, code := m.run(nil, "run", "no.such"); code != 1 || !strings.Contains(errOut, "unknown function") {
		t.Errorf("unknown function: exit %d %s", code, errOut)
	}

	// A job the CLI runs itself (brine cloud), announced by the master:
	// the two calls brine cloud makes (cmd/brine's beginJob and endJob),
	// as the OS user.
	c := m.client()
	defer c.Close()
	ctx := context.Background()
	var job rpc.RunRequest
	begin := rpc.RunRequest{Fun: "cloud.profile", Args: []any{"small"}, Kwargs: map[string]any{"instances": []any{"web1"}}, User: u.Username}
	if err := c.Call(ctx, rpc.JobsBegin, begin, &job); err != nil || !jobs.IsJID(job.JID) {
		t.Fatalf("jobs.begin: %+v %v", job, err)
	}
	job.Return = map[string]any{"web1": map[string]any{"status": "created", "cpus": 2}}
	if err := c.Call(ctx, rpc.JobsEnd, job, nil); err != nil {
		t.Fatal(err)
	}

	msgs := rec.wait(t, 8)
	if want := "`salt-run test.arg hello count=3` by *" + u.Username + "*"; !strings.HasPrefix(msgs[0]["text"], want) ||
		msgs[1]["thread_ts"] != msgs[0]["ts"] || !strings.Contains(msgs[1]["text"], "succeeded") {
		t.Errorf("Slack messages, want %q then a threaded result: %v", want, msgs)
	}

	// The job store has it.
	var show string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		show, errOut, code = m.run(nil, "jobs", "show", res.JID)
		if code == 0 && strings.Contains(show, "succeeded") || time.Now().After(deadline) {
			break
		}
	}
	if code != 0 || !strings.Contains(show, "command:  salt-run test.arg again") || !strings.Contains(show, "user:     "+u.Username) ||
		!strings.Contains(show, "  args:\n  - again") {
		t.Errorf("jobs show: exit %d\n%s%s", code, show, errOut)
	}
	out, _, code = m.run(nil, "jobs", "list", "--fun", "runner.test.arg", "--json")
	var list []struct {
		JID string `json:"jid"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || list[1].JID != res.JID {
		t.Errorf("jobs list --fun: exit %d %s", code, out)
	}
	if out, _, code := m.run(nil, "jobs", "list", "--user", "nobody-at-all"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("jobs list --user: exit %d %q", code, out)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		show, errOut, code = m.run(nil, "jobs", "show", job.JID)
		if code == 0 && strings.Contains(show, "succeeded") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(show, `command:  salt-run cloud.profile small instances='["web1"]'`) || !strings.Contains(show, "    cpus: 2") {
		t.Errorf("cloud run job: exit %d\n%s%s", code, show, errOut)
	}
	if !strings.Contains(msgs[6]["text"], "`salt-run cloud.profile small") || msgs[7]["thread_ts"] != msgs[6]["ts"] {
		t.Errorf("cloud run in Slack: %v", msgs[6:])
	}
	if out, _, code := m.run(nil, "jobs", "active", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("jobs active: exit %d %q", code, out)
	}
	out, _, code = m.run(nil, "slack", "status", "--json")
	var status struct {
		Stats map[string]uint64 `json:"stats"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &status) != nil || status.Stats["posted"] < 8 || strings.Contains(out, "xoxb-test-token") {
		t.Errorf("slack status: exit %d %s", code, out)
	}
	if _, _, code := m.run(nil, "jobs", "show", "123"); code != 2 {
		t.Errorf("jobs show of a non-JID: exit %d, want 2", code)
	}
	if _, errOut, code := m.run(nil, "jobs", "show", "20200101000000000000"); code != 1 || !strings.Contains(errOut, "job not found") {
		t.Errorf("jobs show of an unknown JID: exit %d %s", code, errOut)
	}
}

// TestJobsOrphanedBySIGKILLAreClosedAtStart: a job running when its master
// is killed is closed as interrupted when the master starts again, instead
// of staying "running" forever.
func TestJobsOrphanedBySIGKILLAreClosedAtStart(t *testing.T) {
	m := newTestMaster(t)
	m.start()
	out, _, code := m.run(nil, "run", "test.sleep", "60", "--timeout", "1s", "--json")
	if code != 3 {
		t.Fatalf("a 60 s job with a 1 s timeout: exit %d %s", code, out)
	}
	var jid string
	for deadline := time.Now().Add(15 * time.Second); jid == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, _, _ = m.run(nil, "jobs", "active", "--json")
		var list []struct {
			JID string `json:"jid"`
			Fun string `json:"fun"`
		}
		if json.Unmarshal([]byte(out), &list) == nil && len(list) == 1 && list[0].Fun == "runner.test.sleep" {
			jid = list[0].JID
		}
	}
	if jid == "" {
		t.Fatalf("the sleeping job is not active: %s", out)
	}
	m.stop(syscall.SIGKILL)
	m.start()
	var show string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		show, _, _ = m.run(nil, "jobs", "show", jid)
		if strings.Contains(show, "status:   interrupted") {
			break
		}
	}
	if !strings.Contains(show, "status:   interrupted") {
		t.Errorf("after a restart the killed job shows:\n%s", show)
	}
	if out, _, _ := m.run(nil, "jobs", "active", "--json"); strings.Contains(out, jid) {
		t.Errorf("jobs active still lists %s: %s", jid, out)
	}
}
