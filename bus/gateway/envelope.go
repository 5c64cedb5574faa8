package gateway

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/brinehq/brine/bus"
)

// envelope mirrors bus.Event's wire form. Decoding into it scans the bytes
// once; through Event's UnmarshalJSON, encoding/json scans them three times,
// which on the publish path costs as much as the rest of the request.
type envelope struct {
	ID     string          `json:"id"`
	Tag    string          `json:"tag"`
	Time   string          `json:"time"`
	Source string          `json:"source"`
	Data   json.RawMessage `json:"data"`
	Cause  string          `json:"cause"`
	Depth  int             `json:"depth"`
}

// decodeEnvelope parses an encoded event without validating it.
func decodeEnvelope(b []byte) (*bus.Event, error) {
	var w envelope
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	ev := &bus.Event{ID: w.ID, Tag: w.Tag, Source: w.Source, Data: w.Data, Cause: w.Cause, Depth: w.Depth}
	if w.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, w.Time)
		if err != nil {
			return nil, fmt.Errorf("event time: %w", err)
		}
		ev.Time = t
	}
	return ev, nil
}
