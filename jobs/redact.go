package jobs

import "github.com/brinehq/brine/internal/redact"

// The masking itself lives in internal/redact, which brine's loggers use
// as well (and which, unlike jobs, they can import): one set of patterns
// for what jobs record and what the logs say.

// Masked replaces a secret.
const Masked = redact.Masked

// Redactor masks secrets in job arguments, returns and message text.
type Redactor = redact.Redactor

// NewRedactor builds a Redactor from the built-in patterns plus extra key
// and value patterns (already validated regular expressions), masking also
// every exact string (an integration's own token and webhook URL).
func NewRedactor(extraKeys, extraValues, exact []string) *Redactor {
	return redact.New(extraKeys, extraValues, exact)
}

// Redact masks the secrets in a value a job records or shows (arguments,
// returns) with the built-in patterns: what job events, the job store and
// replies carry.
func Redact(v any) any { return redact.Value(v) }

// RedactText masks secret-looking substrings of a message (an error, a log
// line) with the built-in patterns.
func RedactText(s string) string { return redact.Text(s) }
