package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// slackCapture stands in for Slack's Web API (chat.postMessage,
// chat.update) on the hub's address, keeping every message in order, as
// examples/slack-capture.py does for the demo.
type slackCapture struct {
	srv  *http.Server
	addr string

	mu   sync.Mutex
	msgs []slackMsg
	n    int
}

type slackMsg struct {
	Method   string `json:"method"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts,omitempty"`
	Text     string `json:"text"`
}

func startSlack(addr string) (*slackCapture, error) {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		return nil, fmt.Errorf("slack capture: %w", err)
	}
	s := &slackCapture{addr: ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *slackCapture) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	s.mu.Lock()
	ts := r.PostForm.Get("ts")
	if ts == "" {
		s.n++
		ts = fmt.Sprintf("1700000000.%06d", s.n)
	}
	s.msgs = append(s.msgs, slackMsg{Method: method, TS: ts, ThreadTS: r.PostForm.Get("thread_ts"), Text: r.PostForm.Get("text")})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": "C0CHAOS", "ts": ts})
}

func (s *slackCapture) close() { _ = s.srv.Close() }

var (
	slackJID    = regexp.MustCompile(`\(jid (\d{20})\)`)
	slackResult = regexp.MustCompile(`^:(?:white_check_mark|x): \*([^*]+)\* (?:succeeded|failed)`)
)

// threads maps each job's jid to the agents whose results are threaded
// under its parent message (a parent counted once however often it was
// updated), and counts parents posted more than once.
func (s *slackCapture) threads() (map[string]map[string]bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	parents := map[string]string{} // ts → jid
	posted := map[string]int{}     // jid → parents posted
	out := map[string]map[string]bool{}
	for _, m := range s.msgs {
		if m.Method != "chat.postMessage" || m.ThreadTS != "" {
			continue
		}
		if j := slackJID.FindStringSubmatch(m.Text); j != nil {
			parents[m.TS] = j[1]
			posted[j[1]]++
			out[j[1]] = map[string]bool{}
		}
	}
	for _, m := range s.msgs {
		jid, ok := parents[m.ThreadTS]
		if m.Method != "chat.postMessage" || !ok {
			continue
		}
		if r := slackResult.FindStringSubmatch(m.Text); r != nil {
			out[jid][r[1]] = true
		}
	}
	dup := 0
	for _, n := range posted {
		if n > 1 {
			dup++
		}
	}
	return out, dup
}
