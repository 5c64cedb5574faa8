package config

import (
	"errors"
	"testing"

	"github.com/goccy/go-yaml/parser"
)

func TestYAMLHelpers(t *testing.T) {
	f, err := parser.ParseBytes([]byte("\"quoted key\": 1\nplain: [a]\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	pairs, ok := Pairs(f.Docs[0].Body)
	if !ok || len(pairs) != 2 || Key(pairs[0].Key) != "quoted key" || Key(pairs[1].Key) != "plain" {
		t.Fatalf("pairs %v %v", pairs, ok)
	}
	if _, ok := Pairs(pairs[1].Value); ok {
		t.Error("a sequence taken for a mapping")
	}

	_, err = parser.ParseBytes([]byte("a: 1\nb: [1,\n"), 0)
	if line, msg := ErrorLine(err, 0); line != 2 || msg == "" {
		t.Errorf("ErrorLine = %d, %q; want line 2", line, msg)
	}
	if line, msg := ErrorLine(errors.New("plain"), 7); line != 7 || msg != "plain" {
		t.Errorf("ErrorLine of a non-YAML error = %d, %q", line, msg)
	}
}
