package cloud

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/brinehq/brine/config"
)

// ErrConfig marks an error in a providers, profiles or map file; the message
// names the file, the line and the key.
var ErrConfig = errors.New("cloud config")

// Setting is one key's value as it was written, kept as YAML so that whoever
// decodes it (the framework or a driver) reports errors at the right line.
type Setting struct {
	Key  string
	File string
	Node ast.Node
}

// Line is the line the value starts on.
func (s Setting) Line() int {
	if s.Node == nil || s.Node.GetToken() == nil {
		return 0
	}
	return s.Node.GetToken().Position.Line
}

// Where is "file:line", for messages about the value.
func (s Setting) Where() string { return fmt.Sprintf("%s:%d", s.File, s.Line()) }

// Decode decodes the value into out; an error names the file, line and key.
func (s Setting) Decode(out any) error {
	if err := config.DecodeNode(s.File, []string{s.Key}, s.Node, out); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// Errorf builds an ErrConfig error about this value.
func (s Setting) Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s: %s", ErrConfig, s.Where(), s.Key, fmt.Sprintf(format, args...))
}

// Settings are the keys of a provider, a profile, a map entry, or the merge
// of the three that describes one VM (Salt's vm_), by key name.
type Settings map[string]Setting

// Has reports whether key is set.
func (s Settings) Has(key string) bool {
	_, ok := s[key]
	return ok
}

// Decode decodes key into out; an absent key leaves out untouched, so out
// may hold the default.
func (s Settings) Decode(key string, out any) error {
	v, ok := s[key]
	if !ok {
		return nil
	}
	return v.Decode(out)
}

// String returns key as a string ("" when absent).
func (s Settings) String(key string) (string, error) {
	var v string
	err := s.Decode(key, &v)
	return v, err
}

// Bool returns key as a boolean, def when absent.
func (s Settings) Bool(key string, def bool) (bool, error) {
	err := s.Decode(key, &def)
	return def, err
}

// Secret resolves key as a Secret (see Secret for the forms it takes).
func (s Settings) Secret(key string) (Secret, error) {
	v, ok := s[key]
	if !ok {
		return Secret{}, nil
	}
	var raw string
	if err := v.Decode(&raw); err != nil {
		return Secret{}, err
	}
	sec, err := resolveSecret(raw)
	if err != nil {
		return Secret{}, v.Errorf("%v", err)
	}
	return sec, nil
}

// Plain decodes every key into plain values (for payloads and listings),
// leaving out the keys for which secret reports true.
func (s Settings) Plain(secret func(key string) bool) (map[string]any, error) {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if secret(k) {
			continue
		}
		var x any
		if err := v.Decode(&x); err != nil {
			return nil, err
		}
		out[k] = x
	}
	return out, nil
}

// merge returns s with the keys of over replacing its own, as salt-cloud
// lays a profile over its provider and a map entry over its profile.
func (s Settings) merge(over Settings) Settings {
	out := make(Settings, len(s)+len(over))
	for k, v := range s {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// IsSecretKey reports whether a key name holds a credential: such keys are
// never put into events, listings or logs.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"password", "passwd", "secret", "token", "key"} {
		if strings.Contains(k, w) && k != "keyname" && k != "private_key" && k != "keysize" {
			return true
		}
	}
	return k == "id" || k == "user_data"
}

// Secret is a credential. It prints as [redacted] in every format, so it
// can be logged or encoded by mistake without leaking. In a file it is
// written as the value itself, or taken from elsewhere:
//
//	password: sdb://osenv/VSPHERE_PASSWORD   # Salt's env sdb form
//	password: env://VSPHERE_PASSWORD
//	password: file:///run/secrets/vsphere    # first line of the file
type Secret struct{ value string }

// Reveal returns the credential, for the one call that needs it.
func (s Secret) Reveal() string { return s.value }

// String keeps fmt from printing the value.
func (Secret) String() string { return "[redacted]" }

// GoString keeps %#v from printing the value.
func (Secret) GoString() string { return "[redacted]" }

// LogValue keeps slog from printing the value.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalJSON keeps encoders from printing the value.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

func resolveSecret(raw string) (Secret, error) {
	for _, p := range []string{"sdb://osenv/", "env://"} {
		if name, ok := strings.CutPrefix(raw, p); ok {
			v, set := os.LookupEnv(name)
			if !set || v == "" {
				return Secret{}, fmt.Errorf("environment variable %s is not set", name)
			}
			return Secret{value: v}, nil
		}
	}
	if path, ok := strings.CutPrefix(raw, "file://"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return Secret{}, fmt.Errorf("reading the secret: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if line = strings.TrimSpace(line); line == "" {
			return Secret{}, fmt.Errorf("secret file %s is empty", path)
		}
		return Secret{value: line}, nil
	}
	return Secret{value: raw}, nil
}
