package curve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Interoperability with libzmq, through Debian's python3-zmq (pyzmq linked
// with libzmq 4.3 and libsodium). These tests fail, not skip, without it.

var (
	pythonOnce sync.Once
	pythonPath string
	pythonErr  string
)

// python returns a python3 that imports zmq with CURVE: the first python3 on
// PATH (which may be a pyenv or venv interpreter without pyzmq), else
// Debian's /usr/bin/python3.
func python(t *testing.T) string {
	t.Helper()
	pythonOnce.Do(func() {
		var tried []string
		for _, py := range []string{"python3", "/usr/bin/python3"} {
			path, err := exec.LookPath(py)
			if err != nil {
				tried = append(tried, py+": "+err.Error())
				continue
			}
			out, err := exec.Command(path, "-c", "import zmq; assert zmq.has('curve'), 'libzmq without CURVE'; print(zmq.zmq_version())").CombinedOutput()
			if err != nil {
				tried = append(tried, path+": "+strings.TrimSpace(lastLine(string(out))))
				continue
			}
			pythonPath = path
			return
		}
		pythonErr = strings.Join(tried, "; ")
	})
	if pythonPath == "" {
		t.Fatalf("the libzmq interop tests need python3 with pyzmq and CURVE (Debian: apt-get install python3-zmq, or make deps): %s", pythonErr)
	}
	return pythonPath
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// pyProc is a running test script.
type pyProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

// startPy runs testdata/<script> with cfg as one JSON line on stdin; the
// process is killed after timeout.
func startPy(t *testing.T, script string, cfg any, timeout time.Duration) *pyProc {
	t.Helper()
	py := python(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, py, "testdata/"+script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pyProc{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	return p
}

// wait closes stdin and returns stdout's remaining text and the exit error.
func (p *pyProc) wait() (string, error) {
	p.stdin.Close()
	out, _ := io.ReadAll(p.stdout)
	err := p.cmd.Wait()
	if err != nil {
		return string(out), errors.New(err.Error() + ": " + strings.TrimSpace(p.stderr.String()))
	}
	return string(out), nil
}

func b64(frames [][]byte) []string {
	var out []string
	for _, f := range frames {
		out = append(out, base64.StdEncoding.EncodeToString(f))
	}
	return out
}

// goServer accepts connections and runs the CURVE server handshake on each
// (a ROUTER, as the gateway is), then echoes every message, prefixed with
// "echo", until the peer goes.
type goServer struct {
	ln   net.Listener
	keys KeyPair
	auth Authorizer
	wg   sync.WaitGroup

	mu        sync.Mutex
	conns     []net.Conn
	handshook []error // one per connection: nil or the handshake's error
	served    int     // messages echoed
	serveErr  []error
}

func startGoServer(t *testing.T, keys KeyPair, auth Authorizer) *goServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &goServer{ln: ln, keys: keys, auth: auth}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	return s
}

func (s *goServer) endpoint() string { return "tcp://" + s.ln.Addr().String() }

func (s *goServer) serve(c net.Conn) {
	defer c.Close()
	p := open(c, NewServer(s.keys, s.auth), zmq4.Router, "brine-master", true)
	s.mu.Lock()
	s.handshook = append(s.handshook, p.err)
	s.mu.Unlock()
	if p.err != nil {
		return
	}
	sess := p.mech.Session()
	var buf []byte
	for {
		frames, err := readMessage(p.br, sess)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.mu.Lock()
				s.serveErr = append(s.serveErr, err)
				s.mu.Unlock()
			}
			return
		}
		buf = appendMessage(buf[:0], sess, append([][]byte{[]byte("echo")}, frames...)...)
		if _, err := c.Write(buf); err != nil {
			return
		}
		s.mu.Lock()
		s.served++
		s.mu.Unlock()
	}
}

func (s *goServer) stop() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// TestLibzmqClient: a pyzmq DEALER against the Go server.
func TestLibzmqClient(t *testing.T) {
	serverKeys := Derive([]byte("interop"), "master")
	clientKeys := mustKeyPair(t)
	other := mustKeyPair(t)
	frames := testFrames()
	tests := []struct {
		name      string
		serverKey Key // the python client's server key
		refuse    bool
		wantGo    func(t *testing.T, errs []error)
	}{
		{name: "accepted", serverKey: serverKeys.Public},
		{name: "wrong server key", serverKey: other.Public, wantGo: func(t *testing.T, errs []error) {
			for _, err := range errs {
				if !errors.Is(err, ErrServerKey) {
					t.Errorf("Go server: %v, want ErrServerKey", err)
				}
			}
		}},
		{name: "refused by Authorize", serverKey: serverKeys.Public, refuse: true, wantGo: func(t *testing.T, errs []error) {
			for _, err := range errs {
				if !errors.Is(err, errNotListed) || !strings.Contains(err.Error(), clientKeys.Public.String()) {
					t.Errorf("Go server: %v, want the Authorize refusal naming the client", err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			auth := func(c Key, meta map[string]string) error {
				mu.Lock()
				seen = append(seen, c.String()+" "+meta["Socket-Type"])
				mu.Unlock()
				if tt.refuse {
					return errNotListed
				}
				return nil
			}
			srv := startGoServer(t, serverKeys, auth)
			rounds := 3
			timeout := 5000
			if tt.wantGo != nil {
				rounds, timeout = 1, 1500
			}
			p := startPy(t, "pyclient.py", map[string]any{
				"endpoint":    srv.endpoint(),
				"server_key":  tt.serverKey.String(),
				"public":      clientKeys.Public.String(),
				"secret":      clientKeys.Secret.String(),
				"send":        b64(frames),
				"rounds":      rounds,
				"expect_none": tt.wantGo != nil,
				"timeout_ms":  timeout,
			}, time.Minute)
			out, err := p.wait()
			srv.stop()
			if err != nil {
				t.Fatalf("pyzmq client: %v (stdout %q)", err, out)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			for _, err := range srv.serveErr {
				t.Errorf("Go server: %v", err)
			}
			if len(srv.handshook) == 0 {
				t.Fatal("the Go server saw no connection")
			}
			if tt.wantGo == nil {
				if strings.TrimSpace(out) != "ok" || srv.served != rounds || srv.handshook[0] != nil {
					t.Fatalf("python says %q; Go served %d messages, handshakes %v", out, srv.served, srv.handshook)
				}
				if want := clientKeys.Public.String() + " DEALER"; len(seen) != 1 || seen[0] != want {
					t.Errorf("Authorize saw %q, want [%q]", seen, want)
				}
				return
			}
			if strings.TrimSpace(out) != "no reply" || srv.served != 0 {
				t.Fatalf("python says %q; Go served %d messages", out, srv.served)
			}
			t.Logf("%d handshakes refused, the first: %v", len(srv.handshook), srv.handshook[0])
			tt.wantGo(t, srv.handshook)
		})
	}
}

// TestLibzmqServer: the Go client (a DEALER) against a pyzmq ROUTER with
// curve_server=True.
func TestLibzmqServer(t *testing.T) {
	serverKeys, clientKeys, other := mustKeyPair(t), mustKeyPair(t), mustKeyPair(t)
	frames := testFrames()
	tests := []struct {
		name      string
		serverKey Key      // the Go client's server key
		allow     []string // the ZAP handler's accepted keys (nil: no handler)
		wantErr   []error
		wantText  string
	}{
		{name: "no ZAP handler", serverKey: serverKeys.Public},
		{name: "accepted by ZAP", serverKey: serverKeys.Public, allow: []string{clientKeys.Public.String()}},
		{name: "refused by ZAP", serverKey: serverKeys.Public, allow: []string{other.Public.String()}, wantErr: []error{ErrRefused}, wantText: "400"},
		{name: "wrong server key", serverKey: other.Public, wantErr: []error{ErrServerKey}, wantText: "server key mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startPy(t, "pyserver.py", map[string]any{
				"secret":      serverKeys.Secret.String(),
				"allow":       tt.allow,
				"expect":      b64(frames),
				"expect_none": tt.wantErr != nil,
			}, time.Minute)
			endpoint, err := p.stdout.ReadString('\n')
			if err != nil {
				out, werr := p.wait()
				t.Fatalf("pyzmq server did not start: %v, %q, %v", err, out, werr)
			}
			raw, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSpace(endpoint), "tcp://"))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			c := open(raw, NewClient(clientKeys, tt.serverKey), zmq4.Dealer, "", false)
			if tt.wantErr != nil {
				raw.Close()
				out, perr := p.wait()
				if perr != nil {
					t.Errorf("pyzmq server: %v (stdout %q)", perr, out)
				}
				if c.err == nil {
					t.Fatal("handshake succeeded")
				}
				for _, w := range tt.wantErr {
					if !errors.Is(c.err, w) {
						t.Errorf("error %q does not match %q", c.err, w)
					}
				}
				if !strings.Contains(c.err.Error(), tt.wantText) {
					t.Errorf("error %q does not contain %q", c.err, tt.wantText)
				}
				t.Logf("Go client: %v; pyzmq server: %s", c.err, strings.TrimSpace(p.stderr.String()))
				return
			}
			if c.err != nil {
				raw.Close()
				out, perr := p.wait()
				t.Fatalf("handshake: %v (pyzmq server: %q, %v)", c.err, out, perr)
			}
			if got := c.conn.Peer.Meta["Socket-Type"]; got != "ROUTER" {
				t.Errorf("server's Socket-Type = %q", got)
			}
			sess := c.mech.Session()
			var buf []byte
			for i := range 3 {
				msg := append(slices.Clone(frames), []byte{byte('0' + i)})
				buf = appendMessage(buf[:0], sess, msg...)
				if _, err := raw.Write(buf); err != nil {
					t.Fatal(err)
				}
				raw.SetReadDeadline(time.Now().Add(10 * time.Second))
				reply, err := readMessage(c.br, sess)
				if err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				if want := append([][]byte{[]byte("echo")}, msg...); !slices.EqualFunc(reply, want, bytes.Equal) {
					t.Fatalf("round %d: reply of %d frames differs from the request", i, len(reply))
				}
			}
			raw.Close()
			out, err := p.wait()
			if err != nil || strings.TrimSpace(out) != "served 3" {
				t.Fatalf("pyzmq server: %q, %v", out, err)
			}
		})
	}
}
