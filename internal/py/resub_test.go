package py

import (
	"regexp"
	"testing"
)

// TestSubnAsPython holds what Python 3.11's re.subn returned (or raised)
// for each pattern, replacement, text and count.
func TestSubnAsPython(t *testing.T) {
	for _, c := range []struct {
		pattern, repl, text string
		count               int
		want                string
		n                   int
		err                 string
	}{
		{"(\\w+) = (\\d+)", "\\2 = \\1", "port = 80\nhost = 1\n", 0, "80 = port\n1 = host\n", 2, ""},
		{"(?P<k>\\w+)=(?P<v>\\w+)", "\\g<v>=\\g<k>", "a=b c=d", 0, "b=a d=c", 2, ""},
		{"(?P<k>\\w+)=(?P<v>\\w+)", "\\g<2>:\\g<0>", "a=b", 0, "b:a=b", 1, ""},
		{"x", "\\n\\t\\\\", "axb", 0, "a\n\t\\b", 1, ""},
		{"x", "\\.\\-\\$", "x", 0, "\\.\\-\\$", 1, ""},
		{"x", "\\0\\01\\101", "x", 0, "\u0000\u0001A", 1, ""},
		{"(a)", "\\10", "a", 0, "", 0, "invalid group reference 10 at position 1"},
		{"o", "0", "foo boo", 2, "f00 boo", 2, ""},
		{"o", "0", "foo boo", 3, "f00 b0o", 3, ""},
		{"(a)|b", "[\\1]", "ab", 0, "[a][]", 2, ""},
		{"x", "$1 $$", "x", 0, "$1 $$", 1, ""},
		{"x", "\\q", "x", 0, "", 0, "bad escape \\q at position 0"},
		{"x", "ab\\1", "x", 0, "", 0, "invalid group reference 1 at position 3"},
		{"x", "\\g<1>", "x", 0, "", 0, "invalid group reference 1 at position 3"},
		{"x", "\\gx", "x", 0, "", 0, "missing < at position 2"},
		{"x", "\\g<a", "x", 0, "", 0, "missing >, unterminated name at position 3"},
		{"x", "\\g<", "x", 0, "", 0, "missing group name at position 3"},
		{"x", "\\g<>", "x", 0, "", 0, "missing group name at position 3"},
		{"x", "\\g<nope>", "x", 0, "", 0, "unknown group name 'nope'"},
		{"x", "\\g<-1>", "x", 0, "", 0, "bad character in group name '-1' at position 3"},
		{"x", "a\\", "x", 0, "", 0, "bad escape (end of pattern) at position 1"},
		{"(x)", "\\400", "x", 0, "", 0, "octal escape value \\400 outside of range 0-0o377 at position 0"},
		{"nomatch", "\\1", "abc", 0, "", 0, "invalid group reference 1 at position 1"},
	} {
		got, n, err := Subn(regexp.MustCompile(c.pattern), c.repl, c.text, c.count)
		var msg string
		if err != nil {
			msg = err.Error()
		}
		if got != c.want || n != c.n || msg != c.err {
			t.Errorf("re.subn(%q, %q, %q, %d): got %q, %d, %q; want %q, %d, %q", c.pattern, c.repl, c.text, c.count,
				got, n, msg, c.want, c.n, c.err)
		}
	}
}

func TestGoRegex(t *testing.T) {
	for in, want := range map[string]string{
		`abc`:       `abc`,
		`abc\Z`:     `abc\z`,
		`\\Z`:       `\\Z`,
		`a\d+\Z$`:   `a\d+\z$`,
		`trailing\`: `trailing\`,
	} {
		if got := GoRegex(in); got != want {
			t.Errorf("GoRegex(%q) = %q, want %q", in, got, want)
		}
	}
}
