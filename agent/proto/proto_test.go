package proto

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeJobKeepsIntegers(t *testing.T) {
	j, err := DecodeJob([]byte(`{"jid":"20261124000000000001","fun":"test.arg","arg":[1,2.5,{"__kwarg__":true,"n":9007199254740993}],"tgt":"*","tgt_type":"glob","user":"root","metadata":{"k":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1), 2.5, map[string]any{"__kwarg__": true, "n": int64(9007199254740993)}}
	if !reflect.DeepEqual(j.Arg, want) || j.Metadata["k"] != int64(1) {
		t.Errorf("DecodeJob: arg %#v metadata %#v", j.Arg, j.Metadata)
	}
	for _, bad := range []string{`{}`, `{"jid":"1"}`, `[1]`, `{"jid":"1","fun":"a.b","arg":{}}`, ``} {
		if _, err := DecodeJob([]byte(bad)); err == nil {
			t.Errorf("DecodeJob(%q): no error", bad)
		}
	}
}

// FuzzDecodeJob checks that any body either decodes to a job with a jid
// and a function, whose re-encoding decodes to the same job, or is refused.
func FuzzDecodeJob(f *testing.F) {
	for _, s := range []string{`{"jid":"1","fun":"test.ping","arg":[]}`, `{"jid":"2","fun":"cmd.run","arg":["ls",{"__kwarg__":true,"cwd":"/"}],"timeout":1.5}`,
		`{"jid":"3","fun":"x.y","tgt":["a","b"],"metadata":{"a":[1,{"b":null}]}}`, `{"jid":1}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		j, err := DecodeJob(body)
		if err != nil {
			return
		}
		if j.JID == "" || j.Fun == "" {
			t.Fatalf("decoded a job without jid or fun: %+v", j)
		}
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", j, err)
		}
		again, err := DecodeJob(b)
		if err != nil || !reflect.DeepEqual(again, j) {
			t.Fatalf("round trip: %+v != %+v (%v)", again, j, err)
		}
	})
}
