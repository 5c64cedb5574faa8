//go:build !windows

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
