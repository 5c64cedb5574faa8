// Package redact masks secrets (passwords, tokens, keys) in what brine
// shows, records or logs: job arguments and returns, event data, error
// text and every log line. It is one set of patterns for all of them, so
// that a secret masked in a job's record is masked in the log too.
package redact

import (
	"regexp"
	"strings"
)

// Masked replaces a secret.
const Masked = "***"

// secretKeys match argument and data key names whose values are secrets.
var secretKeys = []string{
	`(?i)pass(wd|word|phrase)?`, `(?i)secret`, `(?i)token`, `(?i)api[_-]?key`, `(?i)private`,
	`(?i)credential`, `(?i)^auth`, `(?i)(^|[_-])key$`, `(?i)signature`, `(?i)cookie`, `(?i)session`,
}

// secretValues match secrets wherever they appear in text. A pattern with a
// group keeps what precedes the group (e.g. "password=") and masks the group.
var secretValues = []string{
	`xox[abposr]-[A-Za-z0-9-]+`,                          // Slack tokens
	`xapp-[A-Za-z0-9-]+`,                                 // Slack app tokens
	`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+`, // Slack webhooks
	`(?:A3T[A-Z0-9]|AKIA|ASIA)[A-Z0-9]{16}`,              // AWS access key ids
	`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`,
	`(?i)(?:password|passwd|pwd|secret|token|api[_-]?key)\s*[=:]\s*("[^"]*"|'[^']*'|[^\s,;&'"]+)`,
	`(?i)(?:^|\s)(?:-p|--password[= ])\s*([^\s-][^\s]*)`, // an option, not "-p" inside a word (web-prod1)
	`(?i)\bbearer\s+([A-Za-z0-9._~+/-]+=*)`,
	`(?i)://[^/\s:@]+:([^@\s/]+)@`, // credentials in URLs
}

// Redactor masks secrets in job arguments, returns and message text: job
// events carry masked arguments, integrations (Slack) mask what they post,
// and brine's loggers mask every line.
type Redactor struct {
	keys   []*regexp.Regexp
	values []*regexp.Regexp
	exact  []string
}

// New builds a Redactor from the built-in patterns plus extra key
// and value patterns (already validated regular expressions), masking also
// every exact string (an integration's own token and webhook URL).
func New(extraKeys, extraValues, exact []string) *Redactor {
	r := &Redactor{}
	for _, p := range append(append([]string{}, secretKeys...), extraKeys...) {
		r.keys = append(r.keys, regexp.MustCompile(p))
	}
	for _, p := range append(append([]string{}, secretValues...), extraValues...) {
		r.values = append(r.values, regexp.MustCompile(p))
	}
	for _, e := range exact {
		if e != "" {
			r.exact = append(r.exact, e)
		}
	}
	return r
}

// SecretKey reports whether values under the key name are secrets. A
// state's result key ({module}_|-{id}_|-{name}_|-{function}) names a
// state, not a value: /etc/ssl/private/x.pem's result is not a secret,
// though what it holds is masked key by key as anything else.
func (r *Redactor) SecretKey(name string) bool {
	if strings.Count(name, "_|-") == 3 {
		return false
	}
	for _, k := range r.keys {
		if k.MatchString(name) {
			return true
		}
	}
	return false
}

// Value masks a value: everything under a secret key name, secret-looking
// strings anywhere inside mappings and lists. It never changes v.
func (r *Redactor) Value(name string, v any) any {
	if name != "" && r.SecretKey(name) && v != nil {
		return Masked
	}
	switch t := v.(type) {
	case string:
		return r.Text(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = r.Value(k, x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.Value("", x)
		}
		return out
	}
	return v
}

// Text masks secret-looking substrings of s.
func (r *Redactor) Text(s string) string {
	for _, e := range r.exact {
		s = strings.ReplaceAll(s, e, Masked)
	}
	for _, re := range r.values {
		if re.NumSubexp() == 0 {
			s = re.ReplaceAllString(s, Masked)
			continue
		}
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			loc := re.FindStringSubmatchIndex(m)
			if len(loc) < 4 || loc[2] < 0 {
				return Masked
			}
			group := m[loc[2]:loc[3]]
			if q := group[:1]; len(group) >= 2 && (q == `"` || q == "'") && group[len(group)-1:] == q {
				return m[:loc[2]] + q + Masked + q + m[loc[3]:] // keep the quotes
			}
			return m[:loc[2]] + Masked + m[loc[3]:]
		})
	}
	return s
}

// builtin masks with the built-in patterns only.
var builtin = New(nil, nil, nil)

// Value masks the secrets in a value a job records or shows (arguments,
// returns) with the built-in patterns: what job events, the job store and
// replies carry.
func Value(v any) any { return builtin.Value("", v) }

// Text masks secret-looking substrings of a message (an error, a log
// line) with the built-in patterns.
func Text(s string) string { return builtin.Text(s) }

// SecretKey reports whether values under the key name are secrets, by the
// built-in patterns.
func SecretKey(name string) bool { return builtin.SecretKey(name) }
