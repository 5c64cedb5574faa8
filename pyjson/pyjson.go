// Package pyjson re-encodes JSON exactly as Python's json.dumps prints it, so
// that brine's output is byte-compatible with Salt tools and the shell scripts
// written against them (`salt-run state.event` prints json.dumps(data)).
//
// Compact form is json.dumps(v): separators ", " and ": ", keys in their
// original order, non-ASCII escaped as \uXXXX (ensure_ascii). Pretty form is
// json.dumps(v, sort_keys=True, indent=4). Numbers keep their original text.
package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Format re-encodes the JSON value in src; pretty selects
// json.dumps(sort_keys=True, indent=4).
func Format(src []byte, pretty bool) ([]byte, error) {
	// Decoding into any would lose key order; read token by token instead.
	dec := json.NewDecoder(bytes.NewReader(src))
	ordered, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("pyjson: trailing data after the JSON value")
	}
	var b bytes.Buffer
	write(&b, ordered, pretty, 0)
	return b.Bytes(), nil
}

// object keeps keys in the order they appeared.
type object struct {
	keys []string
	vals []any
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("pyjson: %w", err)
	}
	return decodeValue(dec, tok)
}

func decodeValue(dec *json.Decoder, tok json.Token) (any, error) {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("pyjson: %w", err)
				}
				vt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("pyjson: %w", err)
				}
				v, err := decodeValue(dec, vt)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, kt.(string))
				o.vals = append(o.vals, v)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, fmt.Errorf("pyjson: %w", err)
			}
			return o, nil
		case '[':
			arr := []any{}
			for dec.More() {
				vt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("pyjson: %w", err)
				}
				v, err := decodeValue(dec, vt)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, fmt.Errorf("pyjson: %w", err)
			}
			return arr, nil
		}
	}
	return tok, nil
}

func write(b *bytes.Buffer, v any, pretty bool, depth int) {
	switch t := v.(type) {
	case *object:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return
		}
		idx := make([]int, len(t.keys))
		for i := range idx {
			idx[i] = i
		}
		if pretty {
			sort.SliceStable(idx, func(a, c int) bool { return t.keys[idx[a]] < t.keys[idx[c]] })
		}
		b.WriteByte('{')
		for n, i := range idx {
			sep(b, n, pretty, depth+1)
			writeString(b, t.keys[i])
			b.WriteString(": ")
			write(b, t.vals[i], pretty, depth+1)
		}
		closing(b, pretty, depth, '}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for n, x := range t {
			sep(b, n, pretty, depth+1)
			write(b, x, pretty, depth+1)
		}
		closing(b, pretty, depth, ']')
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(numberRepr(t))
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
}

func sep(b *bytes.Buffer, n int, pretty bool, depth int) {
	if n > 0 {
		b.WriteByte(',')
		if !pretty {
			b.WriteByte(' ')
		}
	}
	if pretty {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("    ", depth))
	}
}

func closing(b *bytes.Buffer, pretty bool, depth int, c byte) {
	if pretty {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("    ", depth))
	}
	b.WriteByte(c)
}

// writeString writes s as Python's json encoder with ensure_ascii=True.
func writeString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 || c == 0x7f {
					if c == 0x7f {
						b.WriteByte(c)
						continue
					}
					b.WriteString(`\u00`)
					b.WriteByte(hex[c>>4])
					b.WriteByte(hex[c&0xf])
					continue
				}
				b.WriteByte(c)
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		units := []uint16{uint16(r)}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			units = []uint16{uint16(r1), uint16(r2)}
		}
		for _, u := range units {
			fmt.Fprintf(b, `\u%04x`, u)
		}
	}
	b.WriteByte('"')
}

// numberRepr prints a JSON number as Python would after json.loads: integers keep
// their digits, anything with a fraction or exponent is a float in repr form.
func numberRepr(n json.Number) string {
	lit := n.String()
	if !strings.ContainsAny(lit, ".eE") {
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case err != nil:
		return lit
	}
	return floatRepr(f)
}

// floatRepr is Python's repr(float): the shortest round-tripping digits, in
// positional form with at least one decimal when the decimal exponent is in
// [-4, 16), else in exponent form with a signed two-digit exponent.
func floatRepr(f float64) string {
	sci := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+03
	mant, expStr, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expStr)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out = fmt.Sprintf("%se%s%02d", m, sign, exp)
	} else {
		point := exp + 1 // digits before the decimal point
		switch {
		case point <= 0:
			out = "0." + strings.Repeat("0", -point) + digits
		case point >= len(digits):
			out = digits + strings.Repeat("0", point-len(digits)) + ".0"
		default:
			out = digits[:point] + "." + digits[point:]
		}
	}
	if neg {
		return "-" + out
	}
	return out
}
