package jinja

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/py"
)

// Salt's filters on paths and files of the host rendering the template
// (salt/utils/path.py, salt/utils/files.py, salt/utils/user.py).

// pyNormpath is Python's posixpath.normpath: "" is ".", and exactly two
// leading slashes stay.
func pyNormpath(p string) string {
	if p == "" {
		return "."
	}
	out := path.Clean(p)
	if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
		out = "/" + out
	}
	return out
}

// filterPathJoin is Salt's path_join(*parts, use_posixpath=False): each
// part normalised, the later ones' leading slashes dropped, joined and
// normalised again.
func filterPathJoin(_ *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	for k := range va.KwArgs {
		if k != "use_posixpath" {
			return exec.AsValue(fmt.Errorf("path_join: the following keyword arguments are not valid: %s=%s", k, va.KwArgs[k].String()))
		}
	}
	parts := []string{jinjaStr(GoValue(in))}
	for _, a := range va.Args {
		parts = append(parts, jinjaStr(GoValue(a)))
	}
	root := pyNormpath(parts[0])
	if len(parts) == 1 {
		return exec.AsValue(root)
	}
	rest := []string{root}
	for _, p := range parts[1:] {
		rest = append(rest, strings.TrimLeft(pyNormpath(p), "/"))
	}
	return exec.AsValue(pyNormpath(py.PathJoin(rest...)))
}

// filterWhich is Salt's which: the executable's path, searching PATH and
// then the system's bin directories; None when not found.
func filterWhich(in any, _ []any) (any, error) {
	exe := jinjaStr(in)
	if in == nil || exe == "" {
		return nil, nil
	}
	isExec := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && accessX(p)
	}
	if isExec(exe) {
		return exe, nil
	}
	dirs := filepath.SplitList(os.Getenv("PATH"))
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[d] = true
	}
	for _, d := range []string{"/sbin", "/bin", "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		if !seen[d] {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		p := pyJoin(d, exe)
		if isExec(p) {
			return p, nil
		}
	}
	return nil, nil
}

// pyJoin is Python's os.path.join of two parts.
func pyJoin(a, b string) string {
	switch {
	case strings.HasPrefix(b, "/"):
		return b
	case a == "" || strings.HasSuffix(a, "/"):
		return a + b
	}
	return a + "/" + b
}

// isBinFile is Salt's is_bin_file: a file whose first 2048 bytes are not
// UTF-8 or are more than 30% control characters (or hold a NUL).
func isBinFile(in any, _ []any) (any, error) {
	p := jinjaStr(in)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false, nil
	}
	block, err := readHead(p, 2048)
	if err != nil {
		return false, nil
	}
	if !utf8.Valid(block) {
		return true, nil
	}
	s := string(block)
	if s == "" {
		return false, nil
	}
	if strings.ContainsRune(s, 0) {
		return true, nil
	}
	text, nontext := 0, 0
	for _, r := range s {
		text++
		if !(r >= 32 && r < 127 || strings.ContainsRune("\n\r\t\b", r)) {
			nontext++
		}
	}
	return float64(nontext)/float64(text) > 0.30, nil
}

// isTextFile is Salt's is_text_file: a file whose first 512 bytes hold
// no NUL and are UTF-8 or at most 30% control bytes.
func isTextFile(in any, _ []any) (any, error) {
	block, err := readHead(jinjaStr(in), 512)
	if err != nil {
		return false, nil
	}
	if bytes.IndexByte(block, 0) >= 0 {
		return false, nil
	}
	if len(block) == 0 || utf8.Valid(block) {
		return true, nil
	}
	nontext := 0
	for _, c := range block {
		if !(c >= 32 && c < 127 || bytes.IndexByte([]byte("\n\r\t\f\b"), c) >= 0) {
			nontext++
		}
	}
	return float64(nontext)/float64(len(block)) <= 0.30, nil
}

func readHead(p string, n int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:m], nil
}

func isEmptyFile(in any, _ []any) (any, error) {
	st, err := os.Stat(jinjaStr(in))
	if err != nil {
		return false, nil
	}
	return st.Size() == 0, nil
}

// listFiles is Salt's list_files: the directory, and every file and
// directory under it (sorted; Salt's comes from a set).
func listFiles(in any, _ []any) (any, error) {
	dir := jinjaStr(in)
	out := []any{dir}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		out = append(out, p)
		return nil
	})
	return pySet(out), nil
}

// fileHashsum is Salt's file_hashsum(path, form='sha256').
func fileHashsum(in any, args []any) (any, error) {
	form := jinjaStr(args[0])
	h, ok := hashers[form]
	if !ok {
		return nil, pyErr("Invalid hash type: %s", form)
	}
	f, err := os.Open(jinjaStr(in))
	if err != nil {
		return nil, fmt.Errorf("[Errno 2] No such file or directory: %s", pyRepr(jinjaStr(in)))
	}
	defer f.Close()
	d := h()
	if _, err := io.Copy(d, f); err != nil {
		return nil, err
	}
	return hex.EncodeToString(d.Sum(nil)), nil
}

// getUID is Salt's get_uid(user=None): the user's uid, this process's
// without one, None for a user that does not exist.
func getUID(in any, _ []any) (any, error) {
	if in == nil {
		return os.Geteuid(), nil
	}
	u, err := user.Lookup(jinjaStr(in))
	if err != nil {
		return nil, nil
	}
	n, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, nil
	}
	return n, nil
}
