package mine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/brinehq/brine/bus"
)

// A watch of the mine keeps every host's record decoded: the publisher
// for grain targets, ddns and dnsmasq for addresses. An agent's grains are
// some 10 KB of JSON, four times that once decoded, and most of them are
// the same on every machine of a fleet built from one image (os, kernel,
// cpu_flags, the locale, the path…): a thousand agents kept a thousand
// copies of each, most of the master's memory per idle agent. Watches
// therefore decode a grain's value once per distinct value and share it
// between the records that have it. Records from a watch are read, never
// changed (target matching, listing addresses); a record to change comes
// from Get or List, decoded whole and owned by its caller.

// maxSharedBytes bounds the JSON of the values shared at once; past it the
// table starts afresh (values already shared stay shared).
const maxSharedBytes = 8 << 20

// maxSharedValue is the largest value worth a table entry.
const maxSharedValue = 64 << 10

// sharedValues holds decoded grain values by name and JSON text.
type sharedValues struct {
	max int // maxSharedBytes

	mu    sync.Mutex
	vals  map[string]sharedValue
	bytes int
}

// sharedValue is a grain's name and value, both shared: the name too is
// one string for every record, not one per record's map.
type sharedValue struct {
	name string
	v    any
}

// grainValues is the table every watch of this process uses.
var grainValues = &sharedValues{max: maxSharedBytes, vals: map[string]sharedValue{}}

// value is the grain name's value decoded from raw, the same value for
// the same text, and the name as shared.
func (s *sharedValues) value(name string, raw json.RawMessage) (string, any, error) {
	if len(raw) > maxSharedValue {
		v, err := decodeValue(raw)
		return name, v, err
	}
	key := name + "\x00" + string(raw)
	s.mu.Lock()
	sv, ok := s.vals[key]
	s.mu.Unlock()
	if ok {
		return sv.name, sv.v, nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		return "", nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.vals[key]; ok {
		return prev.name, prev.v, nil // decoded meanwhile by another watch
	}
	if s.bytes+len(key) > s.max {
		s.vals, s.bytes = map[string]sharedValue{}, 0
	}
	sv = sharedValue{name: key[:len(name)], v: v}
	s.vals[key] = sv
	s.bytes += len(key)
	return sv.name, sv.v, nil
}

// decodeValue decodes one JSON value as decode does a record's: integers
// as int64, other numbers as float64.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return bus.Numbers(v), nil
}

// decodeShared decodes a record for a watch: as decode, its grains' values
// shared with the other records that have them (grainValues).
func decodeShared(e bus.Entry) (*Host, error) { return decodeRecord(e, grainValues.value) }

// decode decodes a record whole, owned by its caller.
func decode(e bus.Entry) (*Host, error) {
	return decodeRecord(e, func(name string, raw json.RawMessage) (string, any, error) {
		v, err := decodeValue(raw)
		return name, v, err
	})
}

// decodeRecord decodes the record e, each grain's value by grain: JSON
// numbers as int64 or float64 (bus.Numbers), the id and revision the
// bucket's.
func decodeRecord(e bus.Entry, grain func(name string, raw json.RawMessage) (string, any, error)) (*Host, error) {
	var rec struct {
		Host
		// Grains, shallower than Host's, takes the record's grains.
		Grains map[string]json.RawMessage `json:"grains,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(e.Value))
	dec.UseNumber()
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("mine: record %s (revision %d): %w", e.Key, e.Revision, err)
	}
	h := rec.Host
	if rec.Grains != nil {
		h.Grains = make(map[string]any, len(rec.Grains))
		for k, raw := range rec.Grains {
			name, v, err := grain(k, raw)
			if err != nil {
				return nil, fmt.Errorf("mine: record %s (revision %d): grain %s: %w", e.Key, e.Revision, k, err)
			}
			h.Grains[name] = v
		}
	}
	h.Data, _ = bus.Numbers(h.Data).(map[string]any)
	h.ID = e.Key
	h.Revision = e.Revision
	return &h, nil
}
