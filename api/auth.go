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
	switch {
	case errors.Is(err, errNoCredentials):
		return http.StatusUnauthorized
	case errors.Is(err, errReplay):
		return http.StatusConflict
	case errors.Is(err, errReplayMemoryFull):
		return http.StatusServiceUnavailable
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

// Signature refusals beyond the credential errors: a replayed signature is
// answered 409, and 503 while the replay memory is full.
var (
	errReplay           = errors.New("signature already used")
	errReplayMemoryFull = errors.New("too many signed requests in the replay window")
)

// signatureError is a refused hook signature. Reason labels it in
// brine_api_hook_signatures_refused_total; err is what the sender is told
// and decides the status (see authStatus).
type signatureError struct {
	reason string
	err    error
}

func (e *signatureError) Error() string { return e.err.Error() }
func (e *signatureError) Unwrap() error { return e.err }

// Reasons of signature refusals, a closed label set.
const (
	refusedMissing     = "missing"      // no signature header
	refusedMalformed   = "malformed"    // unreadable header
	refusedV1          = "v1"           // X-Brine-Signature's retired sha256= form
	refusedMismatch    = "mismatch"     // wrong secret, path, time or body
	refusedTime        = "time"         // outside the tolerance window
	refusedBeforeStart = "before_start" // possibly accepted before a restart
	refusedReplay      = "replay"       // accepted before, within the window
	refusedMemoryFull  = "memory_full"  // the replay memory is full
)

// refusalReasons are all the reasons, each exported from the first scrape.
var refusalReasons = []string{refusedMissing, refusedMalformed, refusedV1, refusedMismatch,
	refusedTime, refusedBeforeStart, refusedReplay, refusedMemoryFull}

// refused builds a signatureError wrapping base (errNoCredentials or
// errBadCredentials, which decide the status) with the formatted message.
func refused(reason string, base error, format string, args ...any) error {
	return &signatureError{reason: reason, err: fmt.Errorf("%w: "+format, append([]any{base}, args...)...)}
}

// hasSignature reports whether r carries the signature header h needs, so
// that an unsigned request is refused before its body is read.
func hasSignature(r *http.Request, h *Hook) error {
	if r.Header.Get(h.SignatureHeader) == "" {
		return refused(refusedMissing, errNoCredentials, "this hook needs an HMAC-SHA256 signature in %s", h.SignatureHeader)
	}
	return nil
}

// signature is an accepted X-Brine-Signature as the replay memory keeps
// it: its key and the last moment its time is within the window.
type signature struct {
	key     replayKey
	expires time.Time
}

// verifySignature checks the signature header of a request to the hook
// path with body (formats in SignHook). An X-Brine-Signature must also be
// timed within SignatureTolerance before now and SignatureMaxAhead after
// it, and after notBefore, and it is returned for the replay memory. A
// GitHub-form signature has neither time nor path, and nil is returned.
//
// The MAC is checked before the time, so that time, start and replay
// refusals count only authentic requests: those are the replays.
func verifySignature(r *http.Request, h *Hook, path string, body []byte, now, notBefore time.Time) (*signature, error) {
	value := r.Header.Get(h.SignatureHeader)
	if value == "" {
		return nil, hasSignature(r, h)
	}
	if h.SignatureHeader != BrineSignatureHeader {
		sig, ok := strings.CutPrefix(value, "sha256=")
		if !ok {
			return nil, refused(refusedMalformed, errBadCredentials, "%s must read sha256=<hex>", h.SignatureHeader)
		}
		if err := checkMAC(h, sig, bodyMAC(h.Secret, body)); err != nil {
			return nil, err
		}
		return nil, nil
	}
	var ts, v2, v1 string
	for part := range strings.SplitSeq(value, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v2":
			v2 = v
		case "sha256":
			v1 = v
		}
	}
	if v2 == "" && v1 != "" {
		return nil, refused(refusedV1, errBadCredentials,
			`%s holds only the retired sha256= signature (of "<t>.<body>"), which covers neither the hook path nor a single use: send t=<unix seconds>,v2=<hex of HMAC-SHA256(secret, "%s\n<t>\n<body>")> (see the API section of docs/security.md)`,
			h.SignatureHeader, path)
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || t <= 0 || strconv.FormatInt(t, 10) != ts || v2 == "" {
		return nil, refused(refusedMalformed, errBadCredentials, "%s must read t=<unix seconds>,v2=<hex>", h.SignatureHeader)
	}
	if strings.ContainsAny(path, "\r\n") {
		// A line break would let path and time trade bytes in the signed
		// text; tags refuse them anyway.
		return nil, refused(refusedMalformed, errBadCredentials, "the hook path holds a line break")
	}
	mac := brineMAC(h.Secret, path, ts, body)
	if err := checkMAC(h, v2, mac); err != nil {
		return nil, err
	}
	signed := time.Unix(t, 0)
	switch d := now.Sub(signed); {
	case d > SignatureTolerance:
		return nil, refused(refusedTime, errBadCredentials, "%s time is %s behind the server's clock (at most %s): sign each request when sending it", h.SignatureHeader, d.Round(time.Second), SignatureTolerance)
	case d < -SignatureMaxAhead:
		return nil, refused(refusedTime, errBadCredentials, "%s time is %s ahead of the server's clock (at most %s): check the sender's clock", h.SignatureHeader, (-d).Round(time.Second), SignatureMaxAhead)
	}
	if !signed.After(notBefore) {
		return nil, refused(refusedBeforeStart, errBadCredentials,
			"%s time %s is not after %s (the API's start plus %s): the run before a restart may have accepted it, so it is refused; sign the request again",
			h.SignatureHeader, signed.UTC().Format(time.RFC3339), notBefore.UTC().Format(time.RFC3339), SignatureMaxAhead)
	}
	sig := &signature{expires: signed.Add(SignatureTolerance)}
	copy(sig.key[:], mac)
	return sig, nil
}

// checkMAC compares the hex signature sig with want in constant time.
func checkMAC(h *Hook, sig string, want []byte) error {
	got, err := hex.DecodeString(sig)
	if err != nil {
		return refused(refusedMalformed, errBadCredentials, "%s: the signature is not hex", h.SignatureHeader)
	}
	if !hmac.Equal(got, want) {
		what := "the body"
		if h.SignatureHeader == BrineSignatureHeader {
			what = "the hook path, time and body"
		}
		return refused(refusedMismatch, errBadCredentials, "%s does not match %s (wrong secret, or something was changed)", h.SignatureHeader, what)
	}
	return nil
}

// bodyMAC is GitHub's X-Hub-Signature-256 MAC: of the body alone.
func bodyMAC(secret, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return mac.Sum(nil)
}

// brineMAC is X-Brine-Signature's MAC, of "<path>\n<t>\n<body>". The path
// holds no line break and t only digits, so the text splits one way only:
// no field can give bytes to another.
func brineMAC(secret []byte, path, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(path + "\n" + ts + "\n"))
	mac.Write(body)
	return mac.Sum(nil)
}

// SignHook returns the signature header value of a request to the hook
// path (relative to /hook/, as in the event tag: "deploy/web" for POST
// /hook/deploy/web) with body, in the format header wants:
//
//   - X-Brine-Signature: "t=<unix seconds>,v2=<hex>", the HMAC-SHA256 of
//     "<path>\n<t>\n<body>" with t the signing time; accepted once, within
//     SignatureTolerance.
//   - otherwise GitHub's "sha256=<hex>", the HMAC-SHA256 of the body.
//
// Senders written in Go (tests, the benchmark) use it.
func SignHook(header, path string, secret, body []byte, now time.Time) string {
	if http.CanonicalHeaderKey(header) == BrineSignatureHeader {
		ts := strconv.FormatInt(now.Unix(), 10)
		return "t=" + ts + ",v2=" + hex.EncodeToString(brineMAC(secret, path, ts, body))
	}
	return "sha256=" + hex.EncodeToString(bodyMAC(secret, body))
}
