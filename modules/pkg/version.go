package pkg

import (
	"strconv"
	"strings"
)

// splitEVR splits [epoch:]version[-release] (Debian's revision, RPM's
// release): the epoch ends at the first ':', the release starts after the
// last '-'.
func splitEVR(v string) (epoch int, version, release string) {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, _ = strconv.Atoi(v[:i])
		v = v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// compareDeb compares two Debian versions as dpkg --compare-versions.
func compareDeb(a, b string) int {
	ea, va, ra := splitEVR(a)
	eb, vb, rb := splitEVR(b)
	if ea != eb {
		return sign(ea - eb)
	}
	if c := debPart(va, vb); c != 0 {
		return c
	}
	return debPart(ra, rb)
}

// debOrder is dpkg's weight of a non-digit: '~' before the end, the end
// before letters, letters before everything else.
func debOrder(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	c := s[i]
	switch {
	case c >= '0' && c <= '9':
		return 0
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return int(c)
	case c == '~':
		return -1
	}
	return int(c) + 256
}

func isDigit(s string, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// debPart is dpkg's verrevcmp: alternating runs of non-digits, compared
// by debOrder, and of digits, compared as numbers.
func debPart(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for (i < len(a) && !isDigit(a, i)) || (j < len(b) && !isDigit(b, j)) {
			if oa, ob := debOrder(a, i), debOrder(b, j); oa != ob {
				return sign(oa - ob)
			}
			i++
			j++
		}
		for isDigit(a, i) && a[i] == '0' {
			i++
		}
		for isDigit(b, j) && b[j] == '0' {
			j++
		}
		first := 0
		for isDigit(a, i) && isDigit(b, j) {
			if first == 0 {
				first = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if isDigit(a, i) {
			return 1
		}
		if isDigit(b, j) {
			return -1
		}
		if first != 0 {
			return sign(first)
		}
	}
	return 0
}

// compareRPM compares two [epoch:]version-release strings as rpm does.
func compareRPM(a, b string) int {
	ea, va, ra := splitEVR(a)
	eb, vb, rb := splitEVR(b)
	if ea != eb {
		return sign(ea - eb)
	}
	if c := rpmvercmp(va, vb); c != 0 {
		return c
	}
	if ra == "" || rb == "" {
		// A version without a release matches any release of it.
		return 0
	}
	return rpmvercmp(ra, rb)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// rpmvercmp is rpm's: segments of digits or of letters, separators
// ignored, '~' sorting before anything (even the end) and '^' after the
// end but before anything else.
func rpmvercmp(a, b string) int {
	if a == b {
		return 0
	}
	for len(a) > 0 || len(b) > 0 {
		for len(a) > 0 && !isAlnum(a[0]) && a[0] != '~' && a[0] != '^' {
			a = a[1:]
		}
		for len(b) > 0 && !isAlnum(b[0]) && b[0] != '~' && b[0] != '^' {
			b = b[1:]
		}
		if strings.HasPrefix(a, "~") || strings.HasPrefix(b, "~") {
			if !strings.HasPrefix(a, "~") {
				return 1
			}
			if !strings.HasPrefix(b, "~") {
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if strings.HasPrefix(a, "^") || strings.HasPrefix(b, "^") {
			switch {
			case a == "":
				return -1
			case b == "":
				return 1
			case !strings.HasPrefix(a, "^"):
				return 1
			case !strings.HasPrefix(b, "^"):
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if a == "" || b == "" {
			break
		}
		numeric := isDigit(a, 0)
		seg := func(s string) (string, string) {
			n := 0
			for n < len(s) && (numeric && isDigit(s, n) || !numeric && isAlnum(s[n]) && !isDigit(s, n)) {
				n++
			}
			return s[:n], s[n:]
		}
		var sa, sb string
		sa, a = seg(a)
		sb, b = seg(b)
		if sb == "" {
			// Segments of different kinds: a number is newer.
			if numeric {
				return 1
			}
			return -1
		}
		if numeric {
			sa, sb = strings.TrimLeft(sa, "0"), strings.TrimLeft(sb, "0")
			if len(sa) != len(sb) {
				return sign(len(sa) - len(sb))
			}
		}
		if c := strings.Compare(sa, sb); c != 0 {
			return c
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}
