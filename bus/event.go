// Package bus defines brine's event envelope and tag validation,
// and the Bus through which every event travels.
//
// Events are Salt-compatible: a tag and a JSON object of data that carries a
// naive-UTC `_stamp`, so that Salt reaction files and tools that read Salt events
// keep working. brine adds an id (UUIDv7, so ids sort by time), an RFC 3339 time,
// a source, and a causal chain (cause, depth) that loop protection relies on.
package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"
)

const (
	// MaxTagLen is the longest tag accepted, in bytes. Salt does not limit tags,
	// but every tag becomes a bus subject and a log line; 512 bytes holds any
	// tag Salt itself fires.
	MaxTagLen = 512

	// DefaultMaxEventSize matches Salt's max_event_size: 1 MiB of encoded event.
	DefaultMaxEventSize = 1 << 20

	// TimeLayout is the envelope's time format: RFC 3339, UTC, microseconds.
	TimeLayout = "2006-01-02T15:04:05.000000Z07:00"

	// StampLayout is Salt's `_stamp`: ISO 8601 naive UTC with microseconds, as
	// Python's datetime.utcnow().isoformat() prints it.
	StampLayout = "2006-01-02T15:04:05.000000"
)

// Errors returned by validation; callers test them with errors.Is and show the
// wrapped message, which names the offending tag, field or size.
var (
	ErrInvalidTag  = errors.New("invalid tag")
	ErrInvalidData = errors.New("invalid data")
	ErrTooLarge    = errors.New("event too large")
)

// Event is the envelope that travels on every wire. Data is kept as the raw
// JSON object it arrived as, so the bus never re-encodes (or loses precision
// in) what a sender wrote.
type Event struct {
	ID     string          `json:"id"`
	Tag    string          `json:"tag"`
	Time   time.Time       `json:"time"`
	Source string          `json:"source,omitempty"`
	Data   json.RawMessage `json:"data"`
	Cause  string          `json:"cause,omitempty"`
	Depth  int             `json:"depth,omitempty"`

	// Seq is the event's position in the durable log, set on events read from
	// a Bus (zero on new ones). It is not part of the envelope: it lets a
	// reader resume exactly where it stopped.
	Seq uint64 `json:"-"`

	// enc caches the encoded envelope once validated or read from the log,
	// so that an event crossing the gateway, the store and the watchers is
	// encoded once; it is used only while the fields still are what was
	// encoded (a copied and changed event is encoded afresh).
	enc *encoding
}

type encoding struct {
	b                      []byte
	id, tag, source, cause string
	depth                  int
	time                   time.Time
	data                   *byte
	dataLen                int
}

func (e *Event) snapshot(b []byte) *encoding {
	return &encoding{b: b, id: e.ID, tag: e.Tag, source: e.Source, cause: e.Cause, depth: e.Depth,
		time: e.Time, data: unsafe.SliceData(e.Data), dataLen: len(e.Data)}
}

// cached returns the cached encoding if the event has not changed since.
func (e *Event) cached() []byte {
	c := e.enc
	if c == nil || c.id != e.ID || c.tag != e.Tag || c.source != e.Source || c.cause != e.Cause ||
		c.depth != e.Depth || !c.time.Equal(e.Time) || c.data != unsafe.SliceData(e.Data) || c.dataLen != len(e.Data) {
		return nil
	}
	return c.b
}

// Origin describes who fires an event and why; the zero value is an event with
// no cause fired by an unnamed source.
type Origin struct {
	Source string
	// Cause is the event whose reaction fired this one; the new event's depth
	// is one more than the cause's.
	Cause *Event
}

// NewEvent builds a validated event with a fresh id and time, and `_stamp`
// added to its data as Salt does. data may be nil (an empty object).
func NewEvent(tag string, data map[string]any, o Origin) (*Event, error) {
	if err := ValidateTag(tag); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("event id: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	d := make(map[string]any, len(data)+1)
	for k, v := range data {
		d[k] = v
	}
	stamp, _ := appendTime(make([]byte, 0, len(StampLayout)), now) // time.Now is in range
	d["_stamp"] = string(stamp)
	raw, err := appendData(make([]byte, 0, 256), d)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidData, err)
	}
	ev := &Event{ID: id.String(), Tag: tag, Time: now, Source: o.Source, Data: raw}
	if o.Cause != nil {
		ev.Cause = o.Cause.ID
		ev.Depth = o.Cause.Depth + 1
	}
	// Every part is valid already, and the data is encoding/json's own: the
	// event is encoded now, once, without checking it again.
	if b, ok := appendEnvelope(make([]byte, 0, len(raw)+len(tag)+160), ev, raw, true); ok {
		ev.enc = ev.snapshot(b)
	}
	return ev, nil
}

// ValidateTag reports why tag cannot be an event tag: empty, longer than
// MaxTagLen, not UTF-8, or holding control characters.
func ValidateTag(tag string) error {
	switch {
	case tag == "":
		return fmt.Errorf("%w: empty tag", ErrInvalidTag)
	case len(tag) > MaxTagLen:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidTag, len(tag), MaxTagLen)
	case !utf8.ValidString(tag):
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidTag, tag)
	}
	for i, r := range tag {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: %q has control character %U at byte %d", ErrInvalidTag, tag, r, i)
		}
	}
	return nil
}

// Validate checks an event that arrived from outside (a remote sender, a
// replayed log): tag, id, data shape and encoded size against maxSize bytes
// (DefaultMaxEventSize when maxSize <= 0). It returns the encoded event.
func (e *Event) Validate(maxSize int) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxEventSize
	}
	b := e.cached()
	if b == nil {
		if err := e.check(); err != nil {
			return nil, err
		}
		var err error
		if b, err = e.encode(); err != nil {
			return nil, fmt.Errorf("event %q: %w: data is not valid JSON: %v", e.Tag, ErrInvalidData, err)
		}
		e.enc = e.snapshot(b)
	}
	if len(b) > maxSize {
		return nil, fmt.Errorf("%w: event %q is %d bytes encoded, the limit is %d", ErrTooLarge, e.Tag, len(b), maxSize)
	}
	return b, nil
}

func (e *Event) check() error {
	if err := ValidateTag(e.Tag); err != nil {
		return err
	}
	u, err := uuid.Parse(e.ID)
	if err != nil {
		return fmt.Errorf("event %q: bad id: %w", e.Tag, err)
	}
	if u.String() != e.ID {
		// The id deduplicates and orders events: one UUID must have one
		// spelling, not also {…}, urn:uuid:…, upper case or no hyphens.
		return fmt.Errorf("event %q: bad id %q: not the canonical %s", e.Tag, e.ID, u)
	}
	if err := validateObject(e.Data); err != nil {
		return fmt.Errorf("event %q: %w", e.Tag, err)
	}
	if e.Depth < 0 {
		return fmt.Errorf("event %q: negative depth %d", e.Tag, e.Depth)
	}
	return nil
}

// validateObject checks that data is meant as a JSON object; its validity is
// checked while it is encoded, so that the data is scanned once.
func validateObject(raw json.RawMessage) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: data must be a JSON object", ErrInvalidData)
	}
	return nil // the rest is checked while encoding, in the same scan
}

// DataMap decodes the event data. Integers stay integers (int64), so ids and
// counters survive a round trip; other numbers become float64.
func (e *Event) DataMap() (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(e.Data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidData, err)
	}
	return Numbers(m).(map[string]any), nil
}

// Numbers turns the json.Number values of a value decoded with UseNumber
// into int64 when integral and float64 otherwise, in place, so that an
// integer sent as 42 (or 2^53+1) reads back exactly, not as 42.0.
func Numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = Numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = Numbers(x)
		}
	}
	return v
}

type wireEvent struct {
	ID     string          `json:"id"`
	Tag    string          `json:"tag"`
	Time   string          `json:"time"`
	Source string          `json:"source,omitempty"`
	Data   json.RawMessage `json:"data"`
	Cause  string          `json:"cause,omitempty"`
	Depth  int             `json:"depth,omitempty"`
}

// MarshalJSON writes the envelope with the time in TimeLayout.
func (e *Event) MarshalJSON() ([]byte, error) {
	if b := e.cached(); b != nil {
		return b, nil
	}
	return e.encode()
}

func (e *Event) encode() ([]byte, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	if b, ok := appendEnvelope(make([]byte, 0, len(data)+len(e.Tag)+160), e, data, false); ok {
		return b, nil
	}
	return json.Marshal(wireEvent{ID: e.ID, Tag: e.Tag, Time: e.Time.UTC().Format(TimeLayout),
		Source: e.Source, Data: data, Cause: e.Cause, Depth: e.Depth})
}

// UnmarshalJSON reads an envelope. The time may carry any RFC 3339 offset and
// precision; it is kept as the envelope would carry it (UTC, microseconds), so
// that an event forwarded on reads the same as it did here.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return e.fromWire(&w)
}

func (e *Event) fromWire(w *wireEvent) error {
	var t time.Time
	if w.Time != "" {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, w.Time); err != nil {
			return fmt.Errorf("event time: %w", err)
		}
		t = t.UTC().Truncate(time.Microsecond)
		if y := t.Year(); y < 0 || y > 9999 {
			return fmt.Errorf("event time: %q is outside years 0000-9999 in UTC", w.Time)
		}
	}
	*e = Event{ID: w.ID, Tag: w.Tag, Time: t, Source: w.Source, Data: w.Data, Cause: w.Cause, Depth: w.Depth}
	return nil
}

// Decode parses and validates an encoded envelope.
func Decode(b []byte, maxSize int) (*Event, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxEventSize
	}
	if len(b) > maxSize {
		return nil, fmt.Errorf("%w: %d bytes encoded, the limit is %d", ErrTooLarge, len(b), maxSize)
	}
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("event envelope: %w", err)
	}
	if _, err := e.Validate(maxSize); err != nil {
		return nil, err
	}
	return &e, nil
}

// DecodeStored reads an envelope that a Bus stored after validating it, and
// keeps b as its encoding: the read path neither re-validates nor, when the
// event is sent on, re-encodes. b must not change afterwards.
func DecodeStored(b []byte) (*Event, error) {
	e, err := ParseEnvelope(b)
	if err != nil {
		return nil, err
	}
	e.enc = e.snapshot(b)
	return e, nil
}

// ParseEnvelope reads an encoded envelope without validating it, for a
// receiver that fills in what the sender left out before calling Validate.
// The event shares b's memory: b must not change afterwards.
func ParseEnvelope(b []byte) (*Event, error) {
	// Straight into the wire form: json.Unmarshal into an Event would scan
	// b twice (once for itself, once in UnmarshalJSON).
	var w wireEvent
	if !parseStored(b, &w) {
		w = wireEvent{}
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, fmt.Errorf("event envelope: %w", err)
		}
	}
	e := new(Event)
	if err := e.fromWire(&w); err != nil {
		return nil, err
	}
	return e, nil
}

// IDTime returns the time embedded in a UUIDv7 event id, which lets a reader
// resume from an id without an index.
func IDTime(id string) (time.Time, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return time.Time{}, fmt.Errorf("event id %q: %w", id, err)
	}
	if u.Version() != 7 {
		return time.Time{}, fmt.Errorf("event id %q: not a UUIDv7", id)
	}
	sec, nsec := u.Time().UnixTime()
	return time.Unix(sec, nsec).UTC(), nil
}

// HasReservedPrefix reports whether a remote sender may not use tag: these
// prefixes are fired only by the master itself (Salt's CVE-2025-22236 came from
// letting minions fire them).
func HasReservedPrefix(tag string) bool {
	for _, p := range ReservedPrefixes {
		if strings.HasPrefix(tag, p) {
			return true
		}
	}
	return false
}

// ReservedPrefixes are the tag prefixes only the master may publish under.
var ReservedPrefixes = []string{"salt/job/", "salt/run/", "salt/wheel/", "salt/auth", "salt/key", "brine/"}

// OperatorPrefixes are the tag prefixes the master and its operators (the
// CLI holding the shared key: `brine cloud`, salt-cloud's job) publish
// under and agents never do: salt-cloud's lifecycle events, from which the
// mine, and so DNS and DHCP, learn which machines exist where. An agent
// that could fire salt/cloud/<other>/destroyed would remove another host's
// records.
var OperatorPrefixes = []string{"salt/cloud/"}

// AgentReserved reports the prefix that keeps an agent from firing tag: a
// reserved prefix or an operator's; "" when an agent may fire it.
func AgentReserved(tag string) string {
	for _, list := range [][]string{ReservedPrefixes, OperatorPrefixes} {
		for _, p := range list {
			if strings.HasPrefix(tag, p) {
				return p
			}
		}
	}
	return ""
}

// agentScheme starts the source of every event an agent sent: the master
// stamps it with the id the agent's key was accepted under.
const agentScheme = "agent://"

// AgentSource is the source of the events agent id sends.
func AgentSource(id string) string { return agentScheme + id }

// Agent returns the id of the agent that sent e, as the master stamped it,
// and false for an event the master or an operator fired. Whatever changes
// state from an event checks this, not only its tag.
func (e *Event) Agent() (string, bool) {
	return strings.CutPrefix(e.Source, agentScheme)
}
