package saltproto

import (
	"crypto/rsa"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
)

// Serial is SMaster.get_serial: the counter every publish carries so
// that minions drop replays. It starts again at 0 with each new session
// key (a minion's Crypticle for a new key starts at 0 too). It is safe
// for concurrent use.
type Serial struct {
	mu sync.Mutex
	n  int64
}

// Next is the next serial. At MaxInt64, where Salt rotates the session
// key, it reports exhausted instead: the caller rotates and Resets.
func (s *Serial) Next() (n int64, exhausted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == math.MaxInt64 {
		return 0, true
	}
	s.n++
	return s.n, false
}

// ResetTo makes the next serial n+1: a master that keeps its session key
// across a restart goes on above every serial it sent before (minions
// drop a serial not above the last they saw).
func (s *Serial) ResetTo(n int64) {
	s.mu.Lock()
	s.n = n
	s.mu.Unlock()
}

// Reset starts the count again, for a new session key.
func (s *Serial) Reset() {
	s.mu.Lock()
	s.n = 0
	s.mu.Unlock()
}

// WrapPublish is PubServerChannel.wrap_payload's payload: the load with
// its serial added, encrypted with the session Crypticle, signed with the
// master's key when sign_pub_messages is on (signKey non-nil; Salt's
// default), packed: {"enc": "aes", "load": ..., "sig": ...}. load is an
// Ordered or a map[string]any (the job: tgt, tgt_type, jid, fun, arg,
// ret, user ...).
func WrapPublish(c *Crypticle, load any, serial int64, signKey *rsa.PrivateKey) ([]byte, error) {
	var withSerial any
	switch l := load.(type) {
	case Ordered:
		o := make(Ordered, 0, len(l)+1)
		for _, kv := range l {
			if kv.Key != "serial" {
				o = append(o, kv)
			}
		}
		withSerial = append(o, KV{"serial", serial})
	case map[string]any:
		m := make(map[string]any, len(l)+1)
		for k, v := range l {
			m[k] = v
		}
		m["serial"] = serial
		withSerial = m
	default:
		return nil, fmt.Errorf("saltproto: a publish load is a mapping, not a %T", load)
	}
	enc, err := c.Dumps(withSerial, "")
	if err != nil {
		return nil, err
	}
	payload := Ordered{{"enc", "aes"}, {"load", enc}}
	if signKey != nil {
		sig, err := SignMessage(signKey, enc)
		if err != nil {
			return nil, err
		}
		payload = append(payload, KV{"sig", sig})
	}
	return Dumps(payload)
}

// Topic is the ZeroMQ topic of a minion with zmq_filtering: the hex SHA-1
// of its id (zmq filters match prefixes, so ids are hashed to keep one
// from matching another's).
func Topic(id string) string {
	d := sha1.Sum([]byte(id))
	return hex.EncodeToString(d[:])
}

// PublishFrames is the ZeroMQ messages PublishServer.publish_payload
// sends for one packed payload: a single frame without zmq_filtering;
// with it, [Topic(id), payload] for each targeted id (topics is the
// wrap_payload topic list, the minions a glob, pcre or list target
// matches), plus ["syndic", payload] under order_masters, or
// ["broadcast", payload] when there is no topic list.
func PublishFrames(payload []byte, zmqFiltering bool, topics []string, orderMasters bool) [][][]byte {
	if !zmqFiltering {
		return [][][]byte{{payload}}
	}
	if len(topics) == 0 {
		return [][][]byte{{[]byte("broadcast"), payload}}
	}
	msgs := make([][][]byte, 0, len(topics)+1)
	for _, t := range topics {
		msgs = append(msgs, [][]byte{[]byte(Topic(t)), payload})
	}
	if orderMasters {
		msgs = append(msgs, [][]byte{[]byte("syndic"), payload})
	}
	return msgs
}

// ErrNotForMe is a filtered publish addressed to other minions.
var ErrNotForMe = errors.New("saltproto: publish received for not this minion")

// DecodePublish is the minion's side of a publish (PublishClient.
// _decode_messages and AsyncPubChannel._decode_payload): the target
// frame checked against the id, the signature checked with the master's
// key when the minion has sign_pub_messages on (a payload without one is
// then refused), the load decrypted with the minion's Crypticle, whose
// serial rule drops replays.
func DecodePublish(frames [][]byte, minionID string, c *Crypticle, masterPub *rsa.PublicKey, signPubMessages bool) (map[string]any, error) {
	var packed []byte
	switch len(frames) {
	case 1:
		packed = frames[0]
	case 2:
		if t := string(frames[0]); t != "broadcast" && t != Topic(minionID) {
			return nil, ErrNotForMe
		}
		packed = frames[1]
	default:
		return nil, fmt.Errorf("saltproto: invalid number of messages (%d) in zeromq pubmessage from master", len(frames))
	}
	p, err := LoadsMap(packed)
	if err != nil {
		return nil, err
	}
	if p["enc"] != "aes" {
		return nil, fmt.Errorf("saltproto: publish enc %v, not aes", p["enc"])
	}
	load, ok := Bytes(p["load"])
	if !ok {
		return nil, fmt.Errorf("saltproto: publish load is a %T", p["load"])
	}
	if signPubMessages {
		sig, _ := Bytes(p["sig"])
		if len(sig) == 0 {
			return nil, fmt.Errorf("%w: message signing is enabled but the payload has no signature", ErrAuthentication)
		}
		if !VerifySignature(masterPub, load, sig) {
			return nil, fmt.Errorf("%w: message signature failed to validate", ErrAuthentication)
		}
	}
	v, err := c.Loads(load, "")
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("saltproto: publish load is a %T", v)
	}
	return m, nil
}
