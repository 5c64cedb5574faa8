package api

import (
	"context"
	"fmt"
	"net/url"
	"testing"
)

// querySource answers like the master's adapters: known ids, a bad query,
// a store failure.
type querySource struct{}

func (querySource) ListJobs(_ context.Context, q url.Values) (any, error) {
	if q.Get("limit") == "x" {
		return nil, fmt.Errorf("%w: limit=x", ErrBadQuery)
	}
	return []string{"20260101000000000001"}, nil
}

func (querySource) GetJob(_ context.Context, jid string) (any, error) {
	switch jid {
	case "20260101000000000001":
		return map[string]string{"jid": jid}, nil
	case "broken":
		return nil, fmt.Errorf("jobs bucket: connection closed")
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, jid)
}

func (querySource) MineHosts(_ context.Context, tgt, _ string) (any, error) {
	return []string{tgt}, nil
}

func TestQueries(t *testing.T) {
	cfg := testConfig()
	cfg.Jobs, cfg.Mine = querySource{}, querySource{}
	f := start(t, cfg, nil)
	bare := start(t, testConfig(), nil)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	tests := []struct {
		name   string
		f      *fixture
		method string
		path   string
		header map[string]string
		want   int
	}{
		{"list", f, "GET", "/jobs", auth, 200},
		{"one", f, "GET", "/jobs/20260101000000000001", auth, 200},
		{"unknown", f, "GET", "/jobs/20260101000000000002", auth, 404},
		{"bad query", f, "GET", "/jobs?limit=x", auth, 400},
		{"store down", f, "GET", "/jobs/broken", auth, 503},
		{"mine", f, "GET", "/mine?tgt=web*", auth, 200},
		{"no token", f, "GET", "/jobs", nil, 401},
		{"wrong token", f, "GET", "/mine", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, 403},
		{"POST", f, "POST", "/jobs", auth, 405},
		{"no jobs source", bare, "GET", "/jobs", auth, 404},
		{"no mine source", bare, "GET", "/mine", auth, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := tc.f.do(tc.method, tc.path, nil, tc.header)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %v", status, tc.want, out)
			}
		})
	}
}
