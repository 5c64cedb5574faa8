package beacons

import (
	"fmt"
	"sort"
	"time"

	"github.com/brinehq/brine/internal/py"
)

// Settings are the options of one beacon the runner reads itself.
type Settings struct {
	// Module is the beacon module (beacon_module; the name otherwise).
	Module string
	// Interval is how often Check runs (Salt's interval; 1 s).
	Interval time.Duration
	// DisableDuringStateRun skips checks while a state run is going on.
	DisableDuringStateRun bool
	// Enabled is false for a beacon switched off (enabled: False).
	Enabled bool
	// Rate is how many events a second the beacon may send (brine's;
	// default DefaultRate); more are coalesced or dropped.
	Rate float64
	// Coalesce sends one event, with a count and the latest data, for
	// the events over the rate (default); false drops them, and the next
	// event says how many were dropped.
	Coalesce bool
}

// DefaultRate bounds every beacon's events unless it says otherwise: a
// file churning 10,000 times does not send 10,000 events.
const DefaultRate = 10

// runnerKeys are the options the runner reads, not the module.
var runnerKeys = map[string]bool{"interval": true, "disable_during_state_run": true, "enabled": true,
	"beacon_module": true, "rate": true, "coalesce": true}

// Normalize reads one beacon's configuration in Salt's list form (a list
// of one-key mappings) or its legacy mapping form into one mapping.
func Normalize(v any) (map[string]any, error) {
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case nil:
		return map[string]any{}, nil
	case []any:
		out := map[string]any{}
		for i, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d: want a key: value mapping, got %v", i+1, item)
			}
			for k, x := range m {
				if _, dup := out[k]; dup {
					return nil, fmt.Errorf("%s given twice", k)
				}
				out[k] = x
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of key: value mappings (or a mapping), got %T", v)
}

// ListForm is a configuration as Salt writes and shows it (beacons.list,
// beacons.save): each beacon a list of one-key mappings, in key order, and
// enabled: False when beacons are off. Normalize reads it back.
func ListForm(cfg map[string]map[string]any, enabled bool) map[string]any {
	out := map[string]any{}
	for name, m := range cfg {
		list := []any{}
		for _, k := range sortedNames(m) {
			list = append(list, map[string]any{k: m[k]})
		}
		out[name] = list
	}
	if !enabled {
		out["enabled"] = false
	}
	return out
}

// Split separates the runner's settings from the module's configuration,
// checking the settings.
func Split(name string, cfg map[string]any) (Settings, Config, error) {
	s := Settings{Module: name, Interval: time.Second, Enabled: true, Rate: DefaultRate, Coalesce: true}
	mod := Config{}
	for k, v := range cfg {
		if !runnerKeys[k] {
			mod[k] = v
			continue
		}
		var err error
		switch k {
		case "beacon_module":
			m, ok := v.(string)
			if !ok || m == "" {
				err = fmt.Errorf("want a module name, got %v", v)
			}
			s.Module = m
		case "interval":
			var f float64
			if f, err = positive(v); err == nil {
				s.Interval = time.Duration(f * float64(time.Second))
			}
		case "rate":
			s.Rate, err = positive(v)
		case "disable_during_state_run":
			s.DisableDuringStateRun, err = Bool(v)
		case "enabled":
			s.Enabled, err = Bool(v)
		case "coalesce":
			s.Coalesce, err = Bool(v)
		}
		if err != nil {
			return s, nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return s, mod, nil
}

// Bool reads a YAML boolean option.
func Bool(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("want True or False, got %v", v)
	}
	return b, nil
}

func positive(v any) (float64, error) {
	f, ok := py.Number(v)
	if !ok {
		return 0, fmt.Errorf("want a number, got %v", v)
	}
	if f <= 0 {
		return 0, fmt.Errorf("want a number above 0, got %v", v)
	}
	return f, nil
}

// sortedNames returns the keys of m in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
