package bus

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"
	"unsafe"
)

// Every event is encoded once and decoded by every reader, so both are on
// the bus's hot path. encoding/json spends most of its time on reflection
// and on scanning the data twice; the envelope is a fixed shape, written in
// a fixed key order, so it is written and read here directly. Anything out
// of the ordinary (a string that needs escaping, data spread over lines or
// holding what encoding/json escapes, a stored envelope in another layout)
// takes encoding/json's path. The one difference: spaces between the data's
// tokens stay as the sender wrote them (encoding/json removes them).

// appendEnvelope writes the envelope of e with data as encoding/json would,
// or reports false when e holds something only encoding/json should write.
// trusted data comes from encoding/json itself (valid, compact, escaped) and
// is not checked again.
func appendEnvelope(dst []byte, e *Event, data []byte, trusted bool) ([]byte, bool) {
	// encoding/json escapes <, > and & (and U+2028/9, whose UTF-8 starts
	// with 0xE2) inside the data too; a line break must not reach the
	// store, where a batch holds one event per line.
	if !trusted && (bytes.ContainsAny(data, "\n\r<>&") || bytes.IndexByte(data, 0xe2) >= 0 || !json.Valid(data)) {
		return nil, false
	}
	var ok bool
	dst = append(dst, `{"id":`...)
	if dst, ok = appendPlainString(dst, e.ID); !ok {
		return nil, false
	}
	dst = append(dst, `,"tag":`...)
	if dst, ok = appendPlainString(dst, e.Tag); !ok {
		return nil, false
	}
	dst = append(dst, `,"time":"`...)
	if dst, ok = appendTime(dst, e.Time); !ok {
		return nil, false
	}
	dst = append(dst, `Z"`...)
	if e.Source != "" {
		dst = append(dst, `,"source":`...)
		if dst, ok = appendPlainString(dst, e.Source); !ok {
			return nil, false
		}
	}
	dst = append(dst, `,"data":`...)
	dst = append(dst, data...)
	if e.Cause != "" {
		dst = append(dst, `,"cause":`...)
		if dst, ok = appendPlainString(dst, e.Cause); !ok {
			return nil, false
		}
	}
	if e.Depth != 0 {
		dst = append(dst, `,"depth":`...)
		dst = appendInt(dst, e.Depth, 1)
	}
	return append(dst, '}'), true
}

// appendTime writes t in UTC as StampLayout does (TimeLayout without its Z),
// for the years 0000 to 9999 that both layouts can hold.
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return nil, false
	}
	hour, minute, sec := t.Clock()
	dst = appendInt(dst, year, 4)
	dst = append(dst, '-')
	dst = appendInt(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendInt(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendInt(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendInt(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendInt(dst, sec, 2)
	dst = append(dst, '.')
	return appendInt(dst, t.Nanosecond()/1000, 6), true
}

// plain marks the bytes encoding/json writes as they are inside a string:
// printable ASCII but the quote, the backslash and its HTML escapes.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

func appendPlainString(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			return nil, false
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), true
}

// appendInt writes n in decimal with at least width digits.
func appendInt(dst []byte, n, width int) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 || len(buf)-i < width {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, buf[i:]...)
}

// parseStored reads an envelope in the layout appendEnvelope writes into w,
// its strings sharing b's memory (b must not change afterwards). It reports
// false for anything else, and the caller falls back to encoding/json.
func parseStored(b []byte, w *wireEvent) bool {
	p := storedParser{b: b}
	ok := p.key(`{"id":`) && p.str(&w.ID) &&
		p.key(`,"tag":`) && p.str(&w.Tag) &&
		p.key(`,"time":`) && p.str(&w.Time) &&
		(!p.key(`,"source":`) || p.str(&w.Source)) &&
		p.key(`,"data":`) && p.object(&w.Data) &&
		(!p.key(`,"cause":`) || p.str(&w.Cause)) &&
		(!p.key(`,"depth":`) || p.int(&w.Depth)) &&
		p.key(`}`)
	return ok && p.i == len(b)
}

type storedParser struct {
	b []byte
	i int
}

// key consumes lit if it comes next.
func (p *storedParser) key(lit string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
		return false
	}
	p.i += len(lit)
	return true
}

// str reads a string of printable ASCII without escapes: what
// appendPlainString writes.
func (p *storedParser) str(dst *string) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			*dst = unsafe.String(unsafe.SliceData(p.b[start:]), j-start)
			p.i = j + 1
			return true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return false
		}
	}
	return false
}

// object reads a JSON object, which the store wrote valid: only its end
// needs finding.
func (p *storedParser) object(dst *json.RawMessage) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	depth, inString := 0, false
	for j := p.i; j < len(p.b); j++ {
		c := p.b[j]
		if inString {
			switch c {
			case '\\':
				j++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				*dst = p.b[p.i : j+1 : j+1]
				p.i = j + 1
				return true
			}
		}
	}
	return false
}

func (p *storedParser) int(dst *int) bool {
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start, n := p.i, 0
	for ; p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9'; p.i++ {
		if p.i-start >= 18 {
			return false
		}
		n = n*10 + int(p.b[p.i]-'0')
	}
	if p.i == start {
		return false
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// appendData writes an event's data object as encoding/json would (keys
// sorted, HTML escaped), without reflection for the values events hold:
// maps, lists, strings, booleans, numbers and nil. Anything else (a struct,
// a Marshaler) is written by encoding/json itself.
func appendData(dst []byte, m map[string]any) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendJSONString(dst, t), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case int:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int64:
		return strconv.AppendInt(dst, t, 10), nil
	case map[string]any:
		return appendData(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, x := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, x); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendJSONString quotes s; one that needs escaping goes through
// encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	if b, ok := appendPlainString(dst, s); ok {
		return b
	}
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}
