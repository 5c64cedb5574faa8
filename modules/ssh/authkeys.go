package ssh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// AuthKey is one key of an authorized_keys file, as Salt's auth_keys
// describes it.
type AuthKey struct {
	Key, Enc, Comment string
	Options           []string
	Fingerprint       string
}

// Map is the key's description in Salt's shape: {enc, comment, options,
// fingerprint}.
func (k AuthKey) Map() map[string]any {
	opts := make([]any, len(k.Options))
	for i, o := range k.Options {
		opts[i] = o
	}
	return map[string]any{"enc": k.Enc, "comment": k.Comment, "options": opts, "fingerprint": k.Fingerprint}
}

// Keys are a file's keys in its order, each key once (a later line of the
// same key wins, at the first one's place, as in Salt's dict).
type Keys []AuthKey

// Get returns the key whose base64 body is key.
func (ks Keys) Get(key string) (AuthKey, bool) {
	for _, k := range ks {
		if k.Key == key {
			return k, true
		}
	}
	return AuthKey{}, false
}

// Map is Salt's auth_keys return: {key: {enc, comment, options,
// fingerprint}}.
func (ks Keys) Map() map[string]any {
	out := make(map[string]any, len(ks))
	for _, k := range ks {
		out[k.Key] = k.Map()
	}
	return out
}

func (ks *Keys) put(k AuthKey) {
	for i := range *ks {
		if (*ks)[i].Key == k.Key {
			(*ks)[i] = k
			return
		}
	}
	*ks = append(*ks, k)
}

// keyLineRE is the line Salt's _validate_keys and rm_auth_key look for:
// options, then a key type and the rest.
var keyLineRE = regexp.MustCompile(`^(.*?)\s?((?:sk-)?(?:ssh\-|ecds)[\w@.-]+\s.+)$`)

// replaceRE is the line _replace_auth_key looks for (its fourth group is
// the key).
var replaceRE = regexp.MustCompile(`((.*)\s)?((?:sk-)?(?:ssh|ecdsa)-[a-z0-9@.-]+)\s([a-zA-Z0-9+/]+={0,2})(\s(.*))?`)

// FormatAuthLine is Salt's _format_auth_line: "options enc key comment\n"
// (a trailing space when there is no comment, as Salt writes it).
func FormatAuthLine(key, enc, comment string, options []string) string {
	line := ""
	if len(options) > 0 {
		line = strings.Join(options, ",") + " "
	}
	return line + enc + " " + key + " " + comment + "\n"
}

// expandPath is sshd_config's AuthorizedKeysFile expansion, Salt's
// _expand_authorized_keys_path: %h the home, %u the user, %% a %.
func expandPath(path, user, home string) (string, error) {
	var b strings.Builder
	esc := false
	for _, c := range path {
		if esc {
			esc = false
			switch c {
			case '%':
				b.WriteByte('%')
			case 'u':
				b.WriteString(user)
			case 'h':
				b.WriteString(home)
			default:
				return "", fmt.Errorf("AuthorizedKeysFile path: unknown token character \"%%%c\"", c)
			}
			continue
		}
		if c == '%' {
			esc = true
			continue
		}
		b.WriteRune(c)
	}
	if esc {
		return "", errors.New("AuthorizedKeysFile path: Last character can't be escape character")
	}
	return b.String(), nil
}

// errConfig is an error of Salt's _get_config_file, which auth_keys reads
// as "no keys".
type errConfig struct{ error }

// ConfigFile is Salt's _get_config_file: config expanded for user and,
// when relative, under the user's home.
func ConfigFile(user, config string) (string, error) {
	acct, ok, err := lookupUser(user)
	if err != nil {
		return "", err
	}
	if !ok {
		//lint:ignore ST1005 Salt's words.
		return "", errConfig{fmt.Errorf("User '%s' %w", user, ErrNoUser)}
	}
	full, err := expandPath(config, user, acct.home)
	if err != nil {
		return "", errConfig{err}
	}
	if !filepath.IsAbs(full) {
		full = filepath.Join(acct.home, full)
	}
	return full, nil
}

// fileLines are a key file's lines as Salt reads them: stripped, blank
// ones dropped.
func fileLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// ValidateKeys is Salt's _validate_keys: the keys of a file in
// authorized_keys format whose body is base64.
func ValidateKeys(path, hashType string) (Keys, error) {
	lines, err := fileLines(path)
	if err != nil {
		//lint:ignore ST1005 Salt's words.
		return nil, fmt.Errorf("Problem reading ssh key file %s", path)
	}
	var out Keys
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := keyLineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		comps := strings.Fields(m[2])
		if len(comps) < 2 {
			continue
		}
		opts := []string{}
		if m[1] != "" {
			opts = strings.Split(m[1], ",")
		}
		fp, ok, err := Fingerprint(comps[1], hashType)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out.put(AuthKey{Key: comps[1], Enc: comps[0], Comment: strings.Join(comps[2:], " "), Options: opts, Fingerprint: fp})
	}
	return out, nil
}

// AuthKeys is Salt's auth_keys for one user: the keys of the user's
// config file, none when the user or the file does not exist.
func AuthKeys(user, config, hashType string) (Keys, error) {
	full, err := ConfigFile(user, config)
	var ce errConfig
	if errors.As(err, &ce) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !isFile(full) {
		return nil, nil
	}
	return ValidateKeys(full, hashType)
}

// CheckKey is Salt's check_key: "add" when the user's file lacks key,
// "update" when its line differs (type, comment or options), else
// "exists".
func CheckKey(user, key, enc, comment string, options []string, config, hashType string) (string, error) {
	enc, err := RefineEnc(enc)
	if err != nil {
		return "", err
	}
	current, err := AuthKeys(user, config, hashType)
	if err != nil {
		return "", err
	}
	cur, ok := current.Get(key)
	if !ok {
		return "add", nil
	}
	if FormatAuthLine(key, cur.Enc, cur.Comment, cur.Options) != FormatAuthLine(key, enc, comment, options) {
		return "update", nil
	}
	return "exists", nil
}

// SetAuthKey is Salt's set_auth_key: "new" (the line appended, the file
// and its directory created 0600 / 0700 and owned by the user when
// missing), "replace", "no change", "invalid" (a key with spaces),
// "Invalid public key" (not base64) or "fail" (no such user, or no home
// for a file under it).
func SetAuthKey(ctx context.Context, user, key, enc, comment string, options []string, config, hashType string) (string, error) {
	if len(strings.Fields(key)) > 1 {
		return "invalid", nil
	}
	enc, err := RefineEnc(enc)
	if err != nil {
		return "", err
	}
	acct, ok, err := lookupUser(user)
	if err != nil {
		return "", err
	}
	if !ok {
		return "fail", nil
	}
	if _, valid, err := Fingerprint(key, hashType); err != nil {
		return "", err
	} else if !valid {
		return "Invalid public key", nil
	}
	status, err := CheckKey(user, key, enc, comment, options, config, hashType)
	if err != nil {
		return "", err
	}
	switch status {
	case "update":
		if err := replaceAuthKey(user, key, enc, comment, options, config); err != nil {
			return "", err
		}
		return "replace", nil
	case "exists":
		return "no change", nil
	}
	full, err := ConfigFile(user, config)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(full, acct.home) && !isDir(acct.home) {
		return "fail", nil
	}
	root := os.Geteuid() == 0
	if dir := filepath.Dir(full); !isDir(dir) {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", fmt.Errorf("ssh.set_auth_key: %w", err)
		}
		if err := settle(ctx, dir, 0o700, acct.uid, acct.gid, root); err != nil {
			return "", err
		}
	}
	newFile := !isFile(full)
	if err := appendLine(full, FormatAuthLine(key, enc, comment, options), !newFile); err != nil {
		//lint:ignore ST1005 Salt's words.
		return "", fmt.Errorf("Could not write to key file: %w", err)
	}
	if newFile {
		if err := settle(ctx, full, 0o600, acct.uid, acct.gid, root); err != nil {
			return "", err
		}
	}
	return "new", nil
}

// settle is what set_auth_key does to the directory and the file it
// creates: the user's (when it runs as root, chown), mode, and the
// SELinux context restored.
func settle(ctx context.Context, path string, mode os.FileMode, uid, gid int, root bool) error {
	if root {
		if err := os.Chown(path, uid, gid); err != nil {
			return fmt.Errorf("ssh.set_auth_key: %w", err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("ssh.set_auth_key: %w", err)
	}
	restorecon(ctx, path)
	return nil
}

// appendLine appends line to path, after a newline when the file does
// not end with one.
func appendLine(path, line string, exists bool) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if exists {
		if st, err := f.Stat(); err == nil && st.Size() > 0 {
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				line = "\n" + line
			}
		}
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceAuthKey is Salt's _replace_auth_key: the file rewritten in place
// without its blank lines, key's line replaced.
func replaceAuthKey(user, key, enc, comment string, options []string, config string) error {
	full, err := ConfigFile(user, config)
	if err != nil {
		return err
	}
	lines, err := fileLines(full)
	if err != nil {
		//lint:ignore ST1005 Salt's words.
		return fmt.Errorf("Problem reading or writing to key file: %w", err)
	}
	var b strings.Builder
	for _, l := range lines {
		l += "\n"
		if m := replaceRE.FindStringSubmatch(l); !strings.HasPrefix(l, "#") && m != nil && m[4] == key {
			l = FormatAuthLine(key, enc, comment, options)
		}
		b.WriteString(l)
	}
	if err := os.WriteFile(full, []byte(b.String()), 0o666); err != nil {
		//lint:ignore ST1005 Salt's words.
		return fmt.Errorf("Problem reading or writing to key file: %w", err)
	}
	return nil
}

// RmAuthKey is Salt's rm_auth_key: "Key removed" (the file rewritten in
// place without the key's lines, its blank lines and lines that are not
// keys), "Key not present", or "Key not removed" when the file cannot be
// written.
func RmAuthKey(user, key, config, hashType string) (string, error) {
	current, err := AuthKeys(user, config, hashType)
	if err != nil {
		return "", err
	}
	if _, ok := current.Get(key); !ok {
		return "Key not present", nil
	}
	full, err := ConfigFile(user, config)
	if err != nil {
		return "", err
	}
	if !isFile(full) {
		return fmt.Sprintf("Authorized keys file %s not present", full), nil
	}
	lines, err := fileLines(full)
	if err != nil {
		return "Key not removed", nil
	}
	var b strings.Builder
	for _, l := range lines {
		l += "\n"
		if !strings.HasPrefix(l, "#") {
			m := keyLineRE.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
			if m == nil {
				continue
			}
			if comps := strings.Fields(m[2]); len(comps) >= 2 && comps[1] == key {
				continue
			}
		}
		b.WriteString(l)
	}
	if err := os.WriteFile(full, []byte(b.String()), 0o666); err != nil {
		return "Key not removed", nil
	}
	return "Key removed", nil
}

// NoKeys is the error Salt keeps for the ssh_auth state when a source
// file holds no key.
func NoKeys(source string) string {
	return fmt.Sprintf("No keys detected in %s. Is file properly formatted?", source)
}

// KeyStatus is one key of a source file and what CheckKey says of it.
type KeyStatus struct{ Key, Status string }

// CheckKeyFile is Salt's check_key_file on a fetched copy (local) of
// source: each of its keys with CheckKey's answer, in the file's order.
// noKeys is Salt's error when the file holds none.
func CheckKeyFile(user, local, source, config, hashType string) (out []KeyStatus, noKeys string, err error) {
	keys, err := ValidateKeys(local, hashType)
	if err != nil {
		return nil, "", err
	}
	if len(keys) == 0 {
		return nil, NoKeys(source), nil
	}
	for _, k := range keys {
		st, err := CheckKey(user, k.Key, k.Enc, k.Comment, k.Options, config, hashType)
		if err != nil {
			return nil, "", err
		}
		out = append(out, KeyStatus{k.Key, st})
	}
	return out, "", nil
}

// SetAuthKeyFromFile is Salt's set_auth_key_from_file on a fetched copy
// (local) of source: every key set, the answer "fail", "replace", "new"
// or "no change", the first of those any key gave.
func SetAuthKeyFromFile(ctx context.Context, user, local, source, config, hashType string) (string, string, error) {
	all, noKeys, err := eachKey(local, source, hashType, func(k AuthKey) (string, error) {
		return SetAuthKey(ctx, user, k.Key, k.Enc, k.Comment, k.Options, config, hashType)
	})
	if err != nil {
		return "", "", err
	}
	if noKeys != "" {
		return "fail", noKeys, nil
	}
	for _, w := range []string{"fail", "replace", "new"} {
		if strings.Contains(all, w) {
			return w, "", nil
		}
	}
	return "no change", "", nil
}

// eachKey runs do on every key of the fetched file local and gives
// their answers run together (Salt's "".join, which the callers search
// for words), or, for a file without keys, Salt's comment on source.
func eachKey(local, source, hashType string, do func(AuthKey) (string, error)) (all, noKeys string, err error) {
	keys, err := ValidateKeys(local, hashType)
	if err != nil {
		return "", "", err
	}
	if len(keys) == 0 {
		return "", NoKeys(source), nil
	}
	var b strings.Builder
	for _, k := range keys {
		r, err := do(k)
		if err != nil {
			return "", "", err
		}
		b.WriteString(r)
	}
	return b.String(), "", nil
}

// RmAuthKeyFromFile is Salt's rm_auth_key_from_file on a fetched copy
// (local) of source.
func RmAuthKeyFromFile(user, local, source, config, hashType string) (string, string, error) {
	s, noKeys, err := eachKey(local, source, hashType, func(k AuthKey) (string, error) {
		return RmAuthKey(user, k.Key, config, hashType)
	})
	if err != nil {
		return "", "", err
	}
	if noKeys != "" {
		return "fail", noKeys, nil
	}
	switch {
	case strings.Contains(s, "Key not removed"):
		return "Key not removed", "", nil
	case strings.Contains(s, "Key removed"):
		return "Key removed", "", nil
	}
	return "Key not present", "", nil
}
