package saltproto

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/saltpeer"
)

// The differential tests run Salt 3006.6's own Python (testdata/oracle.py)
// beside this package. Salt's tree comes from SALT_SRC, or is unpacked
// from ../shared/peers/salt-3006.6.tar.gz next to the repository
// (internal/saltpeer); with neither the tests fail, saying so. The Python
// needs Debian's python3 with python3-msgpack, python3-pycryptodome,
// python3-zmq, python3-yaml, python3-jinja2, python3-markupsafe,
// python3-tornado, python3-psutil, python3-distro, python3-packaging,
// python3-requests and python3-jmespath.

var (
	oracleOnce sync.Once
	theOracle  *oracle
	oracleErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if theOracle != nil {
		theOracle.close()
	}
	saltpeer.Cleanup()
	os.Exit(code)
}

// oracle is one long-running testdata/oracle.py: importing salt.crypt
// takes a second, so every test shares it.
type oracle struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startOracle() (*oracle, error) {
	src, err := saltpeer.Find()
	if err != nil {
		return nil, err
	}
	script, err := filepath.Abs(filepath.Join("testdata", "oracle.py"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/usr/bin/python3", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src+":"+filepath.Join(src, "shim"), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start /usr/bin/python3 (Debian's python3 is needed): %w", err)
	}
	o := &oracle{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	// A first call proves the imports (Debian packages) are there.
	if _, err := o.do(map[string]any{"op": "genkey"}); err != nil {
		o.close()
		return nil, fmt.Errorf("Salt's Python does not start (are python3-msgpack, python3-pycryptodome, python3-zmq, python3-tornado, python3-yaml, python3-jinja2, python3-psutil installed?): %w", err)
	}
	return o, nil
}

func (o *oracle) close() {
	o.in.Close()
	done := make(chan struct{})
	go func() { o.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		o.cmd.Process.Kill()
		<-done
	}
}

func (o *oracle) do(req map[string]any) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := o.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("oracle exited: %w", err)
	}
	var resp struct {
		OK    any    `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("oracle answer %q: %w", line, err)
	}
	if resp.Error != "" {
		return nil, errors.New(resp.Error)
	}
	return resp.OK, nil
}

// python is the shared oracle, started on first use; a test cannot run
// without it.
func python(t *testing.T) *oracle {
	t.Helper()
	oracleOnce.Do(func() { theOracle, oracleErr = startOracle() })
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return theOracle
}

// call runs op with args in Salt's Python and returns its answer.
func (o *oracle) call(t *testing.T, op string, args map[string]any) any {
	t.Helper()
	req := map[string]any{"op": op}
	for k, v := range args {
		req[k] = v
	}
	out, err := o.do(req)
	if err != nil {
		t.Fatalf("python %s: %v", op, err)
	}
	return out
}

func (o *oracle) callMap(t *testing.T, op string, args map[string]any) map[string]any {
	t.Helper()
	m, ok := o.call(t, op, args).(map[string]any)
	if !ok {
		t.Fatalf("python %s: answer is not a mapping", op)
	}
	return m
}

func (o *oracle) callString(t *testing.T, op string, args map[string]any) string {
	t.Helper()
	s, ok := o.call(t, op, args).(string)
	if !ok {
		t.Fatalf("python %s: answer is not a string", op)
	}
	return s
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// canon is oracle.py's canon of a value Loads decoded, normalized through
// JSON so that it compares with the oracle's answer.
func canon(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(canonOf(v))
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func canonOf(v any) any {
	switch t := v.(type) {
	case nil:
		return []any{"none"}
	case bool:
		return []any{"bool", t}
	case int:
		return []any{"int", strconv.Itoa(t)}
	case int64:
		return []any{"int", strconv.FormatInt(t, 10)}
	case uint64:
		return []any{"int", strconv.FormatUint(t, 10)}
	case float64:
		return []any{"float", py.Float(t)}
	case string:
		return []any{"str", t}
	case []byte:
		return []any{"bytes", hex.EncodeToString(t)}
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = canonOf(x)
		}
		return []any{"list", l}
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m["str:"+k] = canonOf(x)
		}
		return []any{"dict", m}
	case time.Time:
		s := t.Format("2006-01-02T15:04:05")
		if us := t.Nanosecond() / 1000; us != 0 {
			s += fmt.Sprintf(".%06d", us)
		}
		return []any{"datetime", s}
	case Constant:
		return []any{"const", t.Name, canonOf(t.Value)}
	}
	return []any{"other", fmt.Sprintf("%#v", v)}
}

// tempDir is a directory Python and Go both write keys into.
func tempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o755); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return d
}
