package target

import (
	"strconv"
	"strings"
)

// DefaultDelimiter separates nested keys in grains.get, pillar.get and the
// traverse filter ("ip4_interfaces:eth0").
const DefaultDelimiter = ":"

// Traverse follows key through nested mappings and lists (an integer part
// indexes a list), as Salt's traverse_dict_and_list: grains.get('a:b:0').
// It reports false when a part is missing.
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
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
