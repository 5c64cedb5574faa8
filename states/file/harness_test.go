package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	filemod "github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// render is a stand-in template engine: {{ key }} is the context's value.
func render(_ context.Context, engine, _ string, src []byte, c map[string]any) ([]byte, error) {
	if engine != "jinja" {
		return nil, fmt.Errorf("unknown template engine %s", engine)
	}
	s := string(src)
	for k, v := range c {
		s = strings.ReplaceAll(s, "{{ "+k+" }}", fmt.Sprint(v))
	}
	if strings.Contains(s, "{{") {
		return nil, fmt.Errorf("undefined variable in %q", s)
	}
	return []byte(s), nil
}

type harness struct {
	t     *testing.T
	dir   string
	files *modulestest.Files
	env   *modules.Env
	reg   *function.Registry
	low   map[string]any
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	testenv.NeedRoot(t, "the file state tests change owners: run them as root")
	files := &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{
		"base": {
			"conf/app.conf":     "port = 80\n",
			"conf/fallback":     "fallback\n",
			"conf/tmpl.conf":    "greeting = {{ greeting }} {{ who }}\n",
			"tree/a.txt":        "a\n",
			"tree/sub/b.txt":    "b\n",
			"tree/sub/deep/c":   "c\n",
			"tree/skip.tmp":     "tmp\n",
			"binary/blob":       "\x00\x01\x02",
			"tmpltree/t.conf":   "who = {{ who }}\n",
			"scripts/unrelated": "x\n",
		},
		"dev": {"conf/app.conf": "port = 8080\n"},
	}}
	env := &modules.Env{ID: "web01", Grains: func() map[string]any {
		return map[string]any{"motd": "Welcome", "os": map[string]any{"family": "Debian"}}
	}, Opts: func() map[string]any { return map[string]any{} }, CacheDir: t.TempDir(), Files: files,
		Pillar: func(context.Context, bool) (map[string]any, error) {
			return map[string]any{"users": map[string]any{"key": "secret"}}, nil
		}}
	if _, err := modules.Registry(env, filemod.Module); err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, dir: t.TempDir(), files: files, env: env, reg: reg}
}

func (h *harness) path(p ...string) string { return filepath.Join(append([]string{h.dir}, p...)...) }

func (h *harness) run(test bool, fun string, kwargs map[string]any) state.Result {
	h.t.Helper()
	ctx := state.With(context.Background(), &state.Running{Test: test, Saltenv: "base", Template: render, Low: h.low})
	out, err := h.reg.Call(ctx, fun, nil, kwargs, nil)
	if err != nil {
		h.t.Fatalf("%s %v: %v", fun, kwargs, err)
	}
	return out.(state.Result)
}

func (h *harness) write(p, body string, mode os.FileMode) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) read(p string) string {
	h.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatalf("read %s: %v", p, err)
	}
	return string(b)
}

func (h *harness) mode(p string) string {
	h.t.Helper()
	st, err := filemod.Stats(p, "", false)
	if err != nil {
		h.t.Fatal(err)
	}
	return st["mode"].(string)
}

// step is one state call and what it must return; check, when set, looks
// at the machine afterwards.
type step struct {
	name    string
	fun     string
	test    bool
	kwargs  map[string]any
	result  any
	comment string
	changes map[string]any
	check   func(h *harness) string
}

// any changes value matches whatever is there.
const anything = "<anything>"

func changesMatch(got, want map[string]any) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		if w == anything {
			continue
		}
		if wm, ok := w.(map[string]any); ok {
			gm, ok := g.(map[string]any)
			if !ok || !changesMatch(gm, wm) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

func (h *harness) steps(steps []step) {
	h.t.Helper()
	for _, s := range steps {
		r := h.run(s.test, s.fun, s.kwargs)
		if state.Value(r.Result) != s.result || r.Comment != s.comment || !changesMatch(r.Changes, s.changes) {
			h.t.Errorf("%s: got result %v comment %q changes %#v\nwant result %v comment %q changes %#v",
				s.name, state.Value(r.Result), r.Comment, r.Changes, s.result, s.comment, s.changes)
			continue
		}
		if s.check != nil {
			if msg := s.check(h); msg != "" {
				h.t.Errorf("%s: %s", s.name, msg)
			}
		}
	}
}
