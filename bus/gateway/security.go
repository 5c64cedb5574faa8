package gateway

import (
	"errors"

	"github.com/brinehq/brine/bus/gateway/curve"
)

// ErrAuth reports that the other side does not hold the same key. Errors a
// Client returns for a refused key match it with errors.Is.
var ErrAuth = errors.New("authentication failed")

// Labels of the key pairs derived from the shared key.
const (
	masterLabel   = "brine master"
	operatorLabel = "brine operator"
)

// MasterKeys is the master's long-term CURVE key pair derived from the
// shared key: what the gateway serves with and what agents pin.
func MasterKeys(key []byte) curve.KeyPair { return curve.Derive(key, masterLabel) }

// OperatorKeys is the key pair of clients holding the shared key (the CLI,
// scripts): the master admits it to its methods and its event stream.
func OperatorKeys(key []byte) curve.KeyPair { return curve.Derive(key, operatorLabel) }
