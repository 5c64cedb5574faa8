package keyorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// MarshalJSON is v as encoding/json writes it, except that the objects of
// its map[string]any mappings list their keys in o's order (keys o does
// not know last, sorted): the same value for any JSON reader, with the
// written order for one that looks (ReadJSON). It is how the master sends
// a pillar, so that agents that decode into maps see no change.
func MarshalJSON(v any, o *Order) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any, o *Order) error {
	switch t := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range o.KeysOf(t) {
			if i > 0 {
				b.WriteByte(',')
			}
			key, err := json.Marshal(k)
			if err != nil {
				return err
			}
			b.Write(key)
			b.WriteByte(':')
			if err := writeJSON(b, t[k], o.At(k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, x, o.Item(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	text, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(text)
	return nil
}

// ReadJSON is the key order of the JSON value in raw: each object's keys
// as they appear.
func ReadJSON(raw []byte) (*Order, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	o, err := readValue(dec)
	if err != nil {
		return nil, fmt.Errorf("key order: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("key order: data after the value")
	}
	return o, nil
}

// readValue reads one value from dec and returns its order (nil for a
// scalar or a list without mappings).
func readValue(dec *json.Decoder) (*Order, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &Order{Keys: []string{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			sub, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			// a repeated key (no writer of ours makes one) is listed
			// twice; KeysOf lists each key once
			o.Keys = append(o.Keys, k)
			o.setSub(k, sub)
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		var items []*Order
		for dec.More() {
			sub, err := readValue(dec)
			if err != nil {
				return nil, err
			}
			items = append(items, sub)
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, err
		}
		for _, it := range items {
			if it != nil {
				return &Order{Items: items}, nil
			}
		}
		return nil, nil
	}
	return nil, nil
}
