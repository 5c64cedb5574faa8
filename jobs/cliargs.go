package jobs

import (
	"errors"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// ArgKey reports whether k, the text before "=" in a command-line
// argument, names a keyword argument (KEY=VALUE), as Salt's
// parse_input tells them from positional arguments holding "=".
func ArgKey(k string) bool {
	return k != "" && !strings.ContainsAny(k, " \t{}[]:,\"'")
}

// ArgValue parses a command-line argument's value as PyYAML (YAML 1.1),
// which Salt uses (yamlify_arg): yes/no/on/off are booleans there. The
// CLI and salt-api read KEY=VALUE arguments with it.
func ArgValue(v string) any {
	switch v {
	case "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE":
		return true
	case "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE":
		return false
	case "", "~", "null", "Null", "NULL":
		return nil
	}
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	if _, err := strconv.ParseInt(v, 10, 64); errors.Is(err, strconv.ErrRange) {
		// An integer no int64 holds (a 20-digit jid) stays the text it
		// was: as a float it would lose digits.
		return v
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXnN") {
		return f
	}
	var x any
	if strings.ContainsAny(v[:1], "[{") && yaml.Unmarshal([]byte(v), &x) == nil {
		return x
	}
	// A quoted scalar is a string, as YAML reads it: '"1.10"' is the text
	// 1.10, not the number 1.1.
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		var str string
		if yaml.Unmarshal([]byte(v), &str) == nil {
			return str
		}
	}
	return v
}
