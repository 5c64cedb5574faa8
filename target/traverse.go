package target

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// DefaultDelimiter separates nested keys in grains.get, pillar.get and the
// traverse filter ("ip4_interfaces:eth0").
const DefaultDelimiter = ":"

// Traverse follows key through nested mappings and lists, as Salt's
// traverse_dict_and_list: grains.get('a:b:0'). In a list, an integer part
// is an index (negative ones count from the end, as Python's) and any
// other part is looked up in the list's mappings, the first that has it.
// It reports false when a part is missing. A mapping may be a
// yaml.MapSlice (as read, in its order), whose keys match by their text,
// as Salt retries a missing key YAML-loaded (386 for "386").
func Traverse(data any, key, delimiter string) (any, bool) {
	if delimiter == "" {
		delimiter = DefaultDelimiter
	}
	cur := data
	for part := range strings.SplitSeq(key, delimiter) {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[part]
			if !ok {
				return nil, false
			}
			cur = next
		case yaml.MapSlice:
			next, ok := sliceItem(v, part)
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			next, ok := listItem(v, part)
			if !ok {
				return nil, false
			}
			cur = next
		default:
			return nil, false
		}
	}
	return cur, true
}

// listItem is one step of Traverse into a list.
func listItem(l []any, part string) (any, bool) {
	if i, err := strconv.Atoi(part); err == nil {
		if i < 0 {
			i += len(l)
		}
		if i < 0 || i >= len(l) {
			return nil, false
		}
		return l[i], true
	}
	// Salt looks a non-numeric part up in the list's mappings, so that
	// "disks:sda" finds {"sda": …} in a list of one-key mappings.
	for _, x := range l {
		switch m := x.(type) {
		case map[string]any:
			if next, ok := m[part]; ok {
				return next, true
			}
		case yaml.MapSlice:
			if next, ok := sliceItem(m, part); ok {
				return next, true
			}
		}
	}
	return nil, false
}

// sliceItem is the value of an ordered mapping's key whose text is part.
func sliceItem(m yaml.MapSlice, part string) (any, bool) {
	for _, it := range m {
		k, ok := it.Key.(string)
		if !ok {
			k = fmt.Sprint(it.Key)
		}
		if k == part {
			return it.Value, true
		}
	}
	return nil, false
}
