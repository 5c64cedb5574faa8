// Package saltpeer runs a real Salt 3006.6 for tests: the tree to import
// it from, and salt-minion and salt-call processes with a configuration
// of their own, so that brine is held to what Salt itself does rather than
// to a reading of its source.
//
// The tree is SALT_SRC (an unpacked Salt release) or the archive
// ../shared/peers/salt-3006.6.tar.gz beside the repository, unpacked once
// per test process; with neither, a test fails naming both, as the peers'
// README asks. Salt runs on Debian's /usr/bin/python3 with the Debian
// packages that README lists (make deps installs them), never on another
// python3 on the PATH, which may lack them.
package saltpeer

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Archive is the Salt release in ../shared/peers.
const Archive = "salt-3006.6.tar.gz"

// Python is Debian's Python 3, which has the packages Salt needs.
const Python = "/usr/bin/python3"

var (
	once    sync.Once
	tree    string
	treeErr error
	tmpDir  string // this process's unpacked tree and byte-code cache
)

// Find returns the Salt tree: SALT_SRC, or the archive unpacked into a
// temporary directory the first time it is asked for. That directory also
// caches the byte code of every Salt process the tests start, so only the
// first one compiles Salt; Cleanup removes it.
func Find() (string, error) {
	once.Do(func() { tree, treeErr = find() })
	return tree, treeErr
}

// Tree is Find for a test: without a Salt tree the test fails, saying how
// to give it one.
func Tree(t testing.TB) string {
	t.Helper()
	s, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Cleanup removes what Find unpacked; a package's TestMain calls it after
// its tests ran.
func Cleanup() {
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
}

func find() (string, error) {
	var src string
	if s := os.Getenv("SALT_SRC"); s != "" {
		if _, err := os.Stat(filepath.Join(s, "salt", "crypt.py")); err != nil {
			return "", fmt.Errorf("SALT_SRC=%s is not an unpacked Salt tree (no salt/crypt.py): %w", s, err)
		}
		src = s
	}
	var archive string
	if src == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		archive = filepath.Join(filepath.Dir(root), "shared", "peers", Archive)
		if _, err := os.Stat(archive); err != nil {
			return "", fmt.Errorf("no Salt tree: set SALT_SRC to an unpacked Salt 3006.6 (tar xzf %s; SALT_SRC=.../salt-3006.6), "+
				"or put %s at ../shared/peers/ beside the repository: %w", Archive, Archive, err)
		}
	}
	var err error
	if tmpDir, err = os.MkdirTemp("", "brine-saltpeer-"); err != nil {
		return "", err
	}
	if src != "" {
		return filepath.Abs(src)
	}
	if out, err := exec.Command("tar", "xzf", archive, "-C", tmpDir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("unpacking %s: %w: %s", archive, err, out)
	}
	return filepath.Join(tmpDir, "salt-3006.6"), nil
}

// repoRoot is the directory of brine's go.mod above the working directory
// (a test runs in its package's directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/brinehq/brine\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no Salt tree: set SALT_SRC to an unpacked Salt 3006.6 (the working directory is not in brine's repository, so ../shared/peers cannot be found)")
		}
		dir = parent
	}
}

// Command is one of Salt's scripts (salt-minion, salt-call …) run from
// tree with Debian's Python: PYTHONPATH is the tree and its shim (the
// looseversion module Debian 12 lacks). Byte code goes to Find's cache,
// not into a SALT_SRC tree that is not the test's to write.
func Command(tree, script string, args ...string) *exec.Cmd {
	cmd := exec.Command(Python, append([]string{filepath.Join(tree, "scripts", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+tree+":"+filepath.Join(tree, "shim"))
	if tmpDir != "" {
		cmd.Env = append(cmd.Env, "PYTHONPYCACHEPREFIX="+filepath.Join(tmpDir, "pycache"))
	}
	return cmd
}
