package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Authentication failures: a request without credentials is answered 401,
// one with wrong credentials 403.
var (
	errNoCredentials  = errors.New("authentication required")
	errBadCredentials = errors.New("authentication failed")
)

func authStatus(err error) int {
	if errors.Is(err, errNoCredentials) {
		return http.StatusUnauthorized
	}
	return http.StatusForbidden
}

// requestToken finds the token of a request: a bearer token, salt-api's
// X-Auth-Token header, and for event streams (a browser's EventSource cannot
// set headers) the token or salt_token query parameter.
func requestToken(r *http.Request, allowQuery bool) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, tok, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if t := r.Header.Get("X-Auth-Token"); t != "" {
		return t
	}
	if allowQuery {
		q := r.URL.Query()
		if t := q.Get("token"); t != "" {
			return t
		}
		return q.Get("salt_token")
	}
	return ""
}

// checkToken authenticates r by token. Every configured token is compared,
// in constant time, so the time taken tells nothing about any of them.
func (s *Server) checkToken(r *http.Request, allowQuery bool) error {
	tok := requestToken(r, allowQuery)
	if tok == "" {
		return fmt.Errorf("%w: send a token as Authorization: Bearer <token>", errNoCredentials)
	}
	sum := sha256.Sum256([]byte(tok))
	ok := 0
	tokens := s.access.Load().tokens
	for i := range tokens {
		ok |= subtle.ConstantTimeCompare(sum[:], tokens[i][:])
	}
	if ok != 1 {
		return fmt.Errorf("%w: the token is not one of the API's tokens", errBadCredentials)
	}
	return nil
}

// hasSignature reports whether r carries the signature header h needs, so
// that an unsigned request is refused before its body is read.
func hasSignature(r *http.Request, h *Hook) error {
	if r.Header.Get(h.SignatureHeader) == "" {
		return fmt.Errorf("%w: this hook needs an HMAC-SHA256 signature of the body in %s", errNoCredentials, h.SignatureHeader)
	}
	return nil
}

// verifySignature checks the HMAC-SHA256 of body in r's signature header:
// "sha256=<hex>" over the body (GitHub's X-Hub-Signature-256 format), or in
// X-Brine-Signature "t=<unix seconds>,sha256=<hex>" over "<t>.<body>", with
// t within SignatureTolerance of now.
func verifySignature(r *http.Request, h *Hook, body []byte, now time.Time) error {
	value := r.Header.Get(h.SignatureHeader)
	if value == "" {
		return hasSignature(r, h)
	}
	mac := hmac.New(sha256.New, h.Secret)
	var sig string
	if h.SignatureHeader == BrineSignatureHeader {
		var ts string
		for part := range strings.SplitSeq(value, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "t":
				ts = v
			case "sha256":
				sig = v
			}
		}
		t, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || sig == "" {
			return fmt.Errorf("%w: %s must read t=<unix seconds>,sha256=<hex>", errBadCredentials, h.SignatureHeader)
		}
		if d := now.Sub(time.Unix(t, 0)); d > SignatureTolerance || d < -SignatureTolerance {
			return fmt.Errorf("%w: %s time is %s from the server's clock (tolerance %s)", errBadCredentials, h.SignatureHeader, d.Round(time.Second), SignatureTolerance)
		}
		mac.Write([]byte(ts + "."))
	} else {
		var ok bool
		if sig, ok = strings.CutPrefix(value, "sha256="); !ok {
			return fmt.Errorf("%w: %s must read sha256=<hex>", errBadCredentials, h.SignatureHeader)
		}
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: %s: the signature is not hex", errBadCredentials, h.SignatureHeader)
	}
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: %s does not match the body (wrong secret, or the body was changed)", errBadCredentials, h.SignatureHeader)
	}
	return nil
}

// Sign returns the signature header value for body as the hook's format
// wants it; senders written in Go (and the benchmark) use it.
func Sign(header string, secret, body []byte, now time.Time) string {
	mac := hmac.New(sha256.New, secret)
	if http.CanonicalHeaderKey(header) == BrineSignatureHeader {
		ts := strconv.FormatInt(now.Unix(), 10)
		mac.Write([]byte(ts + "."))
		mac.Write(body)
		return "t=" + ts + ",sha256=" + hex.EncodeToString(mac.Sum(nil))
	}
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
