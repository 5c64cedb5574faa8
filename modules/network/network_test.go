package network

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestIPAddrsSelection(t *testing.T) {
	ifs := []Iface{
		{Name: "eth0", V4: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/24"), netip.MustParsePrefix("203.0.113.7/24")},
			V6: []netip.Prefix{netip.MustParsePrefix("2001:db8::5/64"), netip.MustParsePrefix("fe80::1/64")}},
		{Name: "eth1", V4: []netip.Prefix{netip.MustParsePrefix("192.168.1.9/24")}},
		{Name: "lo", V4: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}, V6: []netip.Prefix{netip.MustParsePrefix("::1/128")}},
	}
	cases := []struct {
		name   string
		family int
		sel    Selection
		want   []string
		err    bool
	}{
		{"all v4", 4, Selection{}, []string{"10.0.0.5", "192.168.1.9", "203.0.113.7"}, false},
		{"loopback", 4, Selection{IncludeLoopback: true}, []string{"10.0.0.5", "127.0.0.1", "192.168.1.9", "203.0.113.7"}, false},
		{"interface", 4, Selection{Interface: "eth1"}, []string{"192.168.1.9"}, false},
		{"cidr", 4, Selection{CIDR: "10.0.0.0/8"}, []string{"10.0.0.5"}, false},
		{"private", 4, Selection{Type: "private"}, []string{"10.0.0.5", "192.168.1.9"}, false},
		{"public", 4, Selection{Type: "public"}, []string{"203.0.113.7"}, false},
		{"v6", 6, Selection{}, []string{"2001:db8::5", "fe80::1"}, false},
		{"none", 4, Selection{Interface: "wlan0"}, []string{}, false},
		{"bad cidr", 4, Selection{CIDR: "10.0.0.0"}, nil, true},
		{"bad type", 4, Selection{Type: "both"}, nil, true},
	}
	for _, tc := range cases {
		got, err := IPAddrs(ifs, tc.family, tc.sel)
		if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestDescribeIsSaltsShape(t *testing.T) {
	d := Describe([]Iface{{Name: "eth0", MAC: "00:50:56:aa:bb:01", Up: true,
		V4: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/24")}, V6: []netip.Prefix{netip.MustParsePrefix("fe80::1/64")}}})
	want := map[string]any{"eth0": map[string]any{"hwaddr": "00:50:56:aa:bb:01", "up": true,
		"inet":  []any{map[string]any{"address": "10.0.0.5", "netmask": "255.255.255.0", "label": "eth0"}},
		"inet6": []any{map[string]any{"address": "fe80::1", "prefixlen": "64", "scope": "link"}}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("Describe = %#v", d)
	}
}
