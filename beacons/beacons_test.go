package beacons

import (
	"context"
	"testing"
)

type nopBeacon struct{}

func (nopBeacon) Check(context.Context) ([]Event, error) { return nil, nil }
func (nopBeacon) Close() error                           { return nil }

func TestLinuxOnly(t *testing.T) {
	m := Module{Name: "load", New: func(Config) (Beacon, error) { return nopBeacon{}, nil }}
	for _, tc := range []struct{ goos, wantErr string }{
		{"linux", ""},
		{"windows", "load beacon is not available on windows: it reads Linux's /proc/loadavg"},
		{"darwin", "load beacon is not available on darwin: it reads Linux's /proc/loadavg"},
	} {
		b, err := LinuxOnly(tc.goos, "/proc/loadavg", m).New(Config{})
		switch {
		case tc.wantErr == "" && (err != nil || b == nil):
			t.Errorf("%s: %v, want the beacon", tc.goos, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("%s: %v, want %q", tc.goos, err, tc.wantErr)
		}
	}
}
