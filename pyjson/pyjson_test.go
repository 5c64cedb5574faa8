package pyjson

import "testing"

// The expected outputs were produced by Python 3.11:
//
//	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(d)); print(json.dumps(d, sort_keys=True, indent=4))' "$IN"
func TestFormat(t *testing.T) {
	cases := []struct {
		in, compact, pretty string
	}{
		{`{}`, `{}`, `{}`},
		{`{"b":1,"a":[1,2,{"z":null,"y":true}],"_stamp":"2026-11-21T22:48:14.123456"}`,
			`{"b": 1, "a": [1, 2, {"z": null, "y": true}], "_stamp": "2026-11-21T22:48:14.123456"}`,
			"{\n    \"_stamp\": \"2026-11-21T22:48:14.123456\",\n    \"a\": [\n        1,\n        2,\n        {\n            \"y\": true,\n            \"z\": null\n        }\n    ],\n    \"b\": 1\n}"},
		{`{"s":"é<>&\u2028\n\t\"\\\u0001😀","e":[],"o":{},"f":1.5e3}`,
			`{"s": "\u00e9<>&\u2028\n\t\"\\\u0001\ud83d\ude00", "e": [], "o": {}, "f": 1500.0}`,
			"{\n    \"e\": [],\n    \"f\": 1500.0,\n    \"o\": {},\n    \"s\": \"\\u00e9<>&\\u2028\\n\\t\\\"\\\\\\u0001\\ud83d\\ude00\"\n}"},
	}
	for _, tc := range cases {
		got, err := Format([]byte(tc.in), false)
		if err != nil || string(got) != tc.compact {
			t.Errorf("Format(%s) = %s, %v\nwant %s", tc.in, got, err, tc.compact)
		}
		got, err = Format([]byte(tc.in), true)
		if err != nil || string(got) != tc.pretty {
			t.Errorf("Format(%s, pretty) = %s, %v\nwant %s", tc.in, got, err, tc.pretty)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `[1,]`} {
		if _, err := Format([]byte(bad), false); err == nil {
			t.Errorf("Format(%q) accepted invalid JSON", bad)
		}
	}
}

func TestNumbers(t *testing.T) {
	// python3 -c 'import json; print(json.dumps(json.loads(S)))'
	cases := map[string]string{
		"1.5e3": "1500.0", "1e16": "1e+16", "1e15": "1000000000000000.0", "0.0001": "0.0001",
		"0.00001": "1e-05", "123.456": "123.456", "1E400": "Infinity", "-0.0": "-0.0", "2.5e-7": "2.5e-07",
		"12345678901234567890": "12345678901234567890", "1.0": "1.0", "3.14159265358979323846": "3.141592653589793",
		"100.0e-2": "1.0", "1.5e300": "1.5e+300", "-42": "-42", "-1.5e-10": "-1.5e-10",
	}
	for in, want := range cases {
		got, err := Format([]byte(in), false)
		if err != nil || string(got) != want {
			t.Errorf("Format(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}
