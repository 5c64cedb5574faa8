package grains

import (
	"reflect"
	"strings"
	"testing"
)

// TestFilterBy: each want is what Salt 3006.6's
// salt.utils.data.filter_by returns for the same arguments.
func TestFilterBy(t *testing.T) {
	grains := map[string]any{"os_family": "Debian", "os": "Ubuntu", "roles": []any{"web", "db"}, "num": 7, "osfinger": "Ubuntu-22.04"}
	for i, tc := range []struct {
		lookup           map[string]any
		grain            string
		merge, def, base any
		want             any
		err              string
	}{
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os_family", nil, "default", nil, map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os", nil, "default", nil, map[string]any{"pkg": "apache"}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os", nil, "default", "common", map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}, "pkg": "apache"}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os_family", nil, "default", "common", map[string]any{"conf": "/etc", "x": map[string]any{"b": 2, "a": 1}, "pkg": "apache2"}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os_family", map[string]any{"pkg": "custom", "x": map[string]any{"c": 3}}, "default", "common", map[string]any{"conf": "/etc", "x": map[string]any{"b": 2, "a": 1, "c": 3}, "pkg": "custom"}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os_family", "", "default", nil, map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, ""},
		{map[string]any{"Debian": map[string]any{"pkg": "apache2", "x": map[string]any{"a": 1}}, "RedHat": map[string]any{"pkg": "httpd"}, "default": map[string]any{"pkg": "apache"}, "common": map[string]any{"conf": "/etc", "x": map[string]any{"b": 2}}}, "os", nil, "RedHat", nil, map[string]any{"pkg": "httpd"}, ""},
		{map[string]any{"Ubuntu-*": 1, "Debian-*": 2}, "osfinger", nil, "default", nil, 1, ""},
		{map[string]any{"db": "D", "web": "W"}, "roles", nil, "default", nil, "W", ""},
		{map[string]any{"7": "seven"}, "num", nil, "default", nil, "seven", ""},
		{map[string]any{"x": 1}, "missing", nil, "default", nil, nil, ""},
		{map[string]any{"common": map[string]any{"a": 1}}, "os", nil, "default", "common", map[string]any{"a": 1}, ""},
		{map[string]any{"Debian": nil, "default": "d"}, "os_family", map[string]any{"m": 1}, "default", nil, nil, "Cannot update using non-dict types in dictupdate.update()"},
	} {
		got, _, err := FilterBy(tc.lookup, nil, grains, tc.grain, tc.merge, nil, tc.def, tc.base)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%d: error %v, want %q", i, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d: got %#v, %v; Salt returns %#v", i, got, err, tc.want)
		}
	}
}
