package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSignHookVector pins the X-Brine-Signature format that senders in
// other languages implement; the MAC was computed with
//
//	printf 'deploy/web\n1700000000\n{"app":"web"}' | openssl dgst -sha256 -hmac brine-secret-0123456789
func TestSignHookVector(t *testing.T) {
	got := SignHook("x-brine-signature", "deploy/web", []byte(brineSec), []byte(`{"app":"web"}`), time.Unix(1700000000, 0))
	want := "t=1700000000,v2=76e677a8ff0218cde4f5e088cfe2aa5d20b9cb986651e1c8469c5e9ae1d62981"
	if got != want {
		t.Errorf("SignHook = %q, want %q", got, want)
	}
	if got := SignHook(GitHubSignatureHeader, "", []byte(testSecret), []byte("{}"), time.Time{}); got != SignHook(GitHubSignatureHeader, "any/path", []byte(testSecret), []byte("{}"), time.Now()) {
		t.Errorf("GitHub's signature depends on the path or time: %q", got)
	}
}

// TestVerifyBrineSignature: an X-Brine-Signature is accepted for its own
// path, body and time only, within the window and after the start; the old
// form is refused with a message saying what to send.
func TestVerifyBrineSignature(t *testing.T) {
	h := &Hook{Secret: []byte(brineSec), SignatureHeader: BrineSignatureHeader}
	now := time.Unix(1700000000, 0)
	start := now.Add(-time.Hour)
	body := []byte(`{"app":"web"}`)
	sign := func(path string, at time.Time) string {
		return SignHook(BrineSignatureHeader, path, h.Secret, body, at)
	}
	good := sign("deploy/web", now)
	mac := good[strings.Index(good, "v2=")+3:]
	tests := []struct {
		name       string
		header     string
		path       string
		notBefore  time.Time
		wantReason string // "" for accepted
		wantStatus int
		errHas     string
	}{
		{"good", good, "deploy/web", start, "", 200, ""},
		{"fields in another order", "v2=" + mac + ",t=1700000000", "deploy/web", start, "", 200, ""},
		{"upper-case hex", "t=1700000000,v2=" + strings.ToUpper(mac), "deploy/web", start, "", 200, ""},
		{"v1 beside v2, for old and new masters", "t=1700000000,sha256=00,v2=" + mac, "deploy/web", start, "", 200, ""},
		{"other path", good, "deploy/db", start, refusedMismatch, 403, "hook path, time and body"},
		{"other time", "t=1700000001,v2=" + mac, "deploy/web", start, refusedMismatch, 403, "does not match"},
		{"signed for a prefix of the path", sign("deploy", now), "deploy/web", start, refusedMismatch, 403, "does not match"},
		{"just within the past window", sign("deploy/web", now.Add(-SignatureTolerance)), "deploy/web", start, "", 200, ""},
		{"past the window", sign("deploy/web", now.Add(-SignatureTolerance-time.Second)), "deploy/web", start, refusedTime, 403, "behind the server's clock"},
		{"just within the future allowance", sign("deploy/web", now.Add(SignatureMaxAhead)), "deploy/web", start, "", 200, ""},
		{"too far ahead", sign("deploy/web", now.Add(SignatureMaxAhead+time.Second)), "deploy/web", start, refusedTime, 403, "check the sender's clock"},
		{"timed at the start", sign("deploy/web", now), "deploy/web", now, refusedBeforeStart, 403, "sign the request again"},
		{"timed before the start", sign("deploy/web", now.Add(-time.Minute)), "deploy/web", now.Add(-time.Second), refusedBeforeStart, 403, "restart"},
		{"v1 only", "t=1700000000,sha256=" + mac, "deploy/web", start, refusedV1, 403, `t=<unix seconds>,v2=<hex of HMAC-SHA256(secret, "deploy/web\n<t>\n<body>")>`},
		{"no time", "v2=" + mac, "deploy/web", start, refusedMalformed, 403, "t=<unix seconds>,v2=<hex>"},
		{"signed time", "t=+1700000000,v2=" + mac, "deploy/web", start, refusedMalformed, 403, "t=<unix seconds>"},
		{"leading zero", "t=01700000000,v2=" + mac, "deploy/web", start, refusedMalformed, 403, "t=<unix seconds>"},
		{"not hex", "t=1700000000,v2=zz", "deploy/web", start, refusedMalformed, 403, "not hex"},
		{"line break in the path", sign("deploy\n1", now), "deploy\n1", start, refusedMalformed, 403, "line break"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/hook/x", nil)
			r.Header.Set(BrineSignatureHeader, tc.header)
			sig, err := verifySignature(r, h, tc.path, body, now, tc.notBefore)
			if tc.wantReason == "" {
				if err != nil || sig == nil {
					t.Fatalf("refused (%v), want accepted", err)
				}
				return
			}
			var se *signatureError
			if !errors.As(err, &se) || se.reason != tc.wantReason {
				t.Fatalf("error %v, want reason %s", err, tc.wantReason)
			}
			if got := authStatus(err); got != tc.wantStatus {
				t.Errorf("status %d, want %d", got, tc.wantStatus)
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %q does not say %q", err, tc.errHas)
			}
		})
	}
}
