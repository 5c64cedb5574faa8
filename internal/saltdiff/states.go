package saltdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/function"
)

// StateCase is one case of testdata/salt/states/cases.yaml: an SLS tree
// run as `salt-call --local state.sls requisite` runs it. SLS is written as
// requisite.sls, Files beside it; Mods, when set, is run instead of
// requisite; Test is test=True.
type StateCase struct {
	Name  string            `yaml:"name"`
	SLS   *string           `yaml:"sls"`
	Files map[string]string `yaml:"files"`
	Mods  string            `yaml:"mods"`
	Test  bool              `yaml:"test"`
	// Kwargs are more arguments of state.sls (__pub_jid, which Salt's
	// parallel states need).
	Kwargs map[string]any `yaml:"kwargs"`
	// From names the Salt test the case was ported from.
	From string `yaml:"from"`
}

// StateResult is one state's result as the suite compares it: what does
// not change from run to run (not a pid, a duration or a start time).
type StateResult struct {
	Result any `json:"result"`
	// Comment is a string, or a list as Salt gives a state that onlyif,
	// unless or creates skipped.
	Comment any `json:"comment"`
	// Changes are the changes' keys, sorted.
	Changes any `json:"changes"`
	RunNum  any `json:"run_num"`
}

// StateOutcome is what one side made of a case: the states' results by
// state key, or the errors state.sls returned instead of running.
type StateOutcome struct {
	States map[string]StateResult `json:"states,omitempty"`
	Error  []string               `json:"error,omitempty"`
}

// StateOracle is the file scripts/salt-oracle.py --suite states writes.
type StateOracle struct {
	Salt  string                  `json:"salt"`
	Cases map[string]StateOutcome `json:"cases"`
}

// LoadStateCases reads the states suite's cases.yaml.
func LoadStateCases(file string) ([]StateCase, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cs []StateCase
	if err := yaml.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if c.Name == "" || seen[c.Name] || (c.SLS == nil && c.Mods == "") {
			return nil, fmt.Errorf("%s: case %d: a unique name and an sls (or mods) are required (got %q)", file, i+1, c.Name)
		}
		seen[c.Name] = true
	}
	return cs, nil
}

// LoadStateOracle reads Salt's results. Numbers stay json.Number, so that
// 1 and 1.0 differ as they do in Python.
func LoadStateOracle(file string) (*StateOracle, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var o StateOracle
	if err := d.Decode(&o); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &o, nil
}

// Tree is a case's files as file_roots base holds them.
func (c StateCase) Tree() map[string]string {
	tree := make(map[string]string, len(c.Files)+1)
	for k, v := range c.Files {
		tree[k] = v
	}
	if c.SLS != nil {
		tree["requisite.sls"] = *c.SLS
	}
	return tree
}

// RunStateCase runs c through state.sls of reg (modules/state's, over the
// case's tree) and keeps of its return what the suite compares.
func RunStateCase(ctx context.Context, reg *function.Registry, c StateCase) StateOutcome {
	mods := c.Mods
	if mods == "" {
		mods = "requisite"
	}
	kwargs := map[string]any{"mods": mods}
	for k, v := range c.Kwargs {
		kwargs[k] = v
	}
	if c.Test {
		kwargs["test"] = true
	}
	out, err := reg.Call(ctx, "state.sls", nil, kwargs, nil)
	if err != nil {
		return StateOutcome{Error: []string{"brine fails: " + err.Error()}}
	}
	return SummariseStates(out)
}

// SummariseStates is a state return as the oracle's summarise keeps it.
func SummariseStates(out any) StateOutcome {
	ret, ok := out.(map[string]any)
	if !ok {
		var errs []string
		rv := reflect.ValueOf(out)
		if rv.Kind() == reflect.Slice {
			for i := 0; i < rv.Len(); i++ {
				errs = append(errs, fmt.Sprint(rv.Index(i).Interface()))
			}
		} else {
			errs = append(errs, fmt.Sprint(out))
		}
		return StateOutcome{Error: errs}
	}
	o := StateOutcome{States: make(map[string]StateResult, len(ret))}
	for key, v := range ret {
		res, _ := v.(map[string]any)
		sr := StateResult{Result: res["result"], RunNum: jsonNumber(res["__run_num__"])}
		sr.Comment = res["comment"]
		if s, ok := sr.Comment.(string); ok && strings.HasPrefix(s, failedPrefix) {
			items := strings.Split(s[len(failedPrefix):], ", ")
			sort.Strings(items)
			sr.Comment = failedPrefix + strings.Join(items, ", ")
		}
		switch ch := res["changes"].(type) {
		case map[string]any:
			keys := make([]string, 0, len(ch))
			for k := range ch {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			sr.Changes = keys
		default:
			sr.Changes = ch
		}
		o.States[key] = sr
	}
	return o
}

// failedPrefix starts the comment of a state whose requisite failed: Salt
// lists those in the order of a Python set, which both sides' summaries
// sort.
const failedPrefix = "One or more requisite failed: "

func jsonNumber(v any) any {
	switch v := v.(type) {
	case int:
		return json.Number(fmt.Sprint(v))
	case int64:
		return json.Number(fmt.Sprint(v))
	case float64:
		return json.Number(fmt.Sprint(v))
	}
	return v
}

// SameStates reports whether brine's outcome is Salt's, and if not, the
// first difference.
func SameStates(salt, brine StateOutcome) (bool, string) {
	if len(salt.Error) > 0 || len(brine.Error) > 0 {
		if reflect.DeepEqual(salt.Error, brine.Error) {
			return true, ""
		}
		switch {
		case len(brine.Error) == 0:
			return false, fmt.Sprintf("Salt refuses (%s), brine runs %d states", strings.Join(salt.Error, " | "), len(brine.States))
		case len(salt.Error) == 0:
			return false, fmt.Sprintf("Salt runs %d states, brine refuses (%s)", len(salt.States), strings.Join(brine.Error, " | "))
		}
		return false, fmt.Sprintf("Salt's errors %q, brine's %q", salt.Error, brine.Error)
	}
	var diffs []string
	keys := map[string]bool{}
	for k := range salt.States {
		keys[k] = true
	}
	for k := range brine.States {
		keys[k] = true
	}
	for _, k := range sortedNames(keys) {
		s, sok := salt.States[k]
		b, bok := brine.States[k]
		switch {
		case !bok:
			diffs = append(diffs, fmt.Sprintf("%s: Salt runs it, brine does not", k))
		case !sok:
			diffs = append(diffs, fmt.Sprintf("%s: brine runs it, Salt does not", k))
		default:
			if d := resultDiff(s, b); d != "" {
				diffs = append(diffs, k+": "+d)
			}
		}
	}
	if len(diffs) == 0 {
		return true, ""
	}
	return false, strings.Join(diffs, "; ")
}

func resultDiff(s, b StateResult) string {
	var d []string
	if fmt.Sprint(s.Result) != fmt.Sprint(b.Result) {
		d = append(d, fmt.Sprintf("result Salt %v, brine %v", s.Result, b.Result))
	}
	if fmt.Sprintf("%#v", s.Comment) != fmt.Sprintf("%#v", b.Comment) {
		d = append(d, fmt.Sprintf("comment Salt %#v, brine %#v", s.Comment, b.Comment))
	}
	if fmt.Sprint(s.Changes) != fmt.Sprint(b.Changes) {
		d = append(d, fmt.Sprintf("changes Salt %v, brine %v", s.Changes, b.Changes))
	}
	if fmt.Sprint(s.RunNum) != fmt.Sprint(b.RunNum) {
		d = append(d, fmt.Sprintf("__run_num__ Salt %v, brine %v", s.RunNum, b.RunNum))
	}
	return strings.Join(d, ", ")
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
