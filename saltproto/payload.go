package saltproto

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brinehq/brine/internal/py"
)

// The payload codec is hand-written rather than built on a msgpack
// library because Salt's wire format is msgpack's old specification:
// salt.payload.dumps packs with use_bin_type=False, so str and bytes both
// go out as "raw" (fixstr, str16, str32: never str8, never bin), and
// salt.payload.loads unpacks raw=True and then turns every raw that is
// valid UTF-8 into str (salt.transport.frame.decode_embedded_strs). A
// general library (vmihailenco/msgpack v5) writes str8 and bin and has no
// switch for the old layout; its output would be readable but not the
// bytes Salt writes, and the decoded str/bytes split would be the
// library's, not Salt's. A few hundred lines give byte-for-byte parity,
// which the differential tests check against Python.

// Ordered is a mapping encoded in the order of its items, as a Python
// dict is (insertion order). Dumps of a Go map sorts its keys instead.
type Ordered []KV

// KV is one item of an Ordered mapping.
type KV struct {
	Key   string
	Value any
}

// Get returns the value of key in o.
func (o Ordered) Get(key string) (any, bool) {
	for _, kv := range o {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Map returns o as a map, the shape Loads decodes a mapping to.
func (o Ordered) Map() map[string]any {
	m := make(map[string]any, len(o))
	for _, kv := range o {
		m[kv.Key] = kv.Value
	}
	return m
}

// Constant is salt.defaults._Constant (NOT_SET and the like), which Salt
// packs as the extension type 79 holding the msgpack of (name, value).
type Constant struct {
	Name  string
	Value any
}

// The extension types salt.payload defines.
const (
	extDatetime = 78
	extConstant = 79
)

// datetimeLayout is Salt's strftime("%Y%m%dT%H:%M:%S.%f").
const datetimeLayout = "20060102T15:04:05.000000"

// maxDepth bounds the nesting Loads accepts: _auth loads arrive before
// any authentication, and a deep nest must not exhaust the stack.
// msgpack-python's unpacker stops at the same depth.
const maxDepth = 1024

// ErrPayload is the error Loads wraps for input that is not a Salt
// payload (salt.payload.loads raises SaltDeserializationError).
var ErrPayload = errors.New("saltproto: could not deserialize msgpack message")

// Dumps encodes v as salt.payload.dumps(v) does: msgpack with
// use_bin_type=False. Strings and byte slices both become raw; integers
// take the smallest format, non-negative ones the unsigned formats, as
// Python's packer chooses; floats are always float64; time.Time is the
// extension 78 with the naive wall clock; Go maps are written with sorted
// keys, Ordered in its order; a *big.Int beyond 64 bits becomes its
// decimal string, as Salt does for very long jids.
func Dumps(v any) ([]byte, error) {
	e := encoder{}
	if err := e.encode(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// DumpsBin encodes v as salt.payload.dumps(v, use_bin_type=True), the
// form Salt uses for its own files and IPC: str8 for short strings and
// the bin family for byte slices.
func DumpsBin(v any) ([]byte, error) {
	e := encoder{bin: true}
	if err := e.encode(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf []byte
	bin bool
}

func (e *encoder) byte1(b byte) { e.buf = append(e.buf, b) }

func (e *encoder) head8(b byte, n uint8) { e.buf = append(e.buf, b, n) }

func (e *encoder) head16(b byte, n uint16) {
	e.buf = append(e.buf, b)
	e.buf = binary.BigEndian.AppendUint16(e.buf, n)
}

func (e *encoder) head32(b byte, n uint32) {
	e.buf = append(e.buf, b)
	e.buf = binary.BigEndian.AppendUint32(e.buf, n)
}

func (e *encoder) uint(u uint64) {
	switch {
	case u < 0x80:
		e.byte1(byte(u))
	case u <= math.MaxUint8:
		e.head8(0xcc, uint8(u))
	case u <= math.MaxUint16:
		e.head16(0xcd, uint16(u))
	case u <= math.MaxUint32:
		e.head32(0xce, uint32(u))
	default:
		e.byte1(0xcf)
		e.buf = binary.BigEndian.AppendUint64(e.buf, u)
	}
}

func (e *encoder) int(i int64) {
	if i >= 0 {
		e.uint(uint64(i))
		return
	}
	switch {
	case i >= -32:
		e.byte1(byte(i))
	case i >= math.MinInt8:
		e.head8(0xd0, uint8(i))
	case i >= math.MinInt16:
		e.head16(0xd1, uint16(i))
	case i >= math.MinInt32:
		e.head32(0xd2, uint32(i))
	default:
		e.byte1(0xd3)
		e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(i))
	}
}

func (e *encoder) float(f float64) {
	e.byte1(0xcb)
	e.buf = binary.BigEndian.AppendUint64(e.buf, math.Float64bits(f))
}

// raw writes a str-family header and the bytes: old-spec layout (no str8)
// unless the encoder is in bin mode.
func (e *encoder) raw(b []byte) error {
	n := len(b)
	switch {
	case n <= 31:
		e.byte1(0xa0 | byte(n))
	case e.bin && n <= math.MaxUint8:
		e.head8(0xd9, uint8(n))
	case n <= math.MaxUint16:
		e.head16(0xda, uint16(n))
	case uint64(n) <= math.MaxUint32:
		e.head32(0xdb, uint32(n))
	default:
		return fmt.Errorf("saltproto: string of %d bytes is too long for msgpack", n)
	}
	e.buf = append(e.buf, b...)
	return nil
}

func (e *encoder) binary(b []byte) error {
	if !e.bin {
		return e.raw(b)
	}
	n := len(b)
	switch {
	case n <= math.MaxUint8:
		e.head8(0xc4, uint8(n))
	case n <= math.MaxUint16:
		e.head16(0xc5, uint16(n))
	case uint64(n) <= math.MaxUint32:
		e.head32(0xc6, uint32(n))
	default:
		return fmt.Errorf("saltproto: bytes of %d bytes are too long for msgpack", n)
	}
	e.buf = append(e.buf, b...)
	return nil
}

func (e *encoder) arrayHead(n int) error {
	switch {
	case n <= 15:
		e.byte1(0x90 | byte(n))
	case n <= math.MaxUint16:
		e.head16(0xdc, uint16(n))
	case uint64(n) <= math.MaxUint32:
		e.head32(0xdd, uint32(n))
	default:
		return fmt.Errorf("saltproto: array of %d items is too long for msgpack", n)
	}
	return nil
}

func (e *encoder) mapHead(n int) error {
	switch {
	case n <= 15:
		e.byte1(0x80 | byte(n))
	case n <= math.MaxUint16:
		e.head16(0xde, uint16(n))
	case uint64(n) <= math.MaxUint32:
		e.head32(0xdf, uint32(n))
	default:
		return fmt.Errorf("saltproto: map of %d items is too long for msgpack", n)
	}
	return nil
}

func (e *encoder) ext(code int8, data []byte) {
	switch n := len(data); {
	case n == 1:
		e.byte1(0xd4)
	case n == 2:
		e.byte1(0xd5)
	case n == 4:
		e.byte1(0xd6)
	case n == 8:
		e.byte1(0xd7)
	case n == 16:
		e.byte1(0xd8)
	case n <= math.MaxUint8:
		e.head8(0xc7, uint8(n))
	case n <= math.MaxUint16:
		e.head16(0xc8, uint16(n))
	default:
		e.head32(0xc9, uint32(n))
	}
	e.buf = append(e.buf, byte(code))
	e.buf = append(e.buf, data...)
}

func (e *encoder) encode(v any, depth int) error {
	if depth > maxDepth {
		return errors.New("saltproto: value nested too deeply to encode")
	}
	switch t := v.(type) {
	case nil:
		e.byte1(0xc0)
	case bool:
		if t {
			e.byte1(0xc3)
		} else {
			e.byte1(0xc2)
		}
	case string:
		return e.raw([]byte(t))
	case []byte:
		return e.binary(t)
	case int:
		e.int(int64(t))
	case int8:
		e.int(int64(t))
	case int16:
		e.int(int64(t))
	case int32:
		e.int(int64(t))
	case int64:
		e.int(t)
	case uint:
		e.uint(uint64(t))
	case uint8:
		e.uint(uint64(t))
	case uint16:
		e.uint(uint64(t))
	case uint32:
		e.uint(uint64(t))
	case uint64:
		e.uint(t)
	case float32:
		e.float(float64(t))
	case float64:
		e.float(t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			e.int(i)
		} else if f, err := t.Float64(); err == nil {
			e.float(f)
		} else {
			return fmt.Errorf("saltproto: json.Number %q: %w", t, err)
		}
	case *big.Int:
		switch {
		case t == nil:
			e.byte1(0xc0)
		case t.IsInt64():
			e.int(t.Int64())
		case t.IsUint64():
			e.uint(t.Uint64())
		default:
			return e.raw([]byte(t.String()))
		}
	case time.Time:
		e.ext(extDatetime, []byte(t.Format(datetimeLayout)))
	case Constant:
		inner, err := DumpsBin([]any{t.Name, t.Value})
		if err != nil {
			return err
		}
		e.ext(extConstant, inner)
	case Ordered:
		if err := e.mapHead(len(t)); err != nil {
			return err
		}
		for _, kv := range t {
			if err := e.raw([]byte(kv.Key)); err != nil {
				return err
			}
			if err := e.encode(kv.Value, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if err := e.arrayHead(len(t)); err != nil {
			return err
		}
		for _, x := range t {
			if err := e.encode(x, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		if err := e.mapHead(len(t)); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if err := e.raw([]byte(k)); err != nil {
				return err
			}
			if err := e.encode(t[k], depth+1); err != nil {
				return err
			}
		}
	default:
		return e.reflect(reflect.ValueOf(v), depth)
	}
	return nil
}

// reflect encodes the slices, arrays, maps and pointers the type switch
// does not name ([]string, map[string]string, map[string][]any ...).
func (e *encoder) reflect(rv reflect.Value, depth int) error {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			e.byte1(0xc0)
			return nil
		}
		return e.encode(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			e.byte1(0xc0)
			return nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return e.binary(b)
		}
		if err := e.arrayHead(rv.Len()); err != nil {
			return err
		}
		for i := range rv.Len() {
			if err := e.encode(rv.Index(i).Interface(), depth+1); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if rv.IsNil() {
			e.byte1(0xc0)
			return nil
		}
		type pair struct {
			sort, key, val []byte
		}
		pairs := make([]pair, 0, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			ke := encoder{bin: e.bin}
			if err := ke.encode(it.Key().Interface(), depth+1); err != nil {
				return err
			}
			ve := encoder{bin: e.bin}
			if err := ve.encode(it.Value().Interface(), depth+1); err != nil {
				return err
			}
			s := ke.buf
			if it.Key().Kind() == reflect.String {
				s = []byte(it.Key().String())
			}
			pairs = append(pairs, pair{s, ke.buf, ve.buf})
		}
		slices.SortFunc(pairs, func(a, b pair) int { return bytes.Compare(a.sort, b.sort) })
		if err := e.mapHead(len(pairs)); err != nil {
			return err
		}
		for _, p := range pairs {
			e.buf = append(e.buf, p.key...)
			e.buf = append(e.buf, p.val...)
		}
		return nil
	case reflect.String:
		return e.raw([]byte(rv.String()))
	case reflect.Bool:
		return e.encode(rv.Bool(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.int(rv.Int())
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.uint(rv.Uint())
		return nil
	case reflect.Float32, reflect.Float64:
		e.float(rv.Float())
		return nil
	case reflect.Invalid:
		e.byte1(0xc0)
		return nil
	}
	return fmt.Errorf("saltproto: cannot encode %s as a Salt payload", rv.Type())
}

// Loads decodes a payload as salt.payload.loads(b) does: every raw or bin
// that is valid UTF-8 becomes a string, any other a []byte (Salt's
// decode_embedded_strs); integers are int64, or uint64 above MaxInt64;
// floats float64; arrays []any; mappings map[string]any; the extension
// 78 a time.Time (Salt's datetimes are naive: the wall clock, read as
// UTC) and 79 a Constant; any other extension its data, as Salt returns
// it. Salt's loads keeps keys that are not strings; here a mapping key is
// always a string: a non-UTF-8 raw key keeps its bytes, a number, boolean
// or None takes the text json.dumps gives it ("1", "1.5", "true",
// "null"), which is what the same data becomes on Salt's event bus and in
// its JSON returners. Trailing bytes are an error, as in msgpack-python.
func Loads(b []byte) (any, error) {
	d := decoder{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPayload, err)
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("%w: %d bytes of extra data", ErrPayload, len(d.b)-d.off)
	}
	return v, nil
}

// LoadsMap is Loads for a payload that must be a mapping (an envelope or a
// load).
func LoadsMap(b []byte) (map[string]any, error) {
	v, err := Loads(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: a %T, not a mapping", ErrPayload, v)
	}
	return m, nil
}

type decoder struct {
	b   []byte
	off int
}

var errShort = errors.New("incomplete input")

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, errShort
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s, nil
}

func (d *decoder) n8() (int, error) {
	s, err := d.take(1)
	if err != nil {
		return 0, err
	}
	return int(s[0]), nil
}

func (d *decoder) n16() (int, error) {
	s, err := d.take(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(s)), nil
}

func (d *decoder) n32() (int, error) {
	s, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint32(s)), nil
}

// text is Salt's decode_embedded_strs for one raw: a string when it is
// UTF-8, the bytes otherwise (copied: the input may be reused).
func text(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return bytes.Clone(b)
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	c, err := d.n8()
	if err != nil {
		return nil, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c&0xf0 == 0x80:
		return d.mapping(c&0x0f, depth)
	case c&0xf0 == 0x90:
		return d.array(c&0x0f, depth)
	case c&0xe0 == 0xa0:
		return d.raw(c & 0x1f)
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xd9:
		n, err := d.n8()
		if err != nil {
			return nil, err
		}
		return d.raw(n)
	case 0xc5, 0xda:
		n, err := d.n16()
		if err != nil {
			return nil, err
		}
		return d.raw(n)
	case 0xc6, 0xdb:
		n, err := d.n32()
		if err != nil {
			return nil, err
		}
		return d.raw(n)
	case 0xc7, 0xc8, 0xc9:
		var n int
		switch c {
		case 0xc7:
			n, err = d.n8()
		case 0xc8:
			n, err = d.n16()
		default:
			n, err = d.n32()
		}
		if err != nil {
			return nil, err
		}
		return d.ext(n)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return d.ext(1 << (c - 0xd4))
	case 0xca:
		s, err := d.take(4)
		if err != nil {
			return nil, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(s))), nil
	case 0xcb:
		s, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(s)), nil
	case 0xcc:
		n, err := d.n8()
		return int64(n), err
	case 0xcd:
		n, err := d.n16()
		return int64(n), err
	case 0xce:
		n, err := d.n32()
		return int64(n), err
	case 0xcf:
		s, err := d.take(8)
		if err != nil {
			return nil, err
		}
		u := binary.BigEndian.Uint64(s)
		if u > math.MaxInt64 {
			return u, nil
		}
		return int64(u), nil
	case 0xd0:
		s, err := d.take(1)
		if err != nil {
			return nil, err
		}
		return int64(int8(s[0])), nil
	case 0xd1:
		s, err := d.take(2)
		if err != nil {
			return nil, err
		}
		return int64(int16(binary.BigEndian.Uint16(s))), nil
	case 0xd2:
		s, err := d.take(4)
		if err != nil {
			return nil, err
		}
		return int64(int32(binary.BigEndian.Uint32(s))), nil
	case 0xd3:
		s, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(s)), nil
	case 0xdc:
		n, err := d.n16()
		if err != nil {
			return nil, err
		}
		return d.array(n, depth)
	case 0xdd:
		n, err := d.n32()
		if err != nil {
			return nil, err
		}
		return d.array(n, depth)
	case 0xde:
		n, err := d.n16()
		if err != nil {
			return nil, err
		}
		return d.mapping(n, depth)
	case 0xdf:
		n, err := d.n32()
		if err != nil {
			return nil, err
		}
		return d.mapping(n, depth)
	}
	return nil, fmt.Errorf("invalid msgpack byte 0x%02x", c)
}

func (d *decoder) raw(n int) (any, error) {
	s, err := d.take(n)
	if err != nil {
		return nil, err
	}
	return text(s), nil
}

func (d *decoder) ext(n int) (any, error) {
	s, err := d.take(n + 1)
	if err != nil {
		return nil, err
	}
	code, data := int8(s[0]), s[1:]
	switch code {
	case extDatetime:
		return parseDatetime(string(data))
	case extConstant:
		v, err := Loads(data)
		if err != nil {
			return nil, fmt.Errorf("constant extension: %w", err)
		}
		l, ok := v.([]any)
		if !ok || len(l) != 2 {
			return nil, fmt.Errorf("constant extension: %T, not (name, value)", v)
		}
		name, ok := l[0].(string)
		if !ok {
			return nil, fmt.Errorf("constant extension: name is a %T", l[0])
		}
		return Constant{Name: name, Value: l[1]}, nil
	}
	return text(data), nil
}

func (d *decoder) array(n, depth int) (any, error) {
	// Every item takes at least one byte: a count beyond what is left is
	// a lie, and must not size an allocation.
	if n > len(d.b)-d.off {
		return nil, errShort
	}
	a := make([]any, n)
	for i := range a {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

func (d *decoder) mapping(n, depth int) (any, error) {
	if 2*n > len(d.b)-d.off {
		return nil, errShort
	}
	m := make(map[string]any, n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		ks, err := keyString(k)
		if err != nil {
			return nil, err
		}
		m[ks] = v
	}
	return m, nil
}

// keyString is the string a decoded mapping key is stored under: see
// Loads.
func keyString(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case []byte:
		return string(t), nil
	case nil:
		return "null", nil
	case bool:
		return strconv.FormatBool(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		return jsonFloat(t), nil
	}
	return "", fmt.Errorf("a %T cannot be a mapping key", k)
}

// jsonFloat is float.__repr__ (py.Float), which json.dumps uses for keys,
// but for the non-finite, which json.dumps names "Infinity" and "NaN".
func jsonFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return py.Float(f)
}

// Bytes is a decoded value as bytes, as Salt's to_bytes takes it: a
// field that carries binary (a token, a signature, an encrypted load)
// decodes to a string when its bytes happen to be UTF-8.
func Bytes(v any) ([]byte, bool) {
	switch t := v.(type) {
	case []byte:
		return t, true
	case string:
		return []byte(t), true
	}
	return nil, false
}

// parseDatetime is Salt's datetime.strptime(s, "%Y%m%dT%H:%M:%S.%f"):
// the fraction is one to six digits of microseconds, read as UTC.
func parseDatetime(s string) (time.Time, error) {
	main, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) == 0 || len(frac) > 6 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("datetime extension %q: not %%Y%%m%%dT%%H:%%M:%%S.%%f", s)
	}
	t, err := time.Parse("20060102T15:04:05", main)
	if err != nil {
		return time.Time{}, fmt.Errorf("datetime extension: %w", err)
	}
	us, err := strconv.Atoi(frac + strings.Repeat("0", 6-len(frac)))
	if err != nil {
		return time.Time{}, fmt.Errorf("datetime extension: %w", err)
	}
	return t.Add(time.Duration(us) * time.Microsecond), nil
}
