package mine

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestValidateID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"web1", true},
		{"web-asg-1.example.com", true},
		{"db_2", true},
		{"", false},
		{".web", false},
		{"web.", false},
		{"a..b", false},
		{"web 1", false},
		{"web/1", false},
		{"wéb", false},
		{"a*", false},
		{string(make([]byte, 254)), false},
	} {
		err := ValidateID(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) error %v is not ErrInvalidID", tc.id, err)
		}
	}
}

func TestHostSetAndValue(t *testing.T) {
	h := &Host{ID: "web1"}
	h.SetIPs("10.0.0.5", " 2001:DB8::1 ", "10.0.0.5", "not-an-ip")
	if want := []string{"10.0.0.5", "2001:db8::1", "not-an-ip"}; !reflect.DeepEqual(h.IPs, want) {
		t.Fatalf("SetIPs: %v, want %v", h.IPs, want)
	}
	h.SetMACs("00-50-56-AA-BB-01", "00:50:56:aa:bb:01", "zz")
	if want := []string{"00:50:56:aa:bb:01", "zz"}; !reflect.DeepEqual(h.MACs, want) {
		t.Fatalf("SetMACs: %v, want %v", h.MACs, want)
	}

	steps := []struct {
		fun     string
		value   any
		wantErr bool
	}{
		{FunIPAddrs, []any{"10.0.0.6"}, false},  // replaces IPv4 only
		{FunHWAddr, "00:50:56:AA:BB:02", false}, // first MAC, others kept
		{"fqdn", "web1.example.com", false},     //
		{"provider", "my-ec2:ec2", false},       //
		{FunGrains, map[string]any{"os": "Debian"}, false},
		{"cpu.load", 0.5, false}, // no field: kept in Data
		{"fqdn", 42, true},       // wrong type
		{"ips", 42, true},        //
		{"grains.items", "x", true},
		{"id", "other", true}, // read-only
		{"updated", "x", true},
	}
	for _, s := range steps {
		err := h.Set(s.fun, s.value)
		if (err != nil) != s.wantErr {
			t.Errorf("Set(%q, %v) = %v, want error %v", s.fun, s.value, err, s.wantErr)
		}
	}
	for _, tc := range []struct {
		fun  string
		want any
		ok   bool
	}{
		{FunIPAddrs, []string{"10.0.0.6"}, true},
		{FunIPAddrs6, []string{"2001:db8::1"}, true},
		{"ips", []string{"10.0.0.6", "2001:db8::1"}, true},
		{FunHWAddr, "00:50:56:aa:bb:02", true},
		{"macs", []string{"00:50:56:aa:bb:02", "00:50:56:aa:bb:01", "zz"}, true},
		{"fqdn", "web1.example.com", true},
		{FunGrains, map[string]any{"os": "Debian"}, true},
		{"cpu.load", 0.5, true},
		{"driver", nil, false},
		{"nothing.here", nil, false},
		{"id", "web1", true},
	} {
		got, ok := h.Value(tc.fun)
		if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("Value(%q) = %#v, %v; want %#v, %v", tc.fun, got, ok, tc.want, tc.ok)
		}
	}
	if err := h.Unset(FunIPAddrs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"2001:db8::1"}; !reflect.DeepEqual(h.IPs, want) {
		t.Errorf("after Unset(%s): %v, want %v", FunIPAddrs, h.IPs, want)
	}
	if err := h.Unset("cpu.load"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Value("cpu.load"); ok {
		t.Error("cpu.load still set after Unset")
	}
	if err := h.Unset("id"); !errors.Is(err, ErrReadOnlyField) {
		t.Errorf("Unset(id) = %v, want ErrReadOnlyField", err)
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		in      any
		want    []string
		wantErr bool
	}{
		{nil, nil, false},
		{"a, b,,c", []string{"a", "b", "c"}, false},
		{[]any{"a", "b"}, []string{"a", "b"}, false},
		{map[string]any{"Network adapter 2": "m2", "Network adapter 1": "m1"}, []string{"m1", "m2"}, false},
		{[]any{"a", 1.0}, nil, true},
		{map[string]any{"x": 1.0}, nil, true},
		{3.0, nil, true},
	} {
		got, err := Strings(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Strings(%#v) = %#v, %v; want %#v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestSetAgentGrains(t *testing.T) {
	h := &Host{ID: "web01", FQDN: "old.example.com", MACs: []string{"00:50:56:00:00:09"},
		Grains: map[string]any{"salt-cloud": map[string]any{"driver": "vmware"}, "stale": true}}
	h.SetAgentGrains(map[string]any{
		"fqdn": "web01.example.com", "os": "Debian",
		"hwaddr_interfaces": map[string]any{"lo": "00:00:00:00:00:00", "eth1": "00:50:56:AA:BB:02", "eth0": "00:50:56:aa:bb:01"},
	})
	if h.FQDN != "web01.example.com" || h.Grains["os"] != "Debian" || h.Grains["stale"] != nil || h.Grains["salt-cloud"] == nil {
		t.Errorf("host = %+v", h)
	}
	if want := []string{"00:50:56:aa:bb:01", "00:50:56:aa:bb:02"}; !slices.Equal(h.MACs, want) {
		t.Errorf("macs = %v, want %v (loopback left out, eth0 first)", h.MACs, want)
	}
	// A host name without a domain does not replace a known fqdn.
	h.SetAgentGrains(map[string]any{"fqdn": "web01"})
	if h.FQDN != "web01.example.com" || len(h.MACs) != 2 {
		t.Errorf("after a bare name: %+v", h)
	}
}
