package saltzmq

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Salt's own peer: libzmq 4.3 through Debian's python3-zmq, with the
// sockets set up as salt-minion 3006 sets up its REQ and SUB
// (testdata/saltpeer.py), against this package's servers advertising
// ZMTP 3.0 (as after the gateway's handover) and 3.1 (libzmq then sends
// its subscriptions as SUBSCRIBE commands). They fail, not skip, without
// python3-zmq.

var (
	pyzmqOnce sync.Once
	pyzmqPath string
	pyzmqWhy  []string
)

// pyzmq is a python3 with the zmq module: python3 on PATH may be a pyenv
// or venv interpreter without it, so Debian's /usr/bin/python3 is tried
// after it.
func pyzmq(t *testing.T) string {
	t.Helper()
	pyzmqOnce.Do(func() {
		for _, name := range []string{"python3", "/usr/bin/python3"} {
			path, err := exec.LookPath(name)
			if err == nil {
				var out []byte
				out, err = exec.Command(path, "-c", "import zmq").CombinedOutput()
				if err == nil {
					pyzmqPath = path
					return
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				err = errors.New(lines[len(lines)-1])
			}
			pyzmqWhy = append(pyzmqWhy, name+": "+err.Error())
		}
	})
	if pyzmqPath == "" {
		t.Fatalf("the interop tests need python3 with pyzmq (Debian: apt-get install python3-zmq; make deps does): %s",
			strings.Join(pyzmqWhy, "; "))
	}
	return pyzmqPath
}

// saltPeer is testdata/saltpeer.py (or saltmasterpeer.py) running.
type saltPeer struct {
	cmd    *exec.Cmd
	lines  chan map[string]any
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

func startSaltPeer(t *testing.T, cfg map[string]any) *saltPeer {
	t.Helper()
	return startPyPeer(t, "testdata/saltpeer.py", cfg)
}

// startPyPeer runs a python3-zmq script of testdata with cfg as its one
// line of input.
func startPyPeer(t *testing.T, script string, cfg map[string]any) *saltPeer {
	t.Helper()
	py := pyzmq(t)
	line, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	p := &saltPeer{cmd: exec.CommandContext(ctx, py, script), lines: make(chan map[string]any, 64), done: make(chan struct{})}
	p.cmd.Stdin = bytes.NewReader(append(line, '\n'))
	p.cmd.Stderr = &p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsed": sc.Text()}
			}
			p.lines <- m
		}
		p.err = p.cmd.Wait()
		close(p.lines)
		close(p.done)
	}()
	// A peer still running when the test ends is killed, and waited for.
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// next returns the peer's next line; it fails the test when the peer ended
// or printed nothing for 30 s.
func (p *saltPeer) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			<-p.done
			t.Fatalf("salt peer ended: %v: %s", p.err, strings.TrimSpace(p.stderr.String()))
		}
		if u, bad := m["unparsed"]; bad {
			t.Fatalf("salt peer printed %q", u)
		}
		return m
	case <-time.After(30 * time.Second):
		t.Fatalf("salt peer silent for 30 s: %s", p.stderr.String())
		return nil
	}
}

// peerFrames decodes a {"frames": [...]} line.
func peerFrames(t *testing.T, m map[string]any) [][]byte {
	t.Helper()
	list, ok := m["frames"].([]any)
	if !ok {
		t.Fatalf("want frames, got %v", m)
	}
	var out [][]byte
	for _, f := range list {
		b, err := base64.StdEncoding.DecodeString(f.(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// finish reads the peer's last line and waits for it to exit.
func (p *saltPeer) finish(t *testing.T, want int) {
	t.Helper()
	m := p.next(t)
	if n, ok := m["done"].(float64); !ok || int(n) != want {
		t.Fatalf("salt peer ended with %v, want done %d", m, want)
	}
	<-p.done
	if p.err != nil {
		t.Fatalf("salt peer: %v: %s", p.err, p.stderr.String())
	}
}

func b64(s []byte) string { return base64.StdEncoding.EncodeToString(s) }

func TestInteropSaltREQ(t *testing.T) {
	for _, minor := range []byte{0, 1} {
		t.Run(fmt.Sprintf("ZMTP 3.%d", minor), func(t *testing.T) {
			s, err := NewRequestServer(RequestConfig{Handler: echo}, testLog(t))
			if err != nil {
				t.Fatal(err)
			}
			s.minor = minor
			addr := serve(t, s.Serve)
			big := bytes.Repeat([]byte{0x93, 0x01, 0xa1, 'x'}, 1<<18) // 1 MiB, msgpack-ish
			payloads := [][]byte{[]byte("\x82\xa3cmd\xa5_auth\xa2id\xa7minion1"), {}, big}
			var reqs []string
			for _, pl := range payloads {
				reqs = append(reqs, b64(pl))
			}
			p := startSaltPeer(t, map[string]any{"mode": "req", "endpoint": "tcp://" + addr, "requests": reqs, "timeout_ms": 10000})
			for _, pl := range payloads {
				got := peerFrames(t, p.next(t))
				if len(got) != 1 || !bytes.Equal(got[0], append([]byte("re:"), pl...)) {
					t.Fatalf("reply of %d frames, first %.40q; want re:%.40q", len(got), got[0], pl)
				}
			}
			p.finish(t, len(payloads))
		})
	}
}

func TestInteropSaltSUB(t *testing.T) {
	hexid := func(id string) []byte {
		h := sha1.Sum([]byte(id))
		return []byte(hex.EncodeToString(h[:]))
	}
	tests := []struct {
		name      string
		subscribe [][]byte
		publish   [][][]byte
		want      [][][]byte
	}{
		{
			name:      "everything",
			subscribe: [][]byte{{}},
			publish:   [][][]byte{{[]byte("load 1")}, {[]byte("load 2")}},
			want:      [][][]byte{{[]byte("load 1")}, {[]byte("load 2")}},
		},
		{
			name:      "zmq_filtering",
			subscribe: [][]byte{[]byte("broadcast"), hexid("minion1")},
			publish: [][][]byte{
				{[]byte("broadcast"), []byte("to all")},
				{hexid("minion2"), []byte("to minion2")},
				{hexid("minion1"), []byte("to minion1")},
			},
			want: [][][]byte{{[]byte("broadcast"), []byte("to all")}, {hexid("minion1"), []byte("to minion1")}},
		},
	}
	for _, minor := range []byte{0, 1} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s ZMTP 3.%d", tt.name, minor), func(t *testing.T) {
				p := NewPublisher(PublisherConfig{}, testLog(t))
				p.minor = minor
				addr := serve(t, p.Serve)
				var subs []string
				for _, s := range tt.subscribe {
					subs = append(subs, b64(s))
				}
				peer := startSaltPeer(t, map[string]any{
					"mode": "sub", "endpoint": "tcp://" + addr, "subscribe": subs, "identity": "minion1",
					"count": len(tt.want), "timeout_ms": 10000,
				})
				if m := peer.next(t); m["connected"] != true {
					t.Fatalf("want connected, got %v", m)
				}
				eventually(t, "the subscriptions", func() bool {
					for _, s := range tt.subscribe {
						if p.subscribedTo(string(s)) != 1 {
							return false
						}
					}
					return true
				})
				for _, m := range tt.publish {
					p.Publish(m...)
				}
				for _, want := range tt.want {
					got := peerFrames(t, peer.next(t))
					if len(got) != len(want) {
						t.Fatalf("got %q, want %q", got, want)
					}
					for i := range got {
						if !bytes.Equal(got[i], want[i]) {
							t.Fatalf("got %q, want %q", got, want)
						}
					}
				}
				peer.finish(t, len(tt.want))
			})
		}
	}
}
