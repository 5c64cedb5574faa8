package wire

import (
	"context"
	"encoding/json"
)

// The master's side of the conversation is served through transports:
// brine's CURVE gateway, and Salt's own protocol for unmodified
// salt-minions (package saltmaster). A transport authenticates a
// connection by the key it proves it holds, hands each request to the
// master's Handler for its method and delivers what the master pushes.
// The types are here, beside the methods they carry, so that a transport
// outside the master's package implements them without importing it.

// Conn is one agent's connection as its transport holds it. The master
// keys its records by Conn, so an implementation must be comparable and
// stand for one connection (a pointer, or a struct of one).
type Conn interface {
	// Key is the public key the connection authenticated with, as the
	// key store records it: what hello checks against the accepted key.
	Key() string
	// Remote is the agent's network address, for logs.
	Remote() string
	// Push sends the agent a message it did not ask for (a Push* method
	// and its body); false when it cannot be queued or the connection is
	// gone, which the master counts as not sent.
	Push(method string, body any) bool
	// Close cuts the agent off at once.
	Close()
}

// Handler serves one method for connection c. Its refusals wrap this
// package's errors (ErrInvalidRequest, ErrNotAccepted, ErrReservedTag),
// which the transport tells the agent in its own terms.
type Handler func(ctx context.Context, c Conn, body json.RawMessage) (any, error)
