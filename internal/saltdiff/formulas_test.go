package saltdiff

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/agent"
	"github.com/brinehq/brine/internal/jinja"
	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/cp"
	"github.com/brinehq/brine/modules/modulestest"
	"github.com/brinehq/brine/state"
)

// formulaGrains are the pinned grains (testdata/salt/grains.yaml) with
// the formulas suite's own (testdata/salt/formulas/grains.yaml) over them,
// as the oracle merges them.
func formulaGrains(t *testing.T, dir string) map[string]any {
	t.Helper()
	g := pinnedGrains(t)
	b, err := os.ReadFile(filepath.Join(dir, "grains.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var extra map[string]any
	if err := yaml.Unmarshal(b, &extra); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		g[k] = v
	}
	return g
}

// formulaAgent is a real agent with the pinned grains (its configured
// grains), whose functions the SLS call through salt[…].
func formulaAgent(t *testing.T, grains map[string]any) *agent.Agent {
	t.Helper()
	dir := t.TempDir()
	g, err := yaml.Marshal(map[string]any{"grains": grains})
	if err != nil {
		t.Fatal(err)
	}
	conf := "id: " + grains["id"].(string) + "\npki_dir: pki\ncachedir: cache\nfile_client: local\n" + string(g)
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, agent.Options{Version: "saltdiff"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// formulaCompiler is the state compiler modules/state builds for a run
// (and bench/states/compile.go): the formula's tree as file_roots base, the
// pinned grains, its pillar (iterated in its written order), the agent's
// opts and salt functions (called with the pillar, as in a state run).
func formulaCompiler(a *agent.Agent, r *state.Renderer, tree string, grains, pillar map[string]any, order *keyorder.Order) *state.Compiler {
	pctx := modules.WithPillar(context.Background(), pillar)
	// cp's functions read the file server: the tree, as Salt's
	// file_client local reads file_roots (the agent has no master here).
	cpFuncs, err := modules.Registry(&modules.Env{Files: treeFiles(tree)}, cp.Module)
	if err != nil {
		panic(err)
	}
	salt := jinja.Salt(a.Functions().Names(), jinja.PillarOrdered(func(name string, args []any, kwargs map[string]any) (any, error) {
		if strings.HasPrefix(name, "cp.") {
			return cpFuncs.Call(pctx, name, args, kwargs, nil)
		}
		return a.Functions().Call(pctx, name, args, kwargs, nil)
	}, order))
	opts := a.Opts()
	tpillar := jinja.OrderedBy(pillar, order)
	return &state.Compiler{Renderer: r, Source: state.Roots{"base": {tree}}, Vars: func(saltenv string) map[string]any {
		return map[string]any{"grains": grains, "pillar": tpillar, "opts": opts, "salt": salt, "saltenv": saltenv}
	}}
}

// TestFormulasAsSalt compiles public Salt formulas (testdata/salt/formulas)
// as state.show_sls and state.show_low_sls do and compares with what Salt
// 3006.6 compiled. A formula renders as Salt does when its pillar and every
// SLS listed compare equal; a formula that differs fails unless known.yaml
// gives the reason, and a listed one that now matches fails too.
func TestFormulasAsSalt(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "salt", "formulas")
	cases, err := LoadFormulaCases(filepath.Join(dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	oracleFile := filepath.Join(dir, "salt-3006.6.json")
	if o := os.Getenv("SALTDIFF_ORACLE_FORMULAS"); o != "" {
		oracleFile = o
	}
	oracle, err := LoadFormulaOracle(oracleFile)
	if err != nil {
		t.Fatalf("Salt's outputs: %v (make interop writes them from a Salt tree)", err)
	}
	known, err := LoadKnown(filepath.Join(dir, "known.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	grains := formulaGrains(t, dir)
	a := formulaAgent(t, grains)
	r := state.NewRenderer()
	ctx := context.Background()
	update := os.Getenv("SALTDIFF_UPDATE_KNOWN") == "1"
	names := map[string]bool{}
	now := map[string]string{}
	var same, differ []string
	nsls := 0
	for _, c := range cases {
		names[c.Formula] = true
		fdir := filepath.Join(dir, c.Formula)
		diff := ""
		pillar, order, err := LoadPillar(ctx, r, filepath.Join(fdir, "pillar.yaml"))
		if err != nil {
			diff = "pillar.yaml: brine fails: " + err.Error()
		} else if sp, ok := oracle.Cases[c.Formula+"/pillar"]; ok {
			if d := pillarDiff(sp.Pillar, pillar); d != "" {
				diff = "pillar.yaml reads differently: " + d
			}
		}
		comp := formulaCompiler(a, r, filepath.Join(fdir, "tree"), grains, pillar, order)
		for _, sls := range c.SLS {
			nsls++
			key := c.Formula + "/" + sls
			salt, ok := oracle.Cases[key]
			if !ok {
				t.Fatalf("%s has no Salt output in %s: run make interop", key, oracleFile)
			}
			if diff != "" {
				continue
			}
			got := CompileSLS(ctx, comp, sls)
			if ok, why := SameCompiled(salt, got); !ok {
				diff = sls + ": " + why
			}
		}
		reason, isKnown := known[c.Formula]
		if diff != "" {
			now[c.Formula] = reason
			if !isKnown {
				now[c.Formula] = "bug: " + truncate(diff, 400)
			}
		}
		switch {
		case update:
		case diff == "" && isKnown:
			t.Errorf("%s now renders as Salt does: remove it from known.yaml (it said: %s)", c.Formula, reason)
		case diff != "" && !isKnown:
			t.Errorf("%s: %s", c.Formula, diff)
		}
		if diff == "" {
			same = append(same, c.Formula)
			t.Logf("%s: identical (%d SLS)", c.Formula, len(c.SLS))
		} else {
			differ = append(differ, c.Formula)
			t.Logf("%s: differs: %s", c.Formula, truncate(diff, 400))
		}
	}
	for name := range known {
		if !names[name] {
			t.Errorf("known.yaml names %s, which is not a formula of cases.yaml", name)
		}
	}
	if update {
		writeKnown(t, filepath.Join(dir, "known.yaml"), now)
	}
	sort.Strings(differ)
	t.Logf("%d of %d formulas render as Salt does (Salt %s; %d SLS, show_sls and show_low_sls); differ: %s",
		len(same), len(cases), oracle.Salt, nsls, strings.Join(differ, ", "))
}

// pillarDiff compares the pillar brine read with Salt's.
func pillarDiff(salt, brine map[string]any) string {
	s, err1 := Canonical(salt)
	b, err2 := Canonical(brine)
	if err1 != nil || err2 != nil {
		return "not comparable"
	}
	return FirstDiff("pillar", s, b)
}

// treeFiles is a formula's tree as the master's file server (saltenv
// base).
func treeFiles(tree string) *modulestest.Files {
	files := map[string]string{}
	_ = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(tree, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return &modulestest.Files{Dir: filepath.Join(os.TempDir(), "saltdiff-files"), Tree: map[string]map[string]string{"base": files}}
}
