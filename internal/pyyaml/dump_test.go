package pyyaml

import (
	"encoding/json"
	"strings"
	"testing"
)

// plain decodes a test's JSON input into the values Dump is given
// (whole numbers int64, others float64).
func plain(t *testing.T, src string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				x[k] = conv(y)
			}
		case []any:
			for i, y := range x {
				x[i] = conv(y)
			}
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, _ := x.Float64()
			return f
		}
		return v
	}
	return conv(v)
}

// TestDumpAsSalt holds what yaml.dump(v, Dumper=CSafeDumper,
// default_flow_style=False) wrote for each input (PyYAML 6.0 with
// libyaml 0.2.5, as Salt's yaml serializer calls it, the final newline
// cut as Salt cuts it). The emitter was also checked against 18,000
// random documents of the same kinds, with and without allow_unicode,
// all byte for byte the same.
func TestDumpAsSalt(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"scalars",
			"{\"int\": 1, \"neg\": -7, \"float\": 1.5, \"big\": 1e+20, \"whole\": 3.0, \"t\": true, \"f\": false, \"none\": null}",
			"big: 1.0e+20\nf: false\nfloat: 1.5\nint: 1\nneg: -7\nnone: null\nt: true\nwhole: 3.0"},
		{"strings that read as other types are quoted",
			"{\"a\": \"yes\", \"b\": \"No\", \"c\": \"on\", \"d\": \"1.0\", \"e\": \"012\", \"f\": \"0x1F\", \"g\": \"1_000\", \"h\": \"2001-12-14\", \"i\": \"12:30\", \"j\": \".inf\", \"k\": \"~\", \"l\": \"null\", \"m\": \"\", \"n\": \"=\", \"o\": \"<<\", \"p\": \"True\", \"q\": \"1e5\", \"r\": \"+1\"}",
			"a: 'yes'\nb: 'No'\nc: 'on'\nd: '1.0'\ne: '012'\nf: '0x1F'\ng: '1_000'\nh: '2001-12-14'\ni: '12:30'\nj: '.inf'\nk: '~'\nl: 'null'\nm: ''\nn: '='\no: '<<'\np: 'True'\nq: 1e5\nr: '+1'"},
		{"indicators",
			"{\"a\": \"- item\", \"b\": \"-\", \"c\": \"key: value\", \"d\": \"x:y\", \"e\": \"# not\", \"f\": \"a #b\", \"g\": \"a#b\", \"h\": \"@at\", \"i\": \"`tick\", \"j\": \"!bang\", \"k\": \"&amp\", \"l\": \"*star\", \"m\": \"[br]\", \"n\": \"{cb}\", \"o\": \"?q\", \"p\": \":colon\", \"q\": \"a,b\", \"r\": \"---\", \"s\": \"...\", \"t\": \"it's\", \"u\": \"quote\\\"d\", \"v\": \"back\\\\slash\"}",
			"a: '- item'\nb: '-'\nc: 'key: value'\nd: x:y\ne: '# not'\nf: 'a #b'\ng: a#b\nh: '@at'\ni: '`tick'\nj: '!bang'\nk: '&amp'\nl: '*star'\nm: '[br]'\nn: '{cb}'\no: ?q\np: :colon\nq: a,b\nr: '---'\ns: '...'\nt: it's\nu: quote\"d\nv: back\\slash"},
		{"spaces",
			"{\"lead\": \"  lead\", \"trail\": \"trail  \", \"inner\": \"a  b\", \"only\": \" \"}",
			"inner: a  b\nlead: '  lead'\nonly: ' '\ntrail: 'trail  '"},
		{"non-ASCII and control characters are escaped",
			"{\"u\": \"é\", \"cjk\": \"日本\", \"tab\": \"tab\\there\", \"bell\": \"\\u0007\", \"ls\": \"a b\", \"nbsp\": \"a b\", \"emoji\": \"😀\"}",
			"bell: \"\\a\"\ncjk: \"\\u65E5\\u672C\"\nemoji: \"\\U0001F600\"\nls: \"a\\Lb\"\nnbsp: \"a\\_b\"\ntab: \"tab\\there\"\nu: \"\\xE9\""},
		{"long plain text folds at 80 columns",
			"{\"text\": \"lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\", \"nested\": {\"deeper\": {\"text\": \"lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\"}}, \"list\": [\"lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\"]}",
			"list:\n- lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\n  lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\n  lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\nnested:\n  deeper:\n    text: lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n      sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum\n      dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\ntext: lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit\n  amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,"},
		{"long single-quoted text folds too",
			"{\"text\": \"lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, \", \"key\": \"yes lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\"}",
			"key: yes lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\ntext: 'lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit\n  amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, '"},
		{"long double-quoted text folds with escapes",
			"{\"text\": \"é lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\", \"spaces\": \"é word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  word  \"}",
			"spaces: \"\\xE9 word  word  word  word  word  word  word  word  word  word  word  word\n  \\ word  word  word  word  word  word  word  word  \"\ntext: \"\\xE9 lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor\n  sit amet, lorem ipsum dolor sit amet, lorem ipsum dolor sit amet,\""},
		{"multi-line strings are single-quoted, breaks doubled",
			"{\"text\": \"multi\\nline\", \"three\": \"a\\n\\nb\\n\", \"indented\": \"line one\\n  indented\\nend\"}",
			"indented: \"line one\\n  indented\\nend\"\ntext: 'multi\n\n  line'\nthree: 'a\n\n\n  b\n\n  '"},
		{"multi-line with a space before a break is double-quoted",
			"{\"text\": \"trailing \\nnext\"}",
			"text: \"trailing \\nnext\""},
		{"collections",
			"{\"empty\": {}, \"emptyl\": [], \"list\": [1, [2, [3]], {\"a\": 1, \"b\": [1, 2]}, []], \"map\": {\"z\": 1, \"a\": {\"b\": {}}}}",
			"empty: {}\nemptyl: []\nlist:\n- 1\n- - 2\n  - - 3\n- a: 1\n  b:\n  - 1\n  - 2\n- []\nmap:\n  a:\n    b: {}\n  z: 1"},
		{"a list at the root",
			"[1, \"two\", {\"three\": 3}, [4]]",
			"- 1\n- two\n- three: 3\n- - 4"},
		{"a plain scalar at the root",
			"\"hello\"",
			"hello"},
		{"a multi-line scalar at the root",
			"\"a\\nb\"",
			"'a\n\n  b'"},
		{"keys are sorted and quoted as values are",
			"{\"b\": 1, \"a\": 2, \"yes\": 3, \"1\": 4, \"\": 5, \"é\": 6}",
			"'': 5\n'1': 4\na: 2\nb: 1\n'yes': 3\n\"\\xE9\": 6"},
		{"a key longer than 128 bytes or spanning lines is a complex key",
			"{\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\": 1, \"two\\nlines\": [1, 2], \"short\": {\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": {\"a\": 1}}}",
			"? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\nshort:\n  ? xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n  : a: 1\n? 'two\n\n  lines'\n: - 1\n  - 2"},
	} {
		got, err := Dump(plain(t, c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: %v\ngot  %q\nwant %q", c.name, err, got, c.want)
		}
	}
}

// TestDumpUnicodeAsSalt holds what the same dump wrote with
// allow_unicode=True (Salt's serializer when the state gives an
// encoding).
func TestDumpUnicodeAsSalt(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"allow_unicode: characters past ASCII as they are",
			"{\"u\": \"h\\u00e9llo w\\u00f6rld\", \"cjk\": \"\\u65e5\\u672c\\u8a9e\", \"emoji\": \"\\ud83d\\ude00\", \"nbsp\": \"a\\u00a0b\", \"ls\": \"a\\u2028b\", \"bom\": \"\\ufeffx\", \"nel\": \"a\\u0085b\", \"ctrl\": \"a\\u0001b\"}",
			"bom: \"\\uFEFFx\"\ncjk: \u65e5\u672c\u8a9e\nctrl: \"a\\x01b\"\nemoji: \"\\U0001F600\"\nls: 'a\u2028  b'\nnbsp: a\u00a0b\nnel: \"a\\Nb\"\nu: h\u00e9llo w\u00f6rld"},
		{"allow_unicode: folding counts characters",
			"{\"text\": \"\\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \\u00e9 \"}",
			"text: '\u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9\n  \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 \u00e9 '"},
	} {
		got, err := DumpUnicode(plain(t, c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: %v\ngot  %q\nwant %q", c.name, err, got, c.want)
		}
	}
}
