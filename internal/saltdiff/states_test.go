package saltdiff

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/modulestest"
	statemod "github.com/brinehq/brine/modules/state"
)

// stateSLS is modules/state's state.sls over tree as file_roots base, with
// a real agent's execution and state functions (cmd.run runs commands,
// unless and onlyif call cmd.retcode and the others).
func stateSLS(t *testing.T, env *modules.Env, tree map[string]string) *function.Registry {
	t.Helper()
	env.Files = &modulestest.Files{Dir: t.TempDir(), Tree: map[string]map[string]string{"base": tree}}
	funcs := env.Functions
	reg, err := modules.Registry(env, statemod.Module)
	if err != nil {
		t.Fatal(err)
	}
	env.Functions = funcs
	return reg
}

// TestStatesAsSalt runs Salt's own state test cases (testdata/salt/states,
// ported from tests/pytests/functional/modules/state) through brine's
// state.sls and compares each state's result, comment, changes' keys and
// run order with what Salt 3006.6 returned. A case that differs fails
// unless known.yaml gives the reason, and a listed one that now matches
// fails too.
func TestStatesAsSalt(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "salt", "states")
	cases, err := LoadStateCases(filepath.Join(dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	oracleFile := filepath.Join(dir, "salt-3006.6.json")
	if o := os.Getenv("SALTDIFF_ORACLE_STATES"); o != "" {
		oracleFile = o
	}
	oracle, err := LoadStateOracle(oracleFile)
	if err != nil {
		t.Fatalf("Salt's outputs: %v (make interop writes them from a Salt tree)", err)
	}
	known, err := LoadKnown(filepath.Join(dir, "known.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a := formulaAgent(t, pinnedGrains(t))
	env := &modules.Env{ID: a.ID(), Grains: a.Grains, Opts: a.Opts, Functions: a.Functions(), States: a.States()}
	ctx := context.Background()
	update := os.Getenv("SALTDIFF_UPDATE_KNOWN") == "1"
	names := map[string]bool{}
	now := map[string]string{}
	var differ []string
	for _, c := range cases {
		names[c.Name] = true
		salt, ok := oracle.Cases[c.Name]
		if !ok {
			t.Fatalf("%s has no Salt output in %s: run make interop", c.Name, oracleFile)
		}
		start := time.Now()
		got := RunStateCase(ctx, stateSLS(t, env, c.Tree()), c)
		if d := time.Since(start); d > time.Second {
			t.Logf("%s: slow, %s", c.Name, d.Round(time.Millisecond))
		}
		same, why := SameStates(salt, got)
		reason, isKnown := known[c.Name]
		if !same {
			differ = append(differ, c.Name)
			now[c.Name] = reason
			if !isKnown {
				now[c.Name] = "bug: " + truncate(why, 400)
			}
			t.Logf("%s: differs: %s", c.Name, truncate(why, 600))
		}
		switch {
		case update:
		case same && isKnown:
			t.Errorf("%s now runs as Salt does: remove it from known.yaml (it said: %s)", c.Name, reason)
		case !same && !isKnown:
			t.Errorf("%s: %s", c.Name, why)
		}
	}
	for name := range known {
		if !names[name] {
			t.Errorf("known.yaml names %s, which is not a case of cases.yaml", name)
		}
	}
	if update {
		writeKnown(t, filepath.Join(dir, "known.yaml"), now)
	}
	sort.Strings(differ)
	t.Logf("%d of %d state cases run as Salt does (Salt %s); differ: %s",
		len(cases)-len(differ), len(cases), oracle.Salt, strings.Join(differ, ", "))
}
