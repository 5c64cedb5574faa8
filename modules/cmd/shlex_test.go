package cmd

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitIsPythonsShlex(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  error
	}{
		{"", nil, nil},
		{"   \t\n", nil, nil},
		{"ls -l /tmp", []string{"ls", "-l", "/tmp"}, nil},
		{"  a   b  ", []string{"a", "b"}, nil},
		{`echo 'a b'  "c d"`, []string{"echo", "a b", "c d"}, nil},
		{`a'b c'd`, []string{"ab cd"}, nil},
		{`'' ""`, []string{"", ""}, nil},
		{`'it''s'`, []string{"its"}, nil},
		{`"it's"`, []string{"it's"}, nil},
		{`'a\b'`, []string{`a\b`}, nil},
		{`"a\b" "a\\b" "a\"b" "\$x"`, []string{`a\b`, `a\b`, `a"b`, `\$x`}, nil},
		{`a\ b \"c\" \\`, []string{"a b", `"c"`, `\`}, nil},
		{"a\\\nb", []string{"a\nb"}, nil},
		{`sed -e s/=/:/g`, []string{"sed", "-e", "s/=/:/g"}, nil},
		{`echo $HOME; ls | wc`, []string{"echo", "$HOME;", "ls", "|", "wc"}, nil},
		{"héllo 'wörld'", []string{"héllo", "wörld"}, nil},
		{`echo 'open`, nil, errNoClosingQuote},
		{`echo "open\"`, nil, errNoClosingQuote},
		{`echo \`, nil, errNoEscaped},
	}
	for _, tc := range cases {
		got, err := Split(tc.in)
		if !errors.Is(err, tc.err) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestPythonReprs(t *testing.T) {
	for in, want := range map[string]string{
		"sleep":     "'sleep'",
		"it's":      `"it's"`,
		`a'b"c`:     `'a\'b"c'`,
		"tab\there": `'tab\there'`,
		`back\`:     `'back\\'`,
		"\x01":      `'\x01'`,
	} {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
		}
	}
	if got := pyList([]string{"sleep", "5"}); got != "['sleep', '5']" {
		t.Errorf("pyList = %s", got)
	}
	for in, want := range map[float64]string{5: "5.0", 0.5: "0.5", 1e16: "1e+16", 1e-5: "1e-05", 123456.25: "123456.25", 0: "0.0"} {
		if got := pyFloat(in); got != want {
			t.Errorf("pyFloat(%v) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[any]string{true: "True", false: "False", nil: "None", int64(3): "3", "x": "x"} {
		if got := pyStr(in); got != want {
			t.Errorf("pyStr(%v) = %s, want %s", in, got, want)
		}
	}
}
