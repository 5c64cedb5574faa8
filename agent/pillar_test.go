package agent

import (
	"reflect"
	"testing"
)

func TestDecodePillar(t *testing.T) {
	p, err := decodePillar([]byte(`{"app": {"port": 8000, "ratio": 0.5, "ports": [80, 443], "big": 9007199254740993}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"app": map[string]any{"port": int64(8000), "ratio": 0.5, "ports": []any{int64(80), int64(443)}, "big": int64(9007199254740993)}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("decodePillar = %#v, want %#v", p, want)
	}
	for _, empty := range []string{"", "null"} {
		if p, err := decodePillar([]byte(empty)); err != nil || p == nil || len(p) != 0 {
			t.Errorf("decodePillar(%q) = %#v, %v; want an empty pillar", empty, p, err)
		}
	}
	if _, err := decodePillar([]byte(`[1]`)); err == nil {
		t.Error("a pillar that is not a mapping was accepted")
	}
}
