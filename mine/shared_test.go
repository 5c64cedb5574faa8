package mine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/brinehq/brine/bus"
)

func hostEntry(t *testing.T, id string, grains map[string]any) bus.Entry {
	t.Helper()
	b, err := json.Marshal(Host{ID: id, IPs: []string{"10.0.0.1"}, Grains: grains, Data: map[string]any{"n": 3, "f": 1.5}, Source: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return bus.Entry{Key: id, Value: b, Revision: 7}
}

func TestDecodeSharedIsDecode(t *testing.T) {
	flags := []any{"fpu", "vme", "sse2"}
	for _, grains := range []map[string]any{
		nil,
		{},
		{"id": "web01", "os": "Debian", "num_cpus": 2, "mem_total": 3.5, "cpu_flags": flags,
			"ip4_interfaces": map[string]any{"eth0": []any{"10.0.0.1"}}, "virtual": nil, "ssds": []any{}},
	} {
		e := hostEntry(t, "web01", grains)
		// The record decoded whole by encoding/json, independently.
		want := &Host{}
		dec := json.NewDecoder(bytes.NewReader(e.Value))
		dec.UseNumber()
		if err := dec.Decode(want); err != nil {
			t.Fatal(err)
		}
		want.Grains, _ = bus.Numbers(want.Grains).(map[string]any)
		want.Data, _ = bus.Numbers(want.Data).(map[string]any)
		want.ID, want.Revision = e.Key, e.Revision
		got, err := decodeShared(e)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeShared = %#v\nwant %#v", got, want)
		}
	}
	if _, err := decodeShared(bus.Entry{Key: "bad", Value: []byte(`{"grains": {"os": [}}`)}); err == nil {
		t.Error("a broken record decoded")
	}
}

func TestDecodeSharedShares(t *testing.T) {
	flags := []any{"fpu", "vme", "sse2"}
	a, err := decodeShared(hostEntry(t, "web01", map[string]any{"id": "web01", "cpu_flags": flags, "os": "Debian"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeShared(hostEntry(t, "web02", map[string]any{"id": "web02", "cpu_flags": flags, "os": "Debian"}))
	if err != nil {
		t.Fatal(err)
	}
	fa, fb := a.Grains["cpu_flags"].([]any), b.Grains["cpu_flags"].([]any)
	if len(fa) != 3 || &fa[0] != &fb[0] {
		t.Error("two records' equal cpu_flags were decoded twice")
	}
	keyOf := func(h *Host, name string) *byte {
		for k := range h.Grains {
			if k == name {
				return unsafe.StringData(k)
			}
		}
		return nil
	}
	if ka, kb := keyOf(a, "cpu_flags"), keyOf(b, "cpu_flags"); ka == nil || ka != kb {
		t.Error("two records hold a grain's name twice")
	}
	if a.Grains["id"] != "web01" || b.Grains["id"] != "web02" {
		t.Errorf("ids %v, %v", a.Grains["id"], b.Grains["id"])
	}
	// The same text under another grain's name is another value.
	c, err := decodeShared(hostEntry(t, "web03", map[string]any{"id": "web03", "other_flags": flags}))
	if err != nil {
		t.Fatal(err)
	}
	if fc := c.Grains["other_flags"].([]any); &fc[0] == &fa[0] {
		t.Error("a value was shared across grain names")
	}
}

func TestSharedValuesBound(t *testing.T) {
	s := &sharedValues{max: 1024, vals: map[string]sharedValue{}}
	for i := range 200 {
		if _, _, err := s.value("g", json.RawMessage(fmt.Sprintf(`["value %04d"]`, i))); err != nil {
			t.Fatal(err)
		}
		if s.bytes > s.max {
			t.Fatalf("after %d values the table holds %d bytes, over its %d", i+1, s.bytes, s.max)
		}
	}
	big := json.RawMessage(fmt.Sprintf(`"%0*d"`, maxSharedValue, 0))
	if _, _, err := s.value("g", big); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.vals["g\x00"+string(big)]; ok {
		t.Error("a value over maxSharedValue was kept in the table")
	}
}
