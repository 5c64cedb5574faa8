package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzParseBody: any body under any supported content type either parses
// into something an event can carry, or is refused with an error.
func FuzzParseBody(f *testing.F) {
	for _, seed := range []struct{ ct, body string }{
		{"application/json", `{"a": [1, 2.5, "x", null, true]}`},
		{"application/x-www-form-urlencoded", "a=1&a=2&b=%20"},
		{"application/x-yaml", "a: {b: [1, 2]}\n1: x\n"},
		{"text/plain", "hello"},
		{"", ""},
		{"application/json", `{"a":`},
	} {
		f.Add(seed.ct, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		kind, err := contentKind(ct)
		if err != nil {
			return
		}
		post, err := parseBody(kind, body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(map[string]any{"post": post}); err != nil {
			t.Fatalf("%s body %q parsed into %#v, which JSON cannot carry: %v", ct, body, post, err)
		}
	})
}

// FuzzVerifySignature: only the MAC made with the secret over the exact
// hook path and body is accepted.
func FuzzVerifySignature(f *testing.F) {
	f.Add([]byte(`{"ref": "main"}`), "deploy/web", "sha256=00", false)
	f.Add([]byte(""), "a", "t=1,sha256=zz", true)
	f.Add([]byte("1\nx"), "a\n1", "t=1,v2=00", true)
	f.Fuzz(func(t *testing.T, body []byte, path, sig string, brine bool) {
		h := &Hook{Secret: []byte(testSecret), SignatureHeader: GitHubSignatureHeader}
		if brine {
			h.SignatureHeader = BrineSignatureHeader
		}
		now := time.Now()
		good := SignHook(h.SignatureHeader, path, h.Secret, body, now)
		r := httptest.NewRequest("POST", "/hook/x", nil)
		r.Header.Set(h.SignatureHeader, good)
		_, err := verifySignature(r, h, path, body, now, time.Time{})
		if brine && strings.ContainsAny(path, "\r\n") {
			if err == nil {
				t.Fatalf("path %q with a line break accepted", path)
			}
			return
		}
		if err != nil {
			t.Fatalf("own signature refused: %v", err)
		}
		if strings.TrimSpace(sig) == "" {
			return
		}
		// Another spelling of the good MAC (upper case, other order) is
		// the same signature; any other MAC must be refused.
		mac := good[strings.LastIndex(good, "=")+1:]
		r.Header.Set(h.SignatureHeader, sig)
		if _, err := verifySignature(r, h, path, body, now, time.Time{}); err == nil && !strings.Contains(strings.ToLower(sig), mac) {
			t.Fatalf("signature %q accepted for path %q, body %q (good one is %q)", sig, path, body, good)
		}
	})
}
