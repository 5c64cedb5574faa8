package saltproto

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

// payloadCases are values written by both sides: expr is the Python
// value, goValue the Go one; Salt's dumps of expr and Dumps of goValue
// must be the same bytes.
var payloadCases = []struct {
	name    string
	expr    string
	goValue any
}{
	{"none", "None", nil},
	{"true", "True", true},
	{"false", "False", false},
	{"zero", "0", 0},
	{"fixint max", "127", 127},
	{"uint8", "128", 128},
	{"uint8 max", "255", int64(255)},
	{"uint16", "256", 256},
	{"uint16 max", "65535", uint16(65535)},
	{"uint32", "65536", 65536},
	{"uint32 max", "2**32-1", uint32(math.MaxUint32)},
	{"uint64", "2**32", int64(1 << 32)},
	{"int64 max", "2**63-1", int64(math.MaxInt64)},
	{"uint64 max", "2**64-1", uint64(math.MaxUint64)},
	{"negative fixint", "-1", -1},
	{"negative fixint min", "-32", int8(-32)},
	{"int8", "-33", -33},
	{"int8 min", "-128", -128},
	{"int16", "-129", int16(-129)},
	{"int16 min", "-32768", -32768},
	{"int32", "-32769", int32(-32769)},
	{"int32 min", "-2**31", -2147483648},
	{"int64", "-2**31-1", int64(-2147483649)},
	{"int64 min", "-2**63", int64(math.MinInt64)},
	{"very long int is a string", "2**70", new(big.Int).Lsh(big.NewInt(1), 70)},
	{"float", "1.5", 1.5},
	{"float negative", "-2.25", float32(-2.25)},
	{"float big", "1e300", 1e300},
	{"float inf", "float('inf')", math.Inf(1)},
	{"empty str", "''", ""},
	{"fixstr", "'a'", "a"},
	{"fixstr max", "'x'*31", strings.Repeat("x", 31)},
	{"str16 not str8", "'x'*32", strings.Repeat("x", 32)},
	{"str16 at 255", "'y'*255", strings.Repeat("y", 255)},
	{"str16 max", "'z'*65535", strings.Repeat("z", 65535)},
	{"str32", "'w'*65536", strings.Repeat("w", 65536)},
	{"unicode", "'héllo ☃'", "héllo ☃"},
	{"bytes utf8 become str", "b'abc'", []byte("abc")},
	{"bytes not utf8 stay bytes", "b'\\xff\\xfe\\x00'", []byte{0xff, 0xfe, 0}},
	{"bytes 40", "b'\\x80'*40", bytes.Repeat([]byte{0x80}, 40)},
	{"empty list", "[]", []any{}},
	{"list", "[1, 'a', None, 2.5]", []any{1, "a", nil, 2.5}},
	{"tuple is a list", "(1, 2)", []int64{1, 2}},
	{"array16", "list(range(16))", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
	{"set is a list", "{3}", []any{3}},
	{"empty dict", "{}", map[string]any{}},
	{"dict in insertion order", "{'b': 1, 'a': [1, 2]}", Ordered{{"b", 1}, {"a", []any{1, 2}}}},
	{"map16 sorted", "{'k%02d' % i: i for i in range(16)}", func() map[string]any {
		m := map[string]any{}
		for i := range 16 {
			m["k"+string(rune('0'+i/10))+string(rune('0'+i%10))] = i
		}
		return m
	}()},
	{"map of strings", "{'a': 'x', 'b': 'y'}", map[string]string{"b": "y", "a": "x"}},
	{"datetime", "datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)", time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)},
	{"datetime whole second", "datetime.datetime(1999, 12, 31, 23, 59, 59)", time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)},
	{"constant", "_Constant('NOT_SET', None)", Constant{Name: "NOT_SET"}},
	{"constant with value", "_Constant('X', 'v')", Constant{Name: "X", Value: "v"}},
	{"a return load", "{'cmd': '_return', 'id': 'm1', 'jid': '20240102030405123456', 'return': {'a': True}, 'retcode': 0, 'fun': 'test.ping', 'fun_args': []}",
		Ordered{{"cmd", "_return"}, {"id", "m1"}, {"jid", "20240102030405123456"}, {"return", map[string]any{"a": true}}, {"retcode", 0}, {"fun", "test.ping"}, {"fun_args", []any{}}}},
}

// TestPayloadPython proves the codec against salt.payload: Salt's dumps
// and Dumps write the same bytes, Salt's loads reads Dumps' output as it
// reads its own, and Loads reads Salt's output as Salt does.
func TestPayloadPython(t *testing.T) {
	o := python(t)
	var cases []any
	goBytes := make([][]byte, len(payloadCases))
	for i, c := range payloadCases {
		b, err := Dumps(c.goValue)
		if err != nil {
			t.Fatalf("%s: Dumps: %v", c.name, err)
		}
		goBytes[i] = b
		cases = append(cases, map[string]any{"expr": c.expr, "go": hex.EncodeToString(b)})
	}
	out, ok := o.call(t, "payload", map[string]any{"cases": cases}).([]any)
	if !ok || len(out) != len(payloadCases) {
		t.Fatalf("python payload: %d answers for %d cases", len(out), len(payloadCases))
	}
	for i, c := range payloadCases {
		t.Run(c.name, func(t *testing.T) {
			r := out[i].(map[string]any)
			pyBytes := unhex(t, r["py"].(string))
			if !bytes.Equal(pyBytes, goBytes[i]) {
				t.Errorf("Dumps differs from salt.payload.dumps:\n go %s\n py %s", short(goBytes[i]), short(pyBytes))
			}
			if !reflect.DeepEqual(r["canon_go"], r["canon_py"]) {
				t.Errorf("salt.payload.loads reads Go's bytes as %v, its own as %v", r["canon_go"], r["canon_py"])
			}
			v, err := Loads(pyBytes)
			if err != nil {
				t.Fatalf("Loads(Salt's bytes): %v", err)
			}
			if got := canon(t, v); !reflect.DeepEqual(got, r["canon_py"]) {
				t.Errorf("Loads reads Salt's bytes as %v, Salt as %v", got, r["canon_py"])
			}
		})
	}
}

func short(b []byte) string {
	h := hex.EncodeToString(b)
	if len(h) > 120 {
		return h[:120] + "..."
	}
	return h
}

func TestLoads(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string // hex
		want any
	}{
		{"nil", "c0", nil},
		{"positive fixint", "7f", int64(127)},
		{"negative fixint", "e0", int64(-32)},
		{"uint64 above int64", "cfffffffffffffffff", uint64(math.MaxUint64)},
		{"float32 widens", "ca3fc00000", 1.5},
		{"str8 (new spec) reads", "d90161", "a"},
		{"bin reads as str when utf8", "c4026869", "hi"},
		{"bin stays bytes otherwise", "c402fffe", []byte{0xff, 0xfe}},
		{"raw not utf8 stays bytes", "a2c328", []byte{0xc3, 0x28}},
		{"surrogate is not utf8", "a3eda080", []byte{0xed, 0xa0, 0x80}},
		{"unknown extension gives its data", "d40541", "A"},
		{"int key as json text", "8101a161", map[string]any{"1": "a"}},
		{"none key", "81c0a161", map[string]any{"null": "a"}},
		{"bool key", "81c3a161", map[string]any{"true": "a"}},
		{"float key", "81cb3ff8000000000000a161", map[string]any{"1.5": "a"}},
		{"bytes key keeps its bytes", "81a2fffea161", map[string]any{"\xff\xfe": "a"}},
		{"datetime", "c7184e32303234303130325430333a30343a30352e313233343536", time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := hex.DecodeString(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Loads(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Loads(%s) = %#v, want %#v", c.in, got, c.want)
			}
		})
	}
}

func TestLoadsRefuses(t *testing.T) {
	deep := append(bytes.Repeat([]byte{0x91}, 2000), 0xc0)
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"never used byte", []byte{0xc1}},
		{"truncated str", []byte{0xa5, 'a'}},
		{"trailing data", []byte{0xc0, 0xc0}},
		{"array count beyond input", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}},
		{"map count beyond input", []byte{0xdf, 0x7f, 0xff, 0xff, 0xff}},
		{"nested too deeply", deep},
		{"key that cannot be a key", []byte{0x81, 0x90, 0xc0}},
		{"bad datetime", []byte{0xd4, 78, 'x'}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if v, err := Loads(c.in); !errors.Is(err, ErrPayload) {
				t.Errorf("Loads(% x) = %v, %v; want ErrPayload", c.in, v, err)
			}
		})
	}
}

func TestDumps(t *testing.T) {
	for _, c := range []struct {
		name string
		in   any
		want string // hex
		bin  bool
	}{
		{"bytes as raw on the wire", []byte{1, 2}, "a20102", false},
		{"bytes as bin in files", []byte{1, 2}, "c4020102", true},
		{"str8 in files", strings.Repeat("a", 32), "d920" + strings.Repeat("61", 32), true},
		{"ordered keeps order", Ordered{{"z", 1}, {"a", 2}}, "82a17a01a16102", false},
		{"map sorts", map[string]any{"z": 1, "a": 2}, "82a16102a17a01", false},
		{"nil slice is None", []string(nil), "c0", false},
		{"pointer", func() *int { i := 5; return &i }(), "05", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []byte
			var err error
			if c.bin {
				got, err = DumpsBin(c.in)
			} else {
				got, err = Dumps(c.in)
			}
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != c.want {
				t.Errorf("got %s, want %s", h, c.want)
			}
		})
	}
	if _, err := Dumps(struct{ A int }{1}); err == nil {
		t.Error("Dumps of a struct: no error")
	}
}

// FuzzLoads: whatever Loads accepts, it does not panic on, and Dumps
// writes it back to bytes that Loads reads as the same value.
func FuzzLoads(f *testing.F) {
	for _, s := range []string{"c0", "81a161a162", "92c3c2", "c7184e32303234303130325430333a30343a30352e313233343536", "d4054100", "8101a161"} {
		b, err := hex.DecodeString(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Loads(b)
		if err != nil {
			return
		}
		again, err := Dumps(v)
		if err != nil {
			t.Fatalf("Dumps of a decoded %#v: %v", v, err)
		}
		w, err := Loads(again)
		if err != nil {
			t.Fatalf("Loads of Dumps: %v", err)
		}
		if !reflect.DeepEqual(canonOf(v), canonOf(w)) {
			t.Fatalf("%#v came back as %#v", v, w)
		}
	})
}
