package jinja

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/nikolalohinski/gonja/v2/exec"

	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/internal/py"
)

// Salt's filters on strings (salt/utils/stringutils.py,
// salt/utils/hashutils.py, the regex filters of salt/utils/jinja.py).

// hashers are hashlib's algorithms by name.
var hashers = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
}

// toBytes is Salt's to_bytes of a value: a string's UTF-8, bytes as they
// are; anything else is refused as Salt refuses it.
func toBytes(v any) ([]byte, error) {
	switch t := v.(type) {
	case string:
		return []byte(t), nil
	case []byte:
		return t, nil
	case pyByteString:
		return []byte(t), nil
	}
	return nil, fmt.Errorf("expected str, bytes, or bytearray not %s", pyClass(v))
}

// digest is md5, sha1, sha256 or sha512: the hex digest of the text.
func digest(algo string) pyFunc {
	return func(in any, _ []any) (any, error) {
		b, err := toBytes(in)
		if err != nil {
			return nil, err
		}
		h := hashers[algo]()
		h.Write(b)
		return hex.EncodeToString(h.Sum(nil)), nil
	}
}

func base64Encode(in any, _ []any) (any, error) {
	b, err := toBytes(in)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// base64Decode decodes as Python's b64decode: characters outside the
// alphabet are dropped; text that is not UTF-8 comes back as bytes.
func base64Decode(in any, _ []any) (any, error) {
	b, err := toBytes(in)
	if err != nil {
		return nil, err
	}
	clean := make([]byte, 0, len(b))
	for _, c := range b {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
			clean = append(clean, c)
		}
	}
	s := strings.TrimRight(string(clean), "=")
	out, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil || len(s)%4 == 1 {
		return nil, errors.New("binascii.Error: Incorrect padding")
	}
	if utf8.Valid(out) {
		return string(out), nil
	}
	return pyByteString(out), nil
}

// filterHMAC is Salt's hmac(string, shared_secret, challenge_hmac):
// whether challenge_hmac is the base64 of string's HMAC-SHA256.
func filterHMAC(in any, args []any) (any, error) {
	sum, err := hmacSHA256(in, args[0])
	if err != nil {
		return nil, err
	}
	challenge, err := toBytes(args[1])
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString(sum) == string(challenge), nil
}

// filterHMACCompute is Salt's hmac_compute(string, shared_secret): the
// hex of string's HMAC-SHA256.
func filterHMACCompute(in any, args []any) (any, error) {
	sum, err := hmacSHA256(in, args[0])
	if err != nil {
		return nil, err
	}
	return hex.EncodeToString(sum), nil
}

// hmacSHA256 is the HMAC-SHA256 of msg with key, both as hmac and
// hmac_compute take them (strings or bytes).
func hmacSHA256(msg, key any) ([]byte, error) {
	m, err := toBytes(msg)
	if err != nil {
		return nil, err
	}
	k, err := toBytes(key)
	if err != nil {
		return nil, err
	}
	h := hmac.New(sha256.New, k)
	h.Write(m)
	return h.Sum(nil), nil
}

// randomHash is Salt's random_hash (and rand_str): the hash_type
// (md5) digest of a random integer from 0 to size.
func randomHash(in any, args []any) (any, error) {
	size, ok := in.(int)
	if !ok {
		return nil, fmt.Errorf(`can only concatenate str (not "int") to str`)
	}
	algo := "md5"
	if truthy(args[0]) {
		algo = jinjaStr(args[0])
	}
	h, ok := hashers[algo]
	if !ok {
		return nil, fmt.Errorf("module 'hashlib' has no attribute '%s'", algo)
	}
	if size < 0 {
		return nil, fmt.Errorf("empty range for randrange() (0, %d, %d)", size+1, size+1)
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(size)+1))
	if err != nil {
		return nil, err
	}
	d := h()
	d.Write([]byte(n.String()))
	return hex.EncodeToString(d.Sum(nil)), nil
}

// randomStr is Salt's random_str(size=32): size characters of the base64
// of random bytes.
func randomStr(in any, _ []any) (any, error) {
	size, ok := asInt(in)
	if !ok {
		return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(in))
	}
	if size < 0 {
		return nil, errors.New("negative argument not allowed")
	}
	b := make([]byte, size)
	_, _ = rand.Read(b)
	s := base64.StdEncoding.EncodeToString(b)
	return s[:size], nil
}

// saltNamespace is Salt's GLOBAL_UUID, the namespace of its uuid filter.
var saltNamespace = uuid.MustParse("91633EBF-1C86-5E33-935A-28061F4B480E")

func filterUUID(in any, _ []any) (any, error) {
	return uuid.NewSHA1(saltNamespace, []byte(jinjaStr(in))).String(), nil
}

// toNum is Salt's to_num: an int, else a float, else the text itself.
func toNum(v any) any {
	switch t := v.(type) {
	case int, int64:
		return t
	case float64:
		return int(t)
	case bool:
		if t {
			return 1
		}
		return 0
	case string:
		s := strings.TrimSpace(t)
		if n, ok := pyInt(s, 10); ok {
			return n
		}
		if f, ok := pyParseFloat(s); ok {
			return f
		}
		return t
	}
	return v
}

func filterToNum(in any, _ []any) (any, error) {
	if in == nil {
		return nil, errors.New("int() argument must be a string, a bytes-like object or a real number, not 'NoneType'")
	}
	return toNum(in), nil
}

// pyInt is Python's int(s, base) of a string: an optional sign, digits
// with single underscores between, and for base 16 an optional 0x.
func pyInt(s string, base int) (int, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if base == 16 && len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = strings.TrimPrefix(s[2:], "_")
	}
	if s == "" || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return int(n), true
}

// pyParseFloat is Python's float() of a string.
func pyParseFloat(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
	default:
		if strings.ContainsAny(s, "xXpP") || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	return f, err == nil
}

func filterToBytes(in any, _ []any) (any, error) {
	b, err := toBytes(in)
	if err != nil {
		return nil, err
	}
	return pyByteString(b), nil
}

// toSnakeCase is Salt's to_snake_case.
func toSnakeCase(in any, _ []any) (any, error) {
	s, ok := in.(string)
	if !ok || s == "" {
		return nil, fmt.Errorf("to_snake_case needs a non-empty string, not %s", pyRepr(in))
	}
	r := []rune(s)
	var b strings.Builder
	b.WriteString(strings.ToLower(string(r[0])))
	for i := 1; i < len(r); i++ {
		if unicode.IsUpper(r[i]) {
			if unicode.IsLower(r[i-1]) || (i != len(r)-1 && unicode.IsLower(r[i+1])) {
				b.WriteByte('_')
			}
		}
		b.WriteString(strings.ToLower(string(r[i])))
	}
	return b.String(), nil
}

// toCamelCase is Salt's to_camelcase(uppercamel=False).
func toCamelCase(in any, args []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("'%s' object has no attribute 'split'", pyTypeName(in))
	}
	words := strings.Split(s, "_")
	if truthy(args[0]) {
		words[0] = pyCapitalize(words[0])
	}
	out := words[0]
	for _, w := range words[1:] {
		out += pyCapitalize(w)
	}
	return out, nil
}

// pyCapitalize is Python's str.capitalize.
func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}

var (
	humanSize    = regexp.MustCompile(`^(?s)([0-9.]*)\s*(.*)$`)
	humanMetric  = regexp.MustCompile(`^[kmgtpezy]b$`)
	humanBinary  = regexp.MustCompile(`^(b|[kmgtpezy](ib)?)$`)
	pyWhitespace = " \t\n\r\x0b\x0c"
)

// humanToBytes is Salt's human_to_bytes(size, default_unit='B',
// handle_metric=False): 0 for what it cannot read.
func humanToBytes(in any, args []any) (any, error) {
	m := humanSize.FindStringSubmatch(strings.Trim(jinjaStr(in), pyWhitespace))
	value := m[1]
	unit := strings.ToLower(m[2])
	if unit == "" {
		unit = strings.ToLower(jinjaStr(args[0]))
	}
	var n float64
	isInt := false
	if i, ok := pyInt(value, 10); ok {
		n, isInt = float64(i), true
	} else if f, ok := pyParseFloat(value); ok {
		n = f
	} else {
		return 0, nil
	}
	dec := false
	if humanMetric.MatchString(unit) {
		dec = truthy(args[1])
	} else if !humanBinary.MatchString(unit) {
		return 0, nil
	}
	p := strings.IndexByte("bkmgtpezy", unit[0])
	mult := 1.0
	for i := 0; i < p; i++ {
		if dec {
			mult *= 1000
		} else {
			mult *= 1024
		}
	}
	if isInt {
		return int(n * mult), nil
	}
	return int(n * mult), nil
}

func filterIsHex(in any, _ []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return false, nil
	}
	_, ok = pyInt(s, 16)
	return ok, nil
}

func containsWhitespace(in any, _ []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("'%s' object is not iterable", pyTypeName(in))
	}
	return strings.IndexFunc(s, unicode.IsSpace) >= 0, nil
}

// checkWhitelistBlacklist is Salt's check_whitelist_blacklist(value,
// whitelist=None, blacklist=None).
func checkWhitelistBlacklist(in any, args []any) (any, error) {
	value := jinjaStr(in)
	lists := [2][]any{}
	for i, a := range args {
		switch t := a.(type) {
		case nil:
		case string:
			if t != "" {
				lists[i] = []any{t}
			}
		case []any:
			lists[i] = t
		default:
			if truthy(a) {
				name := []string{"whitelist", "blacklist"}[i]
				return nil, pyErr("Expecting iterable %s, but got %s (%s)", name, pyTypeName(a), jinjaStr(a))
			}
		}
	}
	matches := func(l []any) bool {
		for _, e := range l {
			if fnmatch.ExprMatcher(jinjaStr(e))(value) {
				return true
			}
		}
		return false
	}
	white, black := lists[0], lists[1]
	switch {
	case len(black) > 0 && len(white) == 0:
		return !matches(black), nil
	case len(white) > 0 && len(black) == 0:
		return matches(white), nil
	case len(black) > 0 && len(white) > 0:
		return !matches(black) && matches(white), nil
	}
	return true, nil
}

// regexEscape is Python 3's re.escape (3.7 and later): the characters
// special in a pattern, and whitespace, escaped; others (: / letters,
// non-ASCII) as they are.
func regexEscape(in any, _ []any) (any, error) {
	s, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("regex_escape needs a string, not %s", pyTypeName(in))
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String(), nil
}

// compilePy compiles a Python regular expression with re.I and re.M as
// Salt's regex filters pass them.
func compilePy(pattern string, ignorecase, multiline bool) (*regexp.Regexp, error) {
	flags := ""
	if ignorecase {
		flags += "i"
	}
	if multiline {
		flags += "m"
	}
	p := py.GoRegex(pattern)
	if flags != "" {
		p = "(?" + flags + ")" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %s: %v", pyRepr(pattern), strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// regexFind is regex_match (Python's re.match, anchored at the start)
// or regex_search: the match's groups (a tuple), or None.
func regexFind(anchored bool) pyFunc {
	return func(in any, args []any) (any, error) {
		txt, ok := in.(string)
		if !ok {
			return nil, fmt.Errorf("expected string or bytes-like object, got '%s'", pyTypeName(in))
		}
		pattern := jinjaStr(args[0])
		re, err := compilePy(pattern, truthy(args[1]), truthy(args[2]))
		if err != nil {
			return nil, err
		}
		loc := re.FindStringSubmatchIndex(txt)
		if loc == nil || anchored && loc[0] != 0 {
			if !anchored || loc == nil {
				return nil, nil
			}
			// re.match tries only at the start: a match found later
			// may hide one at the start that a leftmost search skips.
			re2, err := compilePy(`\A(?:`+pattern+`)`, truthy(args[1]), truthy(args[2]))
			if err != nil {
				return nil, err
			}
			loc = re2.FindStringSubmatchIndex(txt)
			if loc == nil {
				return nil, nil
			}
		}
		// Python's Match.groups(): a tuple, None for a group that took
		// no part.
		out := make(exec.Tuple, 0, len(loc)/2-1)
		for i := 2; i < len(loc); i += 2 {
			if loc[i] < 0 {
				out = append(out, exec.AsValue(nil))
				continue
			}
			out = append(out, exec.AsValue(txt[loc[i]:loc[i+1]]))
		}
		return out, nil
	}
}

// regexReplace is Salt's regex_replace(txt, rgx, val, ignorecase=False,
// multiline=False): Python's re.sub, with its \1 and \g<name>.
func regexReplace(in any, args []any) (any, error) {
	txt, ok := in.(string)
	if !ok {
		return nil, fmt.Errorf("expected string or bytes-like object, got '%s'", pyTypeName(in))
	}
	re, err := compilePy(jinjaStr(args[0]), truthy(args[2]), truthy(args[3]))
	if err != nil {
		return nil, err
	}
	out, _, err := py.Subn(re, jinjaStr(args[1]), txt, 0)
	if err != nil {
		return nil, err
	}
	return out, nil
}
