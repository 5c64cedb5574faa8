// Package etcfile reads the colon-separated account databases
// (/etc/passwd, /etc/group) the user and group modules answer from,
// without cgo or NSS, under a root directory as Salt's root argument.
package etcfile

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Records returns the records of root's etc/<name> ("" or "/" is the
// machine's) that have fields fields, in file order; lines that are not
// records (comments, NIS "+"/"-" entries, malformed ones) are skipped.
func Records(root, name string, fields int) ([][]string, error) {
	if root == "" {
		root = "/"
	}
	b, err := os.ReadFile(filepath.Join(root, "etc", name))
	if err != nil {
		return nil, err
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(f) != fields || f[0] == "" || strings.ContainsAny(f[0][:1], "#+-") {
			continue
		}
		out = append(out, f)
	}
	return out, sc.Err()
}
