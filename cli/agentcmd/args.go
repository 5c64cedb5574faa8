package agentcmd

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/jobs"
)

// Call is a function call read from a command line: FUN [ARG…] [KEY=VALUE…].
type Call struct {
	Fun    string
	Args   []any
	Kwargs map[string]any
}

// ParseCall splits FUN [ARG…] [KEY=VALUE…] as Salt's command lines do:
// KEY=VALUE pairs are keyword arguments (parsed as ParseEventData parses
// them), the rest YAML scalars. args must not be empty.
func ParseCall(args []string) (Call, error) {
	c := Call{Fun: args[0]}
	var pairs []string
	for _, a := range args[1:] {
		if k, _, ok := strings.Cut(a, "="); ok && jobs.ArgKey(k) {
			pairs = append(pairs, a)
			continue
		}
		c.Args = append(c.Args, jobs.ArgValue(a))
	}
	if len(pairs) > 0 {
		kw, err := ParseEventData(pairs)
		if err != nil {
			return c, err
		}
		c.Kwargs = kw
	}
	return c, nil
}

// ParseEventData reads the DATA arguments of `event send` (and of
// salt-call event.send): KEY=VALUE pairs, values as YAML scalars, and at
// most one JSON or YAML mapping, whose keys win over the pairs'.
func ParseEventData(args []string) (map[string]any, error) {
	data := map[string]any{}
	var mapping map[string]any
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && jobs.ArgKey(k) {
			data[k] = jobs.ArgValue(v)
			continue
		}
		if mapping != nil {
			return nil, fmt.Errorf("more than one DATA mapping: %q", a)
		}
		if err := yaml.UnmarshalWithOptions([]byte(a), &mapping, yaml.UseJSONUnmarshaler()); err != nil || mapping == nil {
			return nil, fmt.Errorf("DATA %q is neither a JSON/YAML mapping nor KEY=VALUE", a)
		}
	}
	for k, v := range mapping {
		data[k] = v
	}
	return data, nil
}
