package saltdiff

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/internal/keyorder"
	"github.com/brinehq/brine/state"
)

// FormulaCase is one formula of testdata/salt/formulas/cases.yaml: the
// SLS names compiled from its tree, with its pillar.
type FormulaCase struct {
	Formula string   `yaml:"formula"`
	SLS     []string `yaml:"sls"`
	// TestMode false keeps a formula out of the live test-mode comparison
	// (TestFormulasTestModeLive, make interop): it is compiled only. Each
	// SLS run live costs a Salt start-up, some seconds.
	TestMode *bool `yaml:"testmode"`
}

// Live tells whether the formula's SLS are also run with test=True by
// both sides (cases.yaml's testmode, true when not given).
func (c FormulaCase) Live() bool { return c.TestMode == nil || *c.TestMode }

// Compiled is what one side made of an SLS: the high data
// (state.show_sls) and the low chunks (state.show_low_sls), or the
// compile errors. A formula's "<formula>/pillar" entry holds the pillar
// instead.
type Compiled struct {
	High   map[string]any `json:"high,omitempty"`
	Low    []any          `json:"low,omitempty"`
	Error  []string       `json:"error,omitempty"`
	Pillar map[string]any `json:"pillar,omitempty"`
}

// FormulaOracle is the file scripts/salt-oracle.py --suite formulas
// writes: "<formula>/<sls>" (and "<formula>/pillar") to what Salt made.
type FormulaOracle struct {
	Salt  string              `json:"salt"`
	Cases map[string]Compiled `json:"cases"`
}

// LoadFormulaCases reads the formulas suite's cases.yaml.
func LoadFormulaCases(file string) ([]FormulaCase, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var cs []FormulaCase
	if err := yaml.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	seen := map[string]bool{}
	for i, c := range cs {
		if c.Formula == "" || seen[c.Formula] || len(c.SLS) == 0 {
			return nil, fmt.Errorf("%s: case %d: a unique formula and its SLS are required (got %q)", file, i+1, c.Formula)
		}
		seen[c.Formula] = true
	}
	return cs, nil
}

// LoadFormulaOracle reads Salt's compiled SLS. Numbers stay json.Number,
// so that 1 and 1.0 differ as they do in Python.
func LoadFormulaOracle(file string) (*FormulaOracle, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var o FormulaOracle
	if err := d.Decode(&o); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &o, nil
}

// LoadPillar reads a formula's pillar.yaml as a pillar SLS of plain YAML
// (the #!yaml renderer): with brine's own YAML reader, as Salt's side
// reads it with its own. It returns the pillar as plain maps, as the
// agent holds it, and its key order as written, which the templates
// iterate in as the agent's do (the master sends it in that order).
func LoadPillar(ctx context.Context, r *state.Renderer, file string) (map[string]any, *keyorder.Order, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	data, err := r.RenderSLS(ctx, Files{}, "base", filepath.Base(file), append([]byte("#!yaml\n"), b...), nil)
	if err != nil {
		return nil, nil, err
	}
	p, _ := state.Plain(data).(map[string]any)
	if p == nil {
		p = map[string]any{}
	}
	return p, keyorder.Of(data), nil
}

// CompileSLS compiles sls as brine's state.show_sls and
// state.show_low_sls do (modules/state: Compiler.Compile, High.Show,
// High.LowChunks and Chunk.Low).
func CompileSLS(ctx context.Context, c *state.Compiler, sls string) Compiled {
	h := c.Compile(ctx, "base", []string{sls})
	if len(h.Errors) > 0 {
		return Compiled{Error: h.Errors}
	}
	high := h.Show()
	chunks := h.LowChunks()
	low := make([]any, len(chunks))
	for i, ch := range chunks {
		low[i] = ch.Low()
	}
	return Compiled{High: high, Low: low}
}

// Canonical is v as Salt's JSON has it (numbers json.Number, floats as
// Python prints them: 1.0, not 1), so that brine's Go values and Salt's
// decoded JSON compare alike.
func Canonical(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string, json.Number:
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			c, err := Canonical(x)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			c, err := Canonical(x)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return json.Number(strconv.FormatInt(int64(v), 10)), nil
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(v, 10)), nil
	case float64:
		return json.Number(pyFloat(v)), nil
	}
	// Other Go types (typed maps and slices): through JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return Canonical(out)
}

// pyFloat is Python's repr of a float, as json.dumps writes it.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e16) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// NormalHigh is high data as the suite compares it (README.md,
// "Normalisations"): in each state declaration's list the function name
// comes first and the arguments follow in the order written, wherever
// the SLS put the name (Salt appends the function of `pkg.installed:` after
// the arguments; brine's Show puts it first); the `order` argument Salt's
// state_auto_order appends (10000 on, one per declaration, in render
// order) is left out, brine keeping that order as declaration order, which
// the low chunks compare.
func NormalHigh(high any) any {
	m, ok := high.(map[string]any)
	if !ok {
		return high
	}
	out := make(map[string]any, len(m))
	for id, body := range m {
		b, ok := body.(map[string]any)
		if !ok || strings.HasPrefix(id, "__") {
			out[id] = body
			continue
		}
		nb := make(map[string]any, len(b))
		for mod, decl := range b {
			list, ok := decl.([]any)
			if !ok || strings.HasPrefix(mod, "__") {
				nb[mod] = decl
				continue
			}
			var funs, args []any
			for i, a := range list {
				switch a := a.(type) {
				case string:
					funs = append(funs, a)
					continue
				case map[string]any:
					if i == len(list)-1 && len(a) == 1 && isAutoOrder(a["order"]) {
						continue
					}
				}
				args = append(args, a)
			}
			nb[mod] = append(funs, args...)
		}
		out[id] = nb
	}
	return out
}

// isAutoOrder is an order state_auto_order gives: 10000 and on.
func isAutoOrder(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i >= 10000
}

// FirstDiff is where a and b (canonical values) first differ, as a path
// and the two values, or "" when they are equal. Mappings are walked in
// key order, lists by index.
func FirstDiff(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			p := path + "[" + jsonText(k) + "]"
			switch {
			case !inA:
				return fmt.Sprintf("%s: Salt has none, brine %s", p, jsonText(y))
			case !inB:
				return fmt.Sprintf("%s: Salt %s, brine has none", p, jsonText(x))
			}
			if d := FirstDiff(p, x, y); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < len(av) && i < len(bv); i++ {
			if d := FirstDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != "" {
				return d
			}
		}
		if len(av) != len(bv) {
			return fmt.Sprintf("%s: Salt has %d items, brine %d", path, len(av), len(bv))
		}
		return ""
	default:
		if a == b {
			return ""
		}
	}
	return fmt.Sprintf("%s: Salt %s, brine %s", path, jsonText(a), jsonText(b))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 200)
}

// SameCompiled compares brine's compile of an SLS with Salt's: both
// failing is the same outcome (each engine words its errors its own way);
// otherwise the high data (normalised, NormalHigh) and then the low
// chunks must be equal. It returns the first difference.
func SameCompiled(salt, brine Compiled) (bool, string) {
	switch {
	case salt.Error != nil && brine.Error != nil:
		return true, ""
	case salt.Error != nil:
		return false, "Salt fails (" + truncate(strings.Join(salt.Error, "; "), 300) + "), brine compiles"
	case brine.Error != nil:
		return false, "Salt compiles, brine fails (" + truncate(strings.Join(brine.Error, "; "), 300) + ")"
	}
	sh, err1 := Canonical(salt.High)
	bh, err2 := Canonical(brine.High)
	if err1 != nil || err2 != nil {
		return false, fmt.Sprintf("high data not comparable: %v %v", err1, err2)
	}
	if d := FirstDiff("high", NormalHigh(sh), NormalHigh(bh)); d != "" {
		return false, d
	}
	sl, err1 := Canonical(salt.Low)
	bl, err2 := Canonical(brine.Low)
	if err1 != nil || err2 != nil {
		return false, fmt.Sprintf("low chunks not comparable: %v %v", err1, err2)
	}
	if d := FirstDiff("low", NormalLow(sl), NormalLow(bl)); d != "" {
		return false, d
	}
	return true, ""
}

// NormalLow is low chunks as the suite compares them (README.md,
// "Normalisations"): the list is in run order on both sides, and that
// order is what is compared; each chunk's `order` number, which says the
// same in each engine's own numbering (Salt's state_auto_order counts from
// 10000 and puts `last` at the highest plus 1000100, a name's place in
// `names` in the fraction), is left out.
func NormalLow(low any) any {
	list, ok := low.([]any)
	if !ok {
		return low
	}
	out := make([]any, len(list))
	for i, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			out[i] = c
			continue
		}
		nm := make(map[string]any, len(m))
		for k, v := range m {
			if k != "order" {
				nm[k] = v
			}
		}
		out[i] = nm
	}
	return out
}
