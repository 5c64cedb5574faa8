package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Tree is a merged configuration in Salt's layout — a file called name plus
// name.d/*.conf, later files overriding earlier ones key by key — kept as
// YAML nodes so that every error names the file and line of the key at
// fault. The master's configuration is one (name "master"), the agent's
// another ("minion"); both are read by the same code.
type Tree struct {
	// Files are the files read, in merge order.
	Files []string

	docs []treeDoc         // each file's top-level mapping, in order
	keys map[string]source // top-level key -> where its value was last set
}

type treeDoc struct {
	file string
	node ast.Node
}

// LoadTree reads path: a directory holding name and name.d/*.conf, or a
// single file. A missing path is an error when mustExist.
func LoadTree(path, name string, mustExist bool) (*Tree, error) {
	t := &Tree{keys: map[string]source{}}
	files, err := treeFiles(path, name, mustExist)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := t.read(f); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// treeFiles lists the files LoadTree(path, name) reads, in merge order.
func treeFiles(path, name string, mustExist bool) ([]string, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("config: %w", err)
	case !st.IsDir():
		return []string{path}, nil
	}
	var files []string
	if _, err := os.Stat(filepath.Join(path, name)); err == nil {
		files = append(files, filepath.Join(path, name))
	}
	extra, err := filepath.Glob(filepath.Join(path, name+".d", "*.conf"))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	sort.Strings(extra)
	return append(files, extra...), nil
}

func (t *Tree) read(file string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return fmt.Errorf("%s: %s", file, oneLine(err))
	}
	t.Files = append(t.Files, file)
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if _, isNull := doc.Body.(*ast.NullNode); isNull {
			continue
		}
		mapping, ok := Pairs(doc.Body)
		if !ok {
			return fmt.Errorf("%s:%d: the configuration must be a mapping of keys to values", file, doc.Body.GetToken().Position.Line)
		}
		t.docs = append(t.docs, treeDoc{file, doc.Body})
		for _, kv := range mapping {
			t.keys[Key(kv.Key)] = source{file: file, key: kv.Key, node: kv.Value}
		}
	}
	return nil
}

// Has reports whether key is set in any file.
func (t *Tree) Has(key string) bool {
	_, ok := t.keys[key]
	return ok
}

// Decode decodes the value of the top-level key into out. It does nothing
// when the key is absent; errors name the file and line.
func (t *Tree) Decode(key string, out any) error {
	src, ok := t.keys[key]
	if !ok {
		return nil
	}
	return DecodeNode(src.file, []string{key}, src.node, out)
}

// DecodeAll decodes every file into out in merge order, so that out holds
// the merged values of the keys it declares (those not set keep what out
// held: its defaults).
func (t *Tree) DecodeAll(out any) error {
	for _, d := range t.docs {
		if err := DecodeNode(d.file, nil, d.node, out); err != nil {
			return err
		}
	}
	return nil
}

// Source returns the file that set key ("" when none did).
func (t *Tree) Source(key string) string { return t.keys[key].file }

// Where is "file:line" of key, for messages about its value.
func (t *Tree) Where(key string) string {
	src, ok := t.keys[key]
	if !ok {
		return "(default)"
	}
	return src.file + ":" + strconv.Itoa(nodeLine(src.key))
}

// Unknown reports every top-level key that is neither in known nor in
// salt, with file and line and the known key it probably means; keys in
// salt are reported as Salt options brine does not use.
func (t *Tree) Unknown(known, salt []string) []Problem {
	var out []Problem
	for _, key := range slices.Sorted(maps.Keys(t.keys)) {
		if slices.Contains(known, key) {
			continue
		}
		src := t.keys[key]
		p := Problem{File: src.file, Line: nodeLine(src.key), Key: strconv.Quote(key), Salt: slices.Contains(salt, key)}
		if !p.Salt {
			p.Suggestion = Closest(key, known)
		}
		out = append(out, p)
	}
	return out
}

// CheckKeys reports the first key under path that is not in known (see
// Decoder).
func (t *Tree) CheckKeys(known []string, path ...string) error {
	return checkKeys(t.keys, known, path)
}

var _ Decoder = (*Tree)(nil)
