package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCloudRunThreadsInSlack: `brine cloud -p small web1` against the vCenter
// simulator gives one Slack thread for the VM, its steps threaded under the
// parent and the final state edited into it; the audit's counters reach
// /metrics.
func TestCloudRunThreadsInSlack(t *testing.T) {
	rec, apiURL := newSlackRecorder(t)
	m, brineURL := apiMaster(t)
	f, err := os.OpenFile(filepath.Join(m.confDir, "master"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "slack:\n  token: xoxb-test-token\n  api_url: %s\n  channel: '#audit'\n  rate: 0\n  audit: [{preset: cloud}]\n", apiURL)
	f.Close()
	m.start()
	cloudSetup(t, m, true)

	if _, errs, code := cloudRun(t, m, "-p", "small", "web1"); code != 0 {
		t.Fatalf("cloud: exit %d\n%s", code, errs)
	}
	msgs := rec.wait(t, 6) // creating, requesting, querying, waiting_for_ssh, created, and the edit
	parent := msgs[0]
	if parent["method"] != "chat.postMessage" || parent["thread_ts"] != "" || !strings.Contains(parent["text"], "*web1*: creating (profile small") {
		t.Fatalf("parent %v", parent)
	}
	var steps []string
	edited := false
	for _, msg := range msgs[1:] {
		switch {
		case msg["method"] == "chat.update":
			edited = msg["ts"] == parent["ts"] && strings.Contains(msg["text"], "*web1*: created :white_check_mark: (ip_address 10.20.")
		case msg["thread_ts"] != parent["ts"]:
			t.Errorf("step outside the thread: %v", msg)
		default:
			steps = append(steps, msg["text"])
		}
	}
	if !edited {
		t.Errorf("final state not edited into the parent: %v", msgs)
	}
	if got := strings.Join(steps, " | "); !strings.Contains(got, "`requesting`") || !strings.Contains(got, "`waiting_for_ssh`") ||
		!strings.Contains(got, ":white_check_mark: created") {
		t.Errorf("steps %s", got)
	}
	for _, msg := range msgs {
		if strings.Contains(msg["text"], "pass") {
			t.Errorf("password in Slack: %v", msg)
		}
	}

	waitAPI(t, m, brineURL)
	metrics := runCurl(t, "-H", "Authorization: Bearer "+apiToken, brineURL+"/metrics")
	posted := regexp.MustCompile(`(?m)^brine_slack_posted_total (\d+)$`).FindStringSubmatch(metrics)
	if posted == nil {
		t.Fatalf("no brine_slack_posted_total on /metrics:\n%s", metrics)
	}
	if n, _ := strconv.Atoi(posted[1]); n < len(msgs)-1 {
		t.Errorf("brine_slack_posted_total %d, want at least the %d messages posted", n, len(msgs)-1)
	}
}

// TestSlackCaptureExample runs docs/configuration.md's api_url example: the
// local stand-in from examples/ receives what the audit posts.
func TestSlackCaptureExample(t *testing.T) {
	port := freePort(t)
	out := filepath.Join(t.TempDir(), "slack.jsonl")
	capture := tied(exec.Command("python3", "../examples/slack-capture.py", strconv.Itoa(port), out))
	if err := capture.Start(); err != nil {
		t.Fatalf("python3: %v (make test installs it)", err)
	}
	t.Cleanup(func() { _ = capture.Process.Kill(); _ = capture.Wait() })
	m := newTestMaster(t)
	writeConf(t, m, "slack.conf", fmt.Sprintf("slack:\n  token: xoxb-local-capture\n  channel: '#infra'\n  rate: 0\n  api_url: http://127.0.0.1:%d/api/\n", port))
	m.start()
	// The audit starts at new events, once its consumer exists: run the job
	// until one run of it is posted.
	next := time.Now()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(next) {
			if _, errOut, code := m.run(nil, "run", "test.arg", "hello"); code != 0 {
				t.Fatalf("run: exit %d %s", code, errOut)
			}
			next = time.Now().Add(3 * time.Second)
		}
		b, _ := os.ReadFile(out)
		if strings.Contains(string(b), `"method": "chat.postMessage"`) && strings.Contains(string(b), "test.arg hello") {
			if strings.Contains(string(b), "xoxb-local-capture") {
				t.Errorf("the capture wrote the token:\n%s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capture got no post of the job:\n%s\nmaster log:\n%s", b, m.log)
		}
	}
}
