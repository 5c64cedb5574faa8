package reactor

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile feeds arbitrary rendered text to the YAML and compile stages:
// whatever a template renders, the result is reactions or errors, never a
// panic.
func FuzzCompile(f *testing.F) {
	ents, err := os.ReadDir(filepath.Join("..", "testdata", "reactor"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "reactor", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	funcs := testFuncs(f)
	f.Fuzz(func(t *testing.T, text []byte) {
		reactions, errs := compileFile("fuzz.sls", text, nil, funcs)
		for _, r := range reactions {
			if r.ID == "" && r.Fun == "" {
				t.Fatalf("empty reaction from %q", text)
			}
		}
		for _, err := range errs {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is not located", err)
			}
		}
	})
}
