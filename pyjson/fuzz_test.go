package pyjson

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzFormat checks that Format accepts exactly what encoding/json accepts
// and that its output, compact or pretty, is JSON with the same value.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5,"é",null,true]}`, `{"_stamp":"2026","n":{"x":[]}}`, `"\ud83d\ude00"`, `1e400`, `[1,]`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		valid := json.Valid(in)
		var want any
		comparable := json.Unmarshal(in, &want) == nil // false for numbers beyond float64
		for _, pretty := range []bool{false, true} {
			out, err := Format(in, pretty)
			if valid != (err == nil) {
				t.Fatalf("Format(%q, %v): err %v, but encoding/json valid=%v", in, pretty, err, valid)
			}
			if !valid || !comparable {
				continue
			}
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("Format(%q) = %q, not JSON: %v", in, out, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Format(%q) = %q changes the value", in, out)
			}
		}
	})
}
