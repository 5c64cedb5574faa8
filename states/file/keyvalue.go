package file

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/state"
)

// keyvalueFunc declares file.keyvalue: key=value lines of a
// configuration file set (uncommented, appended or prepended as asked),
// Salt's algorithm line by line, with its own diff format ("- old",
// "+ new", "<EOF>").
func (s *states) keyvalueFunc() function.Func {
	anyp := func(n string, def any) function.Param {
		return function.Param{Name: n, Kind: function.Any, Default: def}
	}
	boolp := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return function.Func{
		Name: "file.keyvalue", Doc: "Set key/value lines (key, value or key_values) of a file, as separator splits them.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true}, anyp("key", nil), anyp("value", nil),
			anyp("key_values", nil), {Name: "separator", Kind: function.String, Default: "="},
			boolp("append_if_not_found", false), boolp("prepend_if_not_found", false), boolp("search_only", false),
			boolp("show_changes", true), boolp("ignore_if_missing", false), {Name: "count", Kind: function.Int, Default: int64(1)},
			anyp("uncomment", nil), boolp("key_ignore_case", false), boolp("value_ignore_case", false)},
		Run: func(ctx context.Context, in *function.Input) (any, error) { return s.keyvalueState(ctx, in), nil },
	}
}

// pyTypeName is Python's type(v).__name__ for a state argument.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int64:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return "str"
}

func (s *states) keyvalueState(ctx context.Context, in *function.Input) state.Result {
	name := expand(in.String("name"))
	test := state.From(ctx).Test
	if name == "" {
		return state.Failed(name, "Must provide name to file.keyvalue")
	}
	kv, isMap := in.Value("key_values").(map[string]any)
	if in.Value("key") != nil && in.Value("value") != nil {
		if isMap {
			return state.Failed(name, "file.keyvalue can not combine key_values with key and value")
		}
		kv = map[string]any{py.Str(in.Value("key")): in.Value("value")}
	} else if !isMap || len(kv) == 0 {
		msg := "is not a dictionary"
		if !py.Truth(in.Value("key_values")) {
			msg = "is empty"
		}
		return state.Failed(name, "file.keyvalue key and value not supplied and key_values %s", msg)
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		r := state.Failed(name, "unable to open %s", name)
		if in.Bool("ignore_if_missing") {
			r = state.Succeeded(name, fmt.Sprintf("unable to open %s", name), nil)
		}
		return r
	}
	// Salt walks key_values in the order the SLS wrote them, which a
	// mapping here has lost: sorted is the order brine can promise (it
	// only shows in which of several missing keys is appended first).
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sep := in.String("separator")
	count := int(in.Int("count"))
	keyCase, valueCase := in.Bool("key_ignore_case"), in.Bool("value_ignore_case")
	// Python's text mode reads \r\n and \r as \n.
	text := strings.ReplaceAll(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\r", "\n")
	var lines []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	// uncomment None is Python's lstrip(None): leading whitespace.
	strip := func(l string) string { return strings.TrimLeft(l, " \t\n\r\v\f") }
	if u := in.Value("uncomment"); u != nil {
		chars := py.Str(u)
		strip = func(l string) string { return strings.TrimLeft(l, chars) }
	}
	tmpl := func(k, sep string, v any) string { return k + sep + py.Str(v) + "\n" }
	left := map[string]int{}
	for _, k := range keys {
		left[k] = count
	}
	var diff, content []string
	changes := 0
	for _, line := range lines {
		testLine := strip(line)
		uncommented := len(line) > len(testLine)
		if keyCase {
			testLine = strings.ToLower(testLine)
		}
		for _, key := range keys {
			value := kv[key]
			testKey := key
			if keyCase {
				testKey = strings.ToLower(key)
			}
			if !strings.HasPrefix(testLine, testKey) {
				continue
			}
			working := line
			if uncommented {
				working = strip(line)
			}
			lineKey, lineValue, found := strings.Cut(working, sep)
			if !found {
				continue
			}
			keysMatch := lineKey == testKey
			if keyCase {
				keysMatch = strings.ToLower(lineKey) == testKey
			}
			if !keysMatch {
				continue
			}
			lineValue = strings.TrimSpace(lineValue)
			testValue := strings.TrimSpace(py.Str(value))
			if valueCase {
				lineValue, testValue = strings.ToLower(lineValue), strings.ToLower(testValue)
			}
			valuesMatch := lineValue == testValue
			needsChanging := false
			if uncommented {
				if left[key] > 0 {
					needsChanging = true
				} else if !valuesMatch {
					valuesMatch = true
				}
			} else if left[key] == 0 {
				needsChanging = true
			}
			if !valuesMatch || needsChanging {
				diff = append(diff, "- "+line)
				line = ""
				if left[key] != 0 {
					line = tmpl(lineKey, sep, value)
					if _, isStr := value.(string); !isStr {
						diff = append(diff, fmt.Sprintf("+ %s (from %s type)\n", strings.TrimRight(line, " \t\n\r\v\f"), pyTypeName(value)))
					} else {
						diff = append(diff, "+ "+line)
					}
				}
				changes++
			}
			if left[key] > 0 {
				left[key]--
			}
			break
		}
		content = append(content, line)
	}
	if in.Bool("append_if_not_found") {
		var tmp []string
		for _, key := range keys {
			if left[key] > 0 {
				line := tmpl(key, sep, kv[key])
				tmp = append(tmp, "+ "+line)
				content = append(content, line)
				changes++
			}
		}
		if len(tmp) > 0 {
			diff = append(diff, "- <EOF>\n")
			diff = append(diff, tmp...)
			diff = append(diff, "+ <EOF>\n")
		}
	} else if in.Bool("prepend_if_not_found") {
		did := false
		for _, key := range keys {
			if left[key] > 0 {
				line := tmpl(key, sep, kv[key])
				if !did {
					diff = append([]string{"  <SOF>\n"}, diff...)
					did = true
				}
				diff = append(diff[:1], append([]string{"+ " + line}, diff[1:]...)...)
				content = append([]string{line}, content...)
				changes++
			}
		}
	}
	if changes == 0 {
		return state.Succeeded(name, "", nil)
	}
	var r state.Result
	if test {
		r = state.Pending(name, fmt.Sprintf("File %s is set to be changed (%d lines)", name, changes), nil)
		if in.Bool("show_changes") {
			r.Changes = map[string]any{"diff": strings.Join(diff, "")}
			r.Comment += "\nPredicted diff:\n\r\t\t" + strings.Join(diff, "\r\t\t")
		}
		return r
	}
	r = state.Succeeded(name, fmt.Sprintf("Changed %d lines", changes), nil)
	if in.Bool("show_changes") {
		r.Changes = map[string]any{"diff": strings.Join(diff, "")}
	}
	// Salt truncates and rewrites the file where it is (a symlink
	// followed, the inode and owner kept).
	if err := os.WriteFile(name, []byte(strings.Join(content, "")), 0o644); err != nil {
		return failed(name, nil, "%s not writable", name)
	}
	return r
}
