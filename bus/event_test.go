package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestValidateTag(t *testing.T) {
	tests := []struct {
		name, tag string
		wantMsg   string // "" means valid; else a substring of the error
	}{
		{"salt tag", "salt/cloud/web1/created", ""},
		{"spaces dots and glob characters", "my tag/v1.2/*?[x]", ""},
		{"UTF-8", "brine/ddns/bücher.example/更新", ""},
		{"512 bytes", strings.Repeat("a", 512), ""},
		{"512 bytes of two-byte runes", strings.Repeat("é", 256), ""},
		{"no-break space after the C1 range", "a\u00a0b", ""},
		{"empty", "", "empty tag"},
		{"513 bytes", strings.Repeat("a", 513), "513 bytes, the limit is 512"},
		{"NUL", "a\x00b", `"a\x00b" has control character U+0000 at byte 1`},
		{"tab", "a\tb", "U+0009"},
		{"newline", "salt/x\n", "U+000A at byte 6"},
		{"unit separator", "\x1f", "U+001F"},
		{"DEL", "a\x7f", "U+007F"},
		{"C1 first", "a\u0080", "U+0080"},
		{"C1 last", "a\u009f", "U+009F"},
		{"invalid byte", "salt/\xff", `"salt/\xff" is not valid UTF-8`},
		{"truncated rune", "caf\xc3", "not valid UTF-8"},
		{"encoded surrogate", "\xed\xa0\x80", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateTag(tt.tag)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("ValidateTag(%q) = %v, want nil", tt.tag, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidTag) {
				t.Fatalf("ValidateTag(%q) = %v, want an ErrInvalidTag", tt.tag, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("ValidateTag(%q) = %q, want it to mention %q", tt.tag, err, tt.wantMsg)
			}
		})
	}
}

var stampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$`)

func TestNewEvent(t *testing.T) {
	data := map[string]any{"name": "web1", "n": int64(9007199254740993)}
	before := time.Now().Truncate(time.Microsecond)
	ev, err := NewEvent("salt/cloud/web1/created", data, Origin{Source: "brine://master1/cloud"})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}

	id, err := uuid.Parse(ev.ID)
	if err != nil || id.Version() != 7 || id.Variant() != uuid.RFC4122 || id.String() != ev.ID {
		t.Errorf("id %q: want a canonical RFC 4122 UUIDv7 (parse error %v)", ev.ID, err)
	}
	if ev.Tag != "salt/cloud/web1/created" || ev.Source != "brine://master1/cloud" {
		t.Errorf("tag, source = %q, %q", ev.Tag, ev.Source)
	}
	if ev.Time.Location() != time.UTC {
		t.Errorf("time %v is in %v, want UTC", ev.Time, ev.Time.Location())
	}
	if ev.Time.Nanosecond()%1000 != 0 {
		t.Errorf("time %v has sub-microsecond digits", ev.Time)
	}
	if ev.Time.Before(before) || ev.Time.After(after) {
		t.Errorf("time %v is outside [%v, %v]", ev.Time, before, after)
	}
	if ev.Cause != "" || ev.Depth != 0 {
		t.Errorf("root event has cause %q, depth %d", ev.Cause, ev.Depth)
	}
	if _, ok := data["_stamp"]; ok {
		t.Error("NewEvent added _stamp to the caller's map")
	}

	m, err := ev.DataMap()
	if err != nil {
		t.Fatal(err)
	}
	stamp, _ := m["_stamp"].(string)
	if !stampRE.MatchString(stamp) {
		t.Errorf("_stamp %q is not naive ISO 8601 with microseconds", stamp)
	}
	if st, err := time.Parse(StampLayout, stamp); err != nil || !st.Equal(ev.Time) {
		t.Errorf("_stamp %q = %v (%v), want the event time %v", stamp, st, err, ev.Time)
	}
	if m["name"] != "web1" || m["n"] != int64(9007199254740993) || len(m) != 3 {
		t.Errorf("data = %v, want name, n (exact) and _stamp", m)
	}
}

func TestNewEventCausalChain(t *testing.T) {
	root, err := NewEvent("salt/minion/web1/start", nil, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	if string(root.Data) != `{"_stamp":"`+root.Time.Format(StampLayout)+`"}` {
		t.Errorf("nil data gave %s, want only _stamp", root.Data)
	}
	cause := root
	for depth := 1; depth <= 3; depth++ {
		ev, err := NewEvent("brine/reactor/fired", nil, Origin{Cause: cause})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Cause != cause.ID || ev.Depth != depth {
			t.Errorf("event %d: cause, depth = %q, %d; want %q, %d", depth, ev.Cause, ev.Depth, cause.ID, depth)
		}
		if ev.ID <= cause.ID {
			t.Errorf("id %s does not sort after its cause's %s", ev.ID, cause.ID)
		}
		cause = ev
	}
}

func TestNewEventErrors(t *testing.T) {
	tests := []struct {
		name string
		tag  string
		data map[string]any
		want error
	}{
		{"empty tag", "", nil, ErrInvalidTag},
		{"control character", "salt/\x01", nil, ErrInvalidTag},
		{"unencodable data", "salt/x", map[string]any{"c": make(chan int)}, ErrInvalidData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := NewEvent(tt.tag, tt.data, Origin{})
			if !errors.Is(err, tt.want) || ev != nil {
				t.Errorf("NewEvent(%q) = %v, %v; want nil, %v", tt.tag, ev, err, tt.want)
			}
		})
	}
}

const testID = "019aa8a1-4f5b-7cc3-98c4-dc0c0c07398f"

// envelope returns a valid encoded event with fields replaced by repl, whose
// values are raw JSON ("" drops the field).
func envelope(repl map[string]string) []byte {
	fields := []struct{ k, v string }{
		{"id", `"` + testID + `"`},
		{"tag", `"salt/cloud/web1/created"`},
		{"time", `"2026-11-21T22:48:14.123456Z"`},
		{"source", `"brine://master1/cloud"`},
		{"data", `{"name":"web1","_stamp":"2026-11-21T22:48:14.123456"}`},
		{"depth", `0`},
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for _, f := range fields {
		v, ok := repl[f.k]
		if !ok {
			v = f.v
		}
		if v == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + f.k + `":` + v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		repl    map[string]string
		max     int
		want    error  // nil with wantMsg: an error wrapping no sentinel
		wantMsg string // substring of the error; "" when valid
	}{
		{"valid", nil, 0, nil, ""},
		{"data with spaces around", map[string]string{"data": ` { "a" : [1, 2] } `}, 0, nil, ""},
		{"depth and cause", map[string]string{"cause": `"` + testID + `"`, "depth": "3"}, 0, nil, ""},
		{"data is an array", map[string]string{"data": `[{"a":1}]`}, 0, ErrInvalidData, `event "salt/cloud/web1/created": invalid data: data must be a JSON object`},
		{"data is a string", map[string]string{"data": `"{}"`}, 0, ErrInvalidData, "must be a JSON object"},
		{"data is a number", map[string]string{"data": `1`}, 0, ErrInvalidData, "must be a JSON object"},
		{"data is null", map[string]string{"data": `null`}, 0, ErrInvalidData, "must be a JSON object"},
		{"data is missing", map[string]string{"data": ""}, 0, ErrInvalidData, "must be a JSON object"},
		{"empty tag", map[string]string{"tag": `""`}, 0, ErrInvalidTag, "empty tag"},
		{"tag with a control character", map[string]string{"tag": `"salt/\u0007"`}, 0, ErrInvalidTag, `"salt/\a" has control character`},
		{"tag too long", map[string]string{"tag": `"` + strings.Repeat("x", 513) + `"`}, 0, ErrInvalidTag, "513 bytes"},
		{"bad id", map[string]string{"id": `"42"`}, 0, nil, `event "salt/cloud/web1/created": bad id`},
		{"id in upper case", map[string]string{"id": `"` + strings.ToUpper(testID) + `"`}, 0, nil, "not the canonical " + testID},
		{"id in braces", map[string]string{"id": `"{` + testID + `}"`}, 0, nil, "not the canonical"},
		{"id as a URN", map[string]string{"id": `"urn:uuid:` + testID + `"`}, 0, nil, "not the canonical"},
		{"id without hyphens", map[string]string{"id": `"` + strings.ReplaceAll(testID, "-", "") + `"`}, 0, nil, "not the canonical"},
		{"negative depth", map[string]string{"depth": "-1"}, 0, nil, "negative depth -1"},
		{"bad time", map[string]string{"time": `"2026-11-21 22:48:14"`}, 0, nil, "event time"},
		{"envelope is not JSON", map[string]string{"data": `{"a":`}, 0, nil, "event envelope"},
		{"over a configured limit", nil, 100, ErrTooLarge, "the limit is 100"},
		{"over the default limit", map[string]string{"data": `{"a":"` + strings.Repeat("x", DefaultMaxEventSize) + `"}`}, 0, ErrTooLarge, "the limit is 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := envelope(tt.repl)
			ev, err := Decode(b, tt.max)
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Decode(%s) = %v", b, err)
				}
				if ev.Tag != "salt/cloud/web1/created" || ev.ID != testID {
					t.Errorf("Decode gave tag %q, id %q", ev.Tag, ev.ID)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode(%.200s) = %+v, want an error", b, ev)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Decode error %v does not wrap %v", err, tt.want)
			}
			for _, sentinel := range []error{ErrInvalidTag, ErrInvalidData, ErrTooLarge} {
				if sentinel != tt.want && errors.Is(err, sentinel) {
					t.Errorf("Decode error %v wraps %v too", err, sentinel)
				}
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Decode error %q, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ev := &Event{ID: testID, Tag: "salt/key", Data: json.RawMessage(`{"act":"accept"}`),
		Time: time.Date(2026, 11, 21, 22, 48, 14, 123456000, time.UTC)}
	b, err := ev.Validate(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"` + testID + `","tag":"salt/key","time":"2026-11-21T22:48:14.123456Z","data":{"act":"accept"}}`; string(b) != want {
		t.Errorf("Validate encoded\n%s\nwant\n%s", b, want)
	}
	if _, err := ev.Validate(len(b)); err != nil {
		t.Errorf("Validate(%d), exactly the encoded size: %v", len(b), err)
	}
	_, err = ev.Validate(len(b) - 1)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), `"salt/key"`) {
		t.Errorf("Validate(%d) = %v, want ErrTooLarge naming the tag", len(b)-1, err)
	}

	tests := []struct {
		name string
		data string
	}{
		{"truncated object", `{"a":`},
		{"two objects", `{} {}`},
		{"trailing garbage", `{}]`},
		{"empty", ``},
		{"only spaces", `   `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := *ev
			bad.Data = json.RawMessage(tt.data)
			if _, err := bad.Validate(0); !errors.Is(err, ErrInvalidData) || !strings.Contains(err.Error(), `"salt/key"`) {
				t.Errorf("Validate with data %q = %v, want ErrInvalidData naming the tag", tt.data, err)
			}
		})
	}
}

func TestDataMap(t *testing.T) {
	ev := &Event{Data: json.RawMessage(`{"big":9007199254740993,"neg":-3,"f":1.5,"exp":1e3,` +
		`"huge":18446744073709551616,"s":"x","nested":{"list":[1,2.5,null,true]}}`)}
	got, err := ev.DataMap()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"big": int64(9007199254740993), "neg": int64(-3), "f": 1.5, "exp": 1000.0,
		"huge": 18446744073709551616.0, "s": "x",
		"nested": map[string]any{"list": []any{int64(1), 2.5, nil, true}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DataMap() = %#v\nwant %#v", got, want)
	}

	for _, data := range []string{`[1]`, `"x"`, ``, `{"a":`} {
		ev := &Event{Data: json.RawMessage(data)}
		if _, err := ev.DataMap(); !errors.Is(err, ErrInvalidData) {
			t.Errorf("DataMap of %q = %v, want ErrInvalidData", data, err)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{
			"every field",
			Event{ID: testID, Tag: "salt/cloud/web1/created", Time: time.Date(2026, 11, 21, 22, 48, 14, 123456000, time.UTC),
				Source: "brine://master1/cloud", Data: json.RawMessage(`{"a":1}`), Cause: testID, Depth: 1},
			`{"id":"` + testID + `","tag":"salt/cloud/web1/created","time":"2026-11-21T22:48:14.123456Z",` +
				`"source":"brine://master1/cloud","data":{"a":1},"cause":"` + testID + `","depth":1}`,
		},
		{
			"zone, zero microseconds, no data",
			Event{ID: testID, Tag: "t", Time: time.Date(2026, 11, 21, 23, 48, 14, 0, cet)},
			`{"id":"` + testID + `","tag":"t","time":"2026-11-21T22:48:14.000000Z","data":{}}`,
		},
		{
			"nanoseconds are cut, not rounded",
			Event{ID: testID, Tag: "t", Time: time.Date(2026, 11, 21, 22, 48, 14, 999999999, time.UTC), Data: json.RawMessage(`{}`)},
			`{"id":"` + testID + `","tag":"t","time":"2026-11-21T22:48:14.999999Z","data":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(&tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("Marshal = %s\nwant      %s", b, tt.want)
			}
		})
	}
}

func TestUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name, time string
		want       time.Time
	}{
		{"envelope format", "2026-11-21T22:48:14.123456Z", time.Date(2026, 11, 21, 22, 48, 14, 123456000, time.UTC)},
		{"seconds only", "2026-11-21T22:48:14Z", time.Date(2026, 11, 21, 22, 48, 14, 0, time.UTC)},
		{"offset and nanoseconds", "2026-11-21T23:48:14.123456789+01:00", time.Date(2026, 11, 21, 22, 48, 14, 123456000, time.UTC)},
		{"no time", "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"id":"` + testID + `","tag":"t","data":{"b":[true]},"cause":"c","depth":2,"source":"s"}`
			if tt.time != "" {
				in = `{"time":"` + tt.time + `",` + in[1:]
			}
			var ev Event
			if err := json.Unmarshal([]byte(in), &ev); err != nil {
				t.Fatal(err)
			}
			want := Event{ID: testID, Tag: "t", Time: tt.want, Source: "s", Data: json.RawMessage(`{"b":[true]}`), Cause: "c", Depth: 2}
			if !reflect.DeepEqual(ev, want) {
				t.Errorf("Unmarshal(%s) =\n%#v\nwant\n%#v", in, ev, want)
			}
			// The decoded event is already in envelope form: encoding it
			// and decoding again changes nothing.
			b, err := json.Marshal(&ev)
			if err != nil {
				t.Fatal(err)
			}
			var again Event
			if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, ev) {
				t.Errorf("round trip through %s gave %#v, %v", b, again, err)
			}
		})
	}

	var ev Event
	for _, in := range []string{
		`{"time":"yesterday"}`, `{"time":12}`, `{"depth":"1"}`, `[]`,
		// In UTC these fall outside the years RFC 3339 can write.
		`{"time":"0000-01-01T00:30:00+01:00"}`, `{"time":"9999-12-31T23:30:00-01:00"}`,
	} {
		if err := json.Unmarshal([]byte(in), &ev); err == nil {
			t.Errorf("Unmarshal(%s) = nil, want an error", in)
		}
	}
}

func TestIDTime(t *testing.T) {
	ev, err := NewEvent("salt/auth", nil, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := IDTime(ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The id carries milliseconds and is taken just before the event time.
	if d := ev.Time.Sub(got); d < 0 || d > time.Second || got.Location() != time.UTC {
		t.Errorf("IDTime(%s) = %v, event time %v", ev.ID, got, ev.Time)
	}

	tests := []struct {
		id      string
		want    time.Time
		wantErr string
	}{
		// RFC 9562 appendix A.6: 0x017F22E279B0 ms after the epoch.
		{"017f22e2-79b0-7cc3-98c4-dc0c0c07398f", time.Date(2022, 2, 22, 19, 22, 22, 0, time.UTC), ""},
		{"019aa8a1-4f5b-7cc3-98c4-dc0c0c07398f", time.UnixMilli(0x019aa8a14f5b).UTC(), ""},
		{"9b2c1a70-2b1e-4f6a-8d3c-5e7f9a1b2c3d", time.Time{}, "not a UUIDv7"},
		{"not-a-uuid", time.Time{}, `event id "not-a-uuid"`},
	}
	for _, tt := range tests {
		got, err := IDTime(tt.id)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("IDTime(%s) = %v, %v; want error %q", tt.id, got, err, tt.wantErr)
			}
		case err != nil || !got.Equal(tt.want):
			t.Errorf("IDTime(%s) = %v, %v; want %v", tt.id, got, err, tt.want)
		}
	}
}

func TestHasReservedPrefix(t *testing.T) {
	tests := []struct {
		tag  string
		want bool
	}{
		{"salt/job/20261121224814123456/new", true},
		{"salt/job/20261121224814123456/ret/web1", true},
		{"salt/run/20261121224814123456/ret", true},
		{"salt/auth", true},
		{"salt/key", true},
		{"brine/reactor/error", true},
		{"brine/", true},
		{"salt/cloud/web1/created", false},
		{"salt/minion/web1/start", false},
		{"salt/netapi/hook/deploy", false},
		{"salt/jobs", false},
		{"salt/job", false},
		{"brine", false},
		{"brinex/y", false},
		{"my/salt/job/1/new", false},
		{"Salt/job/1/new", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasReservedPrefix(tt.tag); got != tt.want {
			t.Errorf("HasReservedPrefix(%q) = %v, want %v", tt.tag, got, tt.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(envelope(nil))
	f.Add(envelope(map[string]string{"data": `{"n":9007199254740993,"s":"<&>\u2028","x":[{},[]]}`, "cause": `"` + testID + `"`, "depth": "7"}))
	f.Add(envelope(map[string]string{"time": `"2026-11-21T23:48:14.123456789+01:00"`}))
	f.Add(envelope(map[string]string{"time": `"0000-01-01T00:30:00+01:00"`}))
	f.Add(envelope(map[string]string{"time": ""}))
	f.Add(envelope(map[string]string{"data": `[]`}))
	f.Add([]byte(`{"tag":"a\u0000"}`))
	f.Add([]byte(`null`))
	const limit = 4096
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := Decode(b, limit)
		if err != nil {
			return
		}
		enc, err := ev.Validate(limit)
		if err != nil {
			t.Fatalf("Decode accepted %q, but Validate rejects the event: %v", b, err)
		}
		again, err := Decode(enc, limit)
		if err != nil {
			t.Fatalf("Decode accepted %q, but not its re-encoding %q: %v", b, enc, err)
		}
		a, z := *ev, *again
		a.Data, z.Data = nil, nil
		a.enc, z.enc = nil, nil // caches of different bytes
		if !reflect.DeepEqual(a, z) || !sameJSON(ev.Data, again.Data) {
			t.Fatalf("round trip changed the event:\n%#v\n%#v", ev, again)
		}
		if enc2, err := again.Validate(limit); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding is not stable: %q, then %q, %v", enc, enc2, err)
		}
	})
}

// sameJSON reports whether a and b hold the same JSON value, numbers compared
// by their text.
func sameJSON(a, b []byte) bool {
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	return da.Decode(&va) == nil && db.Decode(&vb) == nil && reflect.DeepEqual(va, vb)
}

// TestEncodingCache checks that a validated event is encoded once, and that
// a copy changed afterwards is not sent with its original's bytes.
func TestEncodingCache(t *testing.T) {
	ev, err := NewEvent("cache/a", map[string]any{"k": 1}, Origin{})
	if err != nil {
		t.Fatal(err)
	}
	b1, err := ev.Validate(0)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := ev.Validate(0)
	m, _ := ev.MarshalJSON()
	if &b1[0] != &b2[0] || &b1[0] != &m[0] {
		t.Error("a validated event was encoded again")
	}
	changes := map[string]func(e *Event){
		"tag":    func(e *Event) { e.Tag = "cache/b" },
		"data":   func(e *Event) { e.Data = json.RawMessage(`{"k":2}`) },
		"depth":  func(e *Event) { e.Depth = 3 },
		"cause":  func(e *Event) { e.Cause = ev.ID },
		"source": func(e *Event) { e.Source = "x" },
		"time":   func(e *Event) { e.Time = e.Time.Add(time.Second) },
	}
	for name, change := range changes {
		cp := *ev
		change(&cp)
		b, err := cp.Validate(0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bytes.Equal(b, b1) {
			t.Errorf("changed %s, but the copy kept the original encoding", name)
		}
	}
	bad := *ev
	bad.Tag = ""
	if _, err := bad.Validate(0); !errors.Is(err, ErrInvalidTag) {
		t.Errorf("a copy made invalid passed validation: %v", err)
	}
	if _, err := ev.Validate(len(b1) - 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("the size limit is not applied to a cached encoding: %v", err)
	}
}

// FuzzEnvelopeFastPath holds the hand-written envelope codec to
// encoding/json: what appendEnvelope writes, encoding/json reads back as the
// same envelope (byte for byte when the data has no spaces), and from any
// envelope encoding/json accepts, parseStored reads the same or nothing.
func FuzzEnvelopeFastPath(f *testing.F) {
	f.Add(testID, "salt/job/1/new", "2026-11-21T23:48:14.123456Z", "master", `{"a":[1,{"b":"c d"}],"e":null}`, "", 0)
	f.Add(testID, "a<b", "t", "", `{"x":"<"}`, testID, 3)
	f.Add(testID, "ü/x", "t", "s\"q", `{ "spaced" : true }`, "", -1)
	f.Add(testID, "x", "t", "", "{\"a\":\"\u2028\"}", "", 99)
	f.Fuzz(func(t *testing.T, id, tag, _, source, data string, cause string, depth int) {
		e := &Event{ID: id, Tag: tag, Time: time.Unix(0, 0).Add(time.Duration(depth) * time.Hour).Truncate(time.Microsecond), Source: source, Cause: cause, Depth: depth}
		w := wireEvent{ID: id, Tag: tag, Time: e.Time.UTC().Format(TimeLayout), Source: source, Data: json.RawMessage(data), Cause: cause, Depth: depth}
		fast, ok := appendEnvelope(nil, e, []byte(data), false)
		ref, refErr := json.Marshal(w)
		if ok {
			if refErr != nil {
				t.Fatalf("fast path wrote %q, encoding/json refuses: %v", fast, refErr)
			}
			var back wireEvent
			if err := json.Unmarshal(fast, &back); err != nil {
				t.Fatalf("fast path wrote invalid JSON %q: %v", fast, err)
			}
			if back.ID != id || back.Tag != tag || back.Time != w.Time || back.Source != source || back.Cause != cause || back.Depth != depth || !sameJSON(back.Data, w.Data) {
				t.Fatalf("fast path %q reads back as %+v", fast, back)
			}
			if !strings.ContainsAny(data, " \t") && !bytes.Equal(fast, ref) {
				t.Fatalf("fast path %q, encoding/json %q", fast, ref)
			}
		}
		for _, b := range [][]byte{fast, ref, []byte(data)} {
			var got, want wireEvent
			if !parseStored(b, &got) {
				continue
			}
			if json.Unmarshal(b, &want) != nil {
				continue // not an envelope a store wrote
			}
			if got.ID != want.ID || got.Tag != want.Tag || got.Time != want.Time || got.Source != want.Source ||
				got.Cause != want.Cause || got.Depth != want.Depth || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("parseStored(%q) = %+v, encoding/json %+v", b, got, want)
			}
		}
	})
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 22, 3, 4, 5, 123456789, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(1999, 7, 4, 12, 0, 0, 1000, time.FixedZone("x", 3600)),
	} {
		got, ok := appendTime(nil, tm)
		if want := tm.UTC().Format(StampLayout); !ok || string(got) != want {
			t.Errorf("appendTime(%v) = %q, %v; want %q", tm, got, ok, want)
		}
	}
	if _, ok := appendTime(nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("appendTime wrote the year 10000")
	}
}

// TestNewEventEncoding checks that the encoding NewEvent makes up front is
// encoding/json's, HTML escapes included.
func TestNewEventEncoding(t *testing.T) {
	cause, _ := NewEvent("c", nil, Origin{})
	ev, err := NewEvent("salt/job/1/new", map[string]any{"s": "<a & b>", "n": 1, "l": []any{"x", 2.5}}, Origin{Source: "master", Cause: cause})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ev.Validate(0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(wireEvent{ID: ev.ID, Tag: ev.Tag, Time: ev.Time.Format(TimeLayout), Source: ev.Source, Data: ev.Data, Cause: ev.Cause, Depth: ev.Depth})
	if !bytes.Equal(got, want) {
		t.Fatalf("NewEvent encoded\n%s\nencoding/json\n%s", got, want)
	}
}

// FuzzAppendData holds appendData to encoding/json's bytes for any data an
// event can carry: decoded JSON, integers kept as integers (bus.Numbers).
func FuzzAppendData(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,null,"x<y & z>",{"c":2.5}],"ü":"\u2028","n":9007199254740993,"f":1e21,"g":1e-7}`))
	f.Add([]byte(`{"":{},"k":[],"s":"\ud800"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) != nil || m == nil {
			return
		}
		Numbers(m)
		want, err := json.Marshal(m)
		if err != nil {
			return
		}
		got, err := appendData(nil, m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("appendData = %s, %v\nencoding/json %s", got, err, want)
		}
	})
}

// TestAppendDataFallsBack checks the values appendData leaves to
// encoding/json: same bytes, same refusals.
func TestAppendDataFallsBack(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	m := map[string]any{"p": point{1}, "l": []string{"a", "<"}, "m": map[string]string{"k": "v"}, "f": 0.1, "u": uint8(7), "ptr": &point{2}}
	want, _ := json.Marshal(m)
	if got, err := appendData(nil, m); err != nil || !bytes.Equal(got, want) {
		t.Errorf("appendData = %s, %v; encoding/json %s", got, err, want)
	}
	if _, err := appendData(nil, map[string]any{"nan": math.NaN()}); err == nil {
		t.Error("NaN encoded")
	}
	if _, err := NewEvent("x", map[string]any{"c": make(chan int)}, Origin{}); !errors.Is(err, ErrInvalidData) {
		t.Errorf("a channel in data: %v, want ErrInvalidData", err)
	}
}
