package saltapi

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
)

// EAuth is the master's external_auth configuration: the backends brine
// can run (Salt's file eauth) with the permission lists Salt's ACL syntax
// gives each user. It answers salt-api's /login (Authenticate) and gives
// the ACL that every later call is checked against (AuthList).
type EAuth struct {
	backends map[string]*fileEAuth
}

// fileEAuth is salt.auth.file: a text, htpasswd or htdigest file of users
// and passwords, and the users' (and groups') permission lists beside its
// ^options.
type fileEAuth struct {
	filename       string
	filetype       string // text, htpasswd or htdigest
	hashtype       string // text only: plaintext, md5, sha256 or sha512
	fieldSeparator string
	usernameField  int // 1-based as Salt's option; Python indexing (0 and negatives count from the end)
	passwordField  int
	realm          string

	// acl is every key that is not a ^option: user names (globs or
	// regexes, as fill_auth_list's expr_match reads them), '*' and
	// 'group%' entries, each with its permission list.
	acl map[string][]any

	mu    sync.Mutex
	mtime time.Time
	size  int64
	data  []byte
}

// textHashes are the digests salt.modules.hashutil.digest knows in Salt
// 3006.6: any other ^hashtype makes every login fail in Salt, so brine
// refuses it when the configuration is read.
var textHashes = map[string]func() hash.Hash{
	"md5":    md5.New,
	"sha256": sha256.New,
	"sha512": sha512.New,
}

// ParseEAuth reads the master's external_auth mapping. where gives the
// "file:line" of a top-level configuration key (here "external_auth") so
// that an error names the place to fix as well as the key path in Salt's
// terms (external_auth:file:^hashtype).
func ParseEAuth(externalAuth map[string]any, where func(key string) string) (*EAuth, error) {
	at := "external_auth"
	if where != nil {
		if w := where("external_auth"); w != "" {
			at = w + ": external_auth"
		}
	}
	e := &EAuth{backends: map[string]*fileEAuth{}}
	names := make([]string, 0, len(externalAuth))
	for k := range externalAuth {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		switch name {
		case "file":
		case "pam":
			return nil, fmt.Errorf("%s:pam: the pam eauth is not supported by brine (PAM needs cgo, and brine is built without it); use the file eauth", at)
		default:
			return nil, fmt.Errorf("%s:%s: the %s eauth is not supported by brine; only the file eauth (salt.auth.file) is", at, name, name)
		}
		m, ok := asDict(externalAuth[name])
		if !ok {
			return nil, fmt.Errorf("%s:%s: must be a mapping of ^options and users, not %s", at, name, pyTypeName(externalAuth[name]))
		}
		f, err := parseFileEAuth(m, at+":"+name)
		if err != nil {
			return nil, err
		}
		e.backends[name] = f
	}
	return e, nil
}

func parseFileEAuth(m map[string]any, at string) (*fileEAuth, error) {
	f := &fileEAuth{
		filetype:       "text",
		hashtype:       "plaintext",
		fieldSeparator: ":",
		usernameField:  1,
		passwordField:  2,
		acl:            map[string][]any{},
	}
	for k, v := range m {
		if !strings.HasPrefix(k, "^") {
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s:%s: a permission list is needed (a YAML list such as ['test.*']), not %s", at, k, pyTypeName(v))
			}
			norm := make([]any, len(list))
			for i, p := range list {
				norm[i] = normalize(p)
			}
			f.acl[k] = norm
			warnRegexps(at+":"+k, norm)
			continue
		}
		opt := k[1:]
		switch opt {
		case "filename", "filetype", "hashtype", "field_separator", "realm":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s:%s: must be a string, not %s", at, k, pyTypeName(v))
			}
			switch opt {
			case "filename":
				f.filename = s
			case "filetype":
				// Salt looks the type up as written, so "Text" is no type.
				if s != "text" && s != "htpasswd" && s != "htdigest" {
					return nil, fmt.Errorf("%s:%s: %q is not a file type of Salt's file eauth (text, htpasswd or htdigest)", at, k, s)
				}
				f.filetype = s
			case "hashtype":
				if _, ok := textHashes[s]; !ok && s != "plaintext" {
					return nil, fmt.Errorf("%s:%s: %q is not a hash Salt's file eauth can check (plaintext, md5, sha256 or sha512: salt.modules.hashutil.digest knows no other, so Salt would refuse every login)", at, k, s)
				}
				f.hashtype = s
			case "field_separator":
				if s == "" {
					return nil, fmt.Errorf("%s:%s: must not be empty (Python's str.split refuses an empty separator)", at, k)
				}
				f.fieldSeparator = s
			case "realm":
				f.realm = s
			}
		case "username_field", "password_field":
			n, err := pyInt(v)
			if err != nil {
				return nil, fmt.Errorf("%s:%s: %w", at, k, err)
			}
			if opt == "username_field" {
				f.usernameField = n
			} else {
				f.passwordField = n
			}
		default:
			return nil, fmt.Errorf("%s:%s: not an option of Salt's file eauth (^filename, ^filetype, ^hashtype, ^field_separator, ^username_field, ^password_field, ^realm)", at, k)
		}
	}
	if f.filename == "" {
		return nil, fmt.Errorf("%s:^filename: is required: the file of users and passwords", at)
	}
	if f.filetype == "htdigest" && f.realm == "" {
		return nil, fmt.Errorf("%s:^realm: is required with ^filetype: htdigest", at)
	}
	return f, nil
}

// pyInt is Python's int() of an option value: an integer or a string of one.
func pyInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case uint64:
		return int(n), nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("must be a field number, not %s", py.ReprValue(v))
}

// Authenticate checks a /login as salt.auth.file does and returns the
// perms salt-api's /login reply carries: the user's own list and the '*'
// list, strings sorted first then the rest (netapi's sum_permissions and
// sorted_permissions). Salt's file eauth has no groups, so 'name%' entries
// never apply. Salt sends {} for an empty perms list; that is the caller's
// to write. An unknown eauth, an unknown user or a wrong password is
// ok=false with no error; a file that cannot be read is an error naming it.
// Salt also delays a failed login (LoadAuth.time_auth): that is the
// caller's too.
func (e *EAuth) Authenticate(eauth, username, password string) (perms []any, ok bool, err error) {
	f := e.backend(eauth)
	if f == nil {
		return nil, false, nil
	}
	data, err := f.read()
	if err != nil {
		return nil, false, err
	}
	switch f.filetype {
	case "htpasswd":
		ok, err = f.checkHtpasswd(data, username, password)
	case "htdigest":
		ok = f.checkHtdigest(data, username, password)
	default:
		ok = f.checkText(data, username, password)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	return sortedPermissions(append(append([]any{}, f.acl[username]...), f.acl["*"]...)), true, nil
}

// AuthList is the ACL a call of an authenticated user is checked against
// (LoadAuth.get_auth_list through CkMinions.fill_auth_list): the lists of
// every user key that the name matches as a glob or a whole regex, and the
// '*' list only when none did (permissive_acl is off, as Salt's default).
// ^options are no users here, where Salt would match them as names too.
func (e *EAuth) AuthList(eauth, username string) []any {
	f := e.backend(eauth)
	if f == nil {
		return nil
	}
	keys := make([]string, 0, len(f.acl))
	for k := range f.acl {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var list []any
	matched := false
	for _, k := range keys {
		if k == "*" || strings.HasSuffix(k, "%") {
			continue
		}
		// Salt calls expr_match(match, name): the user name is the
		// pattern and the key the text, so "web*" as a key is only
		// the user "web*" itself, and a user named with glob or regex
		// characters matches other keys. brine does as Salt does.
		if fnmatch.ExprMatcher(username)(k) {
			matched = true
			list = append(list, f.acl[k]...)
		}
	}
	if !matched {
		list = append(list, f.acl["*"]...)
	}
	return list
}

// Enabled reports whether eauth is a configured backend, as Salt answers
// "The eauth system ... is not enabled" otherwise.
func (e *EAuth) Enabled(eauth string) bool { return e.backend(eauth) != nil }

func (e *EAuth) backend(eauth string) *fileEAuth {
	if e == nil {
		return nil
	}
	return e.backends[eauth]
}

// read returns the password file, read again whenever its modification
// time or size changed: Salt reads it at every login, so an edit applies
// to the next one without a restart.
func (f *fileEAuth) read() ([]byte, error) {
	st, err := os.Stat(f.filename)
	if err != nil {
		return nil, fmt.Errorf("external_auth:file:^filename %s: %w", f.filename, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.data != nil && st.ModTime().Equal(f.mtime) && st.Size() == f.size {
		return f.data, nil
	}
	data, err := os.ReadFile(f.filename)
	if err != nil {
		return nil, fmt.Errorf("external_auth:file:^filename %s: %w", f.filename, err)
	}
	f.data, f.mtime, f.size = data, st.ModTime(), st.Size()
	return data, nil
}

// pyLines is Python's readlines on a text file: universal newlines.
func pyLines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// pyField is fields[n] with Python's negative indexing.
func pyField(fields []string, n int) (string, bool) {
	if n < 0 {
		n += len(fields)
	}
	if n < 0 || n >= len(fields) {
		return "", false
	}
	return fields[n], true
}

// checkText is salt.auth.file._text: the first line whose username field
// is the user decides; a line short of either field fails the whole
// lookup, as Salt stops there too.
func (f *fileEAuth) checkText(data []byte, username, password string) bool {
	for i, line := range pyLines(data) {
		fields := strings.Split(strings.TrimSpace(line), f.fieldSeparator)
		user, ok := pyField(fields, f.usernameField-1)
		if ok {
			var pw string
			if pw, ok = pyField(fields, f.passwordField-1); ok && user == username {
				want := password
				if h := textHashes[f.hashtype]; h != nil {
					d := h()
					d.Write([]byte(password))
					want = hex.EncodeToString(d.Sum(nil))
				}
				return subtle.ConstantTimeCompare([]byte(pw), []byte(want)) == 1
			}
		}
		if !ok {
			slog.Warn("salt-api file eauth: a line lacks the username or password field; Salt refuses every user from here on",
				"file", f.filename, "line", i+1)
			return false
		}
	}
	return false
}

// htLines are the records of an Apache file: blank and # lines skipped,
// every other line split on ':' into exactly n fields (passlib refuses the
// whole file otherwise, and so every login).
func htLines(data []byte, n int, filename string) ([][]string, bool) {
	var recs [][]string
	for i, line := range pyLines(data) {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Split(strings.TrimRight(line, " \t"), ":")
		if len(fields) != n {
			slog.Warn("salt-api file eauth: malformed line; passlib refuses the whole file", "file", filename, "line", i+1)
			return nil, false
		}
		recs = append(recs, fields)
	}
	return recs, true
}

// errHashScheme is a htpasswd entry in a scheme brine does not check.
var errHashScheme = errors.New("not supported by brine")

// checkHtpasswd is passlib's HtpasswdFile.check_password: the user's first
// entry, hashed with bcrypt ($2a$, $2b$, $2y$), Apache's MD5 ($apr1$), the
// MD5 crypt ($1$) or {SHA}. SHA-crypt ($5$, $6$), DES crypt and plaintext
// entries (which passlib also accepts) are an error naming the scheme.
func (f *fileEAuth) checkHtpasswd(data []byte, username, password string) (bool, error) {
	recs, ok := htLines(data, 2, f.filename)
	if !ok {
		return false, nil
	}
	for _, r := range recs {
		if r[0] != username {
			continue
		}
		ok, err := checkHtpasswdHash(r[1], password)
		if err != nil {
			return false, fmt.Errorf("external_auth:file:^filename %s: the entry of %s: %w", f.filename, username, err)
		}
		return ok, nil
	}
	return false, nil
}

func checkHtpasswdHash(h, password string) (bool, error) {
	switch {
	case strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"), strings.HasPrefix(h, "$2y$"):
		err := bcrypt.CompareHashAndPassword([]byte(h), []byte(password))
		if err == nil {
			return true, nil
		}
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return false, nil
		}
		return false, fmt.Errorf("bcrypt hash: %w", err)
	case strings.HasPrefix(h, "$apr1$"):
		return subtle.ConstantTimeCompare([]byte(md5Crypt(password, h, "$apr1$")), []byte(h)) == 1, nil
	case strings.HasPrefix(h, "$1$"):
		return subtle.ConstantTimeCompare([]byte(md5Crypt(password, h, "$1$")), []byte(h)) == 1, nil
	case strings.HasPrefix(h, "{SHA}"):
		sum := sha1.Sum([]byte(password))
		return subtle.ConstantTimeCompare([]byte(base64.StdEncoding.EncodeToString(sum[:])), []byte(h[len("{SHA}"):])) == 1, nil
	case strings.HasPrefix(h, "$5$"), strings.HasPrefix(h, "$6$"):
		return false, fmt.Errorf("SHA-crypt (%s) is %w: use bcrypt (htpasswd -B)", h[:3], errHashScheme)
	case len(h) == 13:
		return false, fmt.Errorf("DES crypt is %w: use bcrypt (htpasswd -B)", errHashScheme)
	default:
		return false, fmt.Errorf("a plaintext or unknown hash is %w: use bcrypt (htpasswd -B)", errHashScheme)
	}
}

// md5Crypt is the MD5 crypt of FreeBSD ($1$) and Apache ($apr1$, the same
// but for its magic), hashed with the salt of setting (up to 8 characters
// after the magic, ending at '$').
func md5Crypt(password, setting, magic string) string {
	salt := strings.TrimPrefix(setting, magic)
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	pw := []byte(password)
	alt := md5.Sum([]byte(password + salt + password))
	ctx := md5.New()
	ctx.Write(pw)
	ctx.Write([]byte(magic + salt))
	for n := len(pw); n > 0; n -= 16 {
		ctx.Write(alt[:min(n, 16)])
	}
	for i := len(pw); i != 0; i >>= 1 {
		if i&1 != 0 {
			ctx.Write([]byte{0})
		} else {
			ctx.Write(pw[:1])
		}
	}
	final := ctx.Sum(nil)
	for i := 0; i < 1000; i++ {
		c := md5.New()
		if i&1 != 0 {
			c.Write(pw)
		} else {
			c.Write(final)
		}
		if i%3 != 0 {
			c.Write([]byte(salt))
		}
		if i%7 != 0 {
			c.Write(pw)
		}
		if i&1 != 0 {
			c.Write(final)
		} else {
			c.Write(pw)
		}
		final = c.Sum(nil)
	}
	const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var out bytes.Buffer
	put := func(v uint32, n int) {
		for ; n > 0; n-- {
			out.WriteByte(itoa64[v&0x3f])
			v >>= 6
		}
	}
	for _, t := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		put(uint32(final[t[0]])<<16|uint32(final[t[1]])<<8|uint32(final[t[2]]), 4)
	}
	put(uint32(final[11]), 2)
	return magic + salt + "$" + out.String()
}

// checkHtdigest is passlib's HtdigestFile.check_password: the entry of
// user and ^realm holds md5("user:realm:password") in hex.
func (f *fileEAuth) checkHtdigest(data []byte, username, password string) bool {
	recs, ok := htLines(data, 3, f.filename)
	if !ok {
		return false
	}
	for _, r := range recs {
		if r[0] != username || r[1] != f.realm {
			continue
		}
		sum := md5.Sum([]byte(username + ":" + f.realm + ":" + password))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(strings.ToLower(r[2]))) == 1
	}
	return false
}

// sortedPermissions is netapi.sorted_permissions: the strings deduplicated
// and sorted, then the other entries deduplicated and sorted by their
// Python repr.
func sortedPermissions(perms []any) []any {
	var strs []string
	var others []any
	seen := map[string]bool{}
	for _, p := range perms {
		if s, ok := p.(string); ok {
			if !seen[s] {
				seen[s] = true
				strs = append(strs, s)
			}
			continue
		}
		dup := false
		for _, o := range others {
			if reflect.DeepEqual(o, p) {
				dup = true
				break
			}
		}
		if !dup {
			others = append(others, p)
		}
	}
	sort.Strings(strs)
	sort.SliceStable(others, func(i, j int) bool { return py.ReprValue(others[i]) < py.ReprValue(others[j]) })
	out := make([]any, 0, len(strs)+len(others))
	for _, s := range strs {
		out = append(out, s)
	}
	return append(out, others...)
}

// normalize turns the map[any]any a YAML decoder may give into the
// map[string]any the ACL checks read, all the way down.
func normalize(v any) any {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = normalize(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = normalize(x)
		}
		return l
	}
	return v
}

// regexCache holds compiled ACL expressions, which come from the
// configuration and so are few.
var regexCache sync.Map // string -> *regexp.Regexp or error

// pyRegexp compiles a Python regular expression with Go's RE2: \Z is
// Python's end of string (Go's \z). What RE2 lacks (look-arounds,
// back-references) fails to compile, which the checks treat as Salt treats
// an invalid expression: no match.
func pyRegexp(expr string) (*regexp.Regexp, error) {
	if v, ok := regexCache.Load(expr); ok {
		if re, ok := v.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, v.(error)
	}
	re, err := regexp.Compile(py.GoRegex(expr))
	if err != nil {
		regexCache.Store(expr, err)
		return nil, err
	}
	regexCache.Store(expr, re)
	return re, nil
}

// warnRegexps logs the function and argument expressions of a permission
// list that Go's RE2 cannot compile: Salt starts with an invalid
// expression too, and it matches nothing there as here, but the operator
// should hear of it when the configuration is read rather than find every
// call refused. Targets and '@' entries are no expressions.
func warnRegexps(at string, perms []any) {
	warn := func(x any) {
		if s, ok := x.(string); ok {
			if _, err := pyRegexp(`\A(?:` + s + `)`); err != nil {
				slog.Warn("salt-api: an ACL expression that matches nothing (invalid, or Python syntax beyond Go's RE2)", "key", at, "regex", s, "err", err)
			}
		}
	}
	for _, p := range perms {
		if s, ok := p.(string); ok {
			if !strings.HasPrefix(s, "@") {
				warn(s)
			}
			continue
		}
		d, _ := p.(map[string]any)
		for _, spec := range d {
			specs, ok := spec.([]any)
			if !ok {
				specs = []any{spec}
			}
			for _, sp := range specs {
				warn(sp)
				fd, _ := sp.(map[string]any)
				for fn, conds := range fd {
					warn(fn)
					cl, ok := conds.([]any)
					if !ok {
						cl = []any{conds}
					}
					for _, c := range cl {
						cd, _ := c.(map[string]any)
						if a, ok := cd["args"].([]any); ok {
							for _, x := range a {
								warn(x)
							}
						}
						if k, ok := cd["kwargs"].(map[string]any); ok {
							for _, x := range k {
								warn(x)
							}
						}
					}
				}
			}
		}
	}
}
