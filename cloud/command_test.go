package cloud

import (
	"reflect"
	"testing"
)

func TestCommandJob(t *testing.T) {
	for _, tc := range []struct {
		r      Command
		fun    string
		kwargs map[string]any
	}{
		{Command{Profile: "web", Names: []string{"web1"}, Parallel: 2}, "cloud.profile",
			map[string]any{"parallel": 2, "prof": "web", "instances": []string{"web1"}}},
		{Command{MapFile: "/m.yaml"}, "cloud.map_run", map[string]any{"parallel": 0, "path": "/m.yaml"}},
		{Command{MapFile: "/m.yaml", Hard: true}, "cloud.map_run", map[string]any{"parallel": 0, "path": "/m.yaml", "hard": true}},
		{Command{MapFile: "/m.yaml", Destroy: true}, "cloud.map_destroy", map[string]any{"parallel": 0, "path": "/m.yaml"}},
		{Command{Destroy: true, Names: []string{"a", "b"}}, "cloud.destroy", map[string]any{"parallel": 0, "names": []string{"a", "b"}}},
	} {
		fun, kw := tc.r.Job()
		if fun != tc.fun || !reflect.DeepEqual(kw, tc.kwargs) {
			t.Errorf("%+v: %s %v, want %s %v", tc.r, fun, kw, tc.fun, tc.kwargs)
		}
	}
}
