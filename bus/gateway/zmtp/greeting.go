package zmtp

import (
	"bytes"
	"fmt"
)

// GreetingSize is the length of a ZMTP 3 greeting: signature (10),
// version (2), mechanism (20), as-server (1), filler (31).
const GreetingSize = 64

// PrefixSize is the length of the greeting's signature and major version.
// A server that must learn the peer's mechanism before choosing its own
// sends these first: libzmq sends the rest of its greeting, mechanism
// included, only after seeing the other side's major version.
const PrefixSize = 11

// Greeting is a greeting of version 3.minor with mechanism and as-server
// 0. With minor 0 and "NULL" it is byte for byte zmq4's, so that an end
// that wrote part of it itself can hand the connection to zmq4, which then
// skips what was written. libzmq speaks the lower of the two versions: 3.0
// means subscriptions come as messages, 3.1 as SUBSCRIBE commands.
func Greeting(minor byte, mechanism string) [GreetingSize]byte {
	var g [GreetingSize]byte
	g[0] = 0xFF
	g[9] = 0x7F
	g[10] = 3
	g[11] = minor
	copy(g[12:32], mechanism)
	return g
}

// HasSignature reports whether g starts with ZMTP's signature (of any
// version: ZMTP 2's is the same).
func HasSignature(g []byte) bool {
	return len(g) >= 10 && g[0] == 0xFF && g[9] == 0x7F
}

// CheckGreeting validates a peer's whole greeting: ZMTP's signature and
// version 3 or later. The mechanism is the caller's to check.
func CheckGreeting(g []byte) error {
	if len(g) < GreetingSize || !HasSignature(g) {
		return fmt.Errorf("%w: bad signature", ErrNotZMTP)
	}
	if g[10] < 3 {
		return fmt.Errorf("%w: version %d.%d", ErrNotZMTP, g[10], g[11])
	}
	return nil
}

// Mechanism reads the mechanism name of a greeting of GreetingSize bytes.
func Mechanism(g []byte) string {
	m := g[12:32]
	if i := bytes.IndexByte(m, 0); i >= 0 {
		m = m[:i]
	}
	return string(m)
}
