package saltproto

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// KeyState is what the key store decides for the id and public key an
// _auth carries; it stands in for Salt's pki_dir lookups in
// ReqServerChannel._auth (minions/, minions_pre/, minions_rejected/,
// minions_denied/, autosign and autoreject, max_minions), which the key
// store performs, writing what Salt writes there.
type KeyState int

const (
	// KeyAccepted: the key is accepted (already, or now by auto_accept,
	// autosign_file or autosign_grains) and is the one the minion sent.
	// The minion gets the session key. Event act "accept".
	KeyAccepted KeyState = iota
	// KeyPending: the key is new and now pending, or still pending and
	// the same. ret True; the minion retries. Event act "pend".
	KeyPending
	// KeyRejected: the id is in the rejected keys. ret False; the event
	// has no act.
	KeyRejected
	// KeyAutoRejected: a new or pending key rejected by autoreject_file.
	// ret False; event act "reject".
	KeyAutoRejected
	// KeyDenied: the key differs from the accepted or pending one for the
	// id (it goes to the denied keys). ret False; event act "denied".
	KeyDenied
	// KeyFull: max_minions is reached and the id is not connected.
	// ret "full"; event act "full".
	KeyFull
)

func (s KeyState) String() string {
	switch s {
	case KeyAccepted:
		return "accepted"
	case KeyPending:
		return "pending"
	case KeyRejected:
		return "rejected"
	case KeyAutoRejected:
		return "autorejected"
	case KeyDenied:
		return "denied"
	case KeyFull:
		return "full"
	}
	return fmt.Sprintf("KeyState(%d)", int(s))
}

// AuthLoad is the load of a minion's sign-in, {cmd: _auth, ...}, as
// AsyncAuth.minion_sign_in_payload builds it.
type AuthLoad struct {
	ID string
	// Pub is the minion's minion.pub, verbatim.
	Pub string
	// Token is the minion's random token encrypted (OAEP) to the master's
	// key; absent on a minion's first contact, before it has the
	// master's key.
	Token []byte
	Nonce string
	// AutosignGrains is present when the minion's autosign_grains is
	// set: the grain names and the minion's values.
	AutosignGrains map[string]any
}

// ParseAuthLoad reads a decoded _auth load.
func ParseAuthLoad(load map[string]any) (*AuthLoad, error) {
	if cmd, _ := load["cmd"].(string); cmd != "_auth" {
		return nil, fmt.Errorf("saltproto: not an _auth load (cmd %v)", load["cmd"])
	}
	a := &AuthLoad{}
	var ok bool
	if a.ID, ok = load["id"].(string); !ok {
		return nil, fmt.Errorf("saltproto: _auth id is a %T", load["id"])
	}
	if p, ok := load["pub"]; ok {
		if a.Pub, ok = p.(string); !ok {
			return nil, fmt.Errorf("saltproto: _auth pub is a %T", p)
		}
	}
	if t, ok := load["token"]; ok {
		if a.Token, ok = Bytes(t); !ok {
			return nil, fmt.Errorf("saltproto: _auth token is a %T", t)
		}
	}
	if n, ok := load["nonce"]; ok {
		if a.Nonce, ok = n.(string); !ok {
			return nil, fmt.Errorf("saltproto: _auth nonce is a %T", n)
		}
	}
	if g, ok := load["autosign_grains"]; ok && g != nil {
		if a.AutosignGrains, ok = g.(map[string]any); !ok {
			return nil, fmt.Errorf("saltproto: _auth autosign_grains is a %T", g)
		}
	}
	return a, nil
}

// ValidID is salt.utils.verify.valid_id: an id names a file in the pki
// directories, so it must not be empty, ".", "..", nor hold a slash, a
// backslash or a NUL.
func ValidID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// KeyDecider is the key store's answer for a sign-in with a valid id: it
// records the key as Salt would (pending, denied ...) and says in which
// state the id now is.
type KeyDecider func(*AuthLoad) (KeyState, error)

// Master is the master's side of Salt's authentication: its keys and
// what it tells minions. It is safe for concurrent use.
type Master struct {
	Keys *MasterKeys
	// PublishPort is the publish_port option, told to every minion.
	PublishPort int
	// PubSig is set when master_sign_pubkey is: the signature of
	// master.pub sent as pub_sig, either SignPubkey's or the content of
	// the master_pubkey_signature file.
	PubSig []byte

	mu       sync.Mutex
	sigFor   string
	sigOfAES []byte
}

// AuthResult is the answer to one _auth.
type AuthResult struct {
	// Reply is what the master sends back (Dumps it for the wire).
	Reply Ordered
	// State is the key store's decision; for an invalid id, KeyRejected.
	State KeyState
	// Event is the data of the salt/auth event Salt fires (when
	// auth_events is on), nil where Salt fires none.
	Event map[string]any
}

// Auth answers a minion's _auth as ReqServerChannel._auth does. version
// is the request envelope's "version" (a 3006 minion sends 2: the reply is
// then signed and carries the nonce; an older minion gets the unsigned
// form); aesKey is the current session key string. For an accepted key
// the reply holds pub_key, publish_port, pub_sig (master_sign_pubkey),
// token (the minion's token, decrypted and encrypted back to it, when it
// sent one that decrypts), aes (the session key, OAEP to the minion's
// key), sig (X9.31 over the hex SHA-256 of the session key) and nonce.
// auth_mode >= 2 is not offered: in Salt 3006 it formats bytes into the
// key string and no minion can use it.
func (m *Master) Auth(version int64, load map[string]any, aesKey string, decide KeyDecider) (*AuthResult, error) {
	a, err := ParseAuthLoad(load)
	if err != nil {
		return nil, err
	}
	signed := version > 1
	if signed && a.Nonce == "" {
		// Salt's load["nonce"] raises a KeyError here: no reply at all.
		return nil, errors.New("saltproto: _auth of version 2 without a nonce")
	}
	refuse := func(ret any, state KeyState, ev map[string]any) (*AuthResult, error) {
		var reply Ordered
		if signed {
			reply, err = m.clearSigned(Ordered{{"ret", ret}, {"nonce", a.Nonce}})
			if err != nil {
				return nil, err
			}
		} else {
			reply = Ordered{{"enc", "clear"}, {"load", Ordered{{"ret", ret}}}}
		}
		return &AuthResult{Reply: reply, State: state, Event: ev}, nil
	}
	if !ValidID(a.ID) {
		return refuse(false, KeyRejected, nil)
	}
	state, err := decide(a)
	if err != nil {
		return nil, fmt.Errorf("saltproto: key store: %w", err)
	}
	event := func(result bool, act string) map[string]any {
		ev := map[string]any{"result": result, "id": a.ID, "pub": a.Pub}
		if act != "" {
			ev["act"] = act
		}
		return ev
	}
	switch state {
	case KeyAccepted:
	case KeyPending:
		return refuse(true, state, event(true, "pend"))
	case KeyRejected:
		return refuse(false, state, event(false, ""))
	case KeyAutoRejected:
		return refuse(false, state, event(false, "reject"))
	case KeyDenied:
		return refuse(false, state, event(false, "denied"))
	case KeyFull:
		return refuse("full", state, event(false, "full"))
	default:
		return nil, fmt.Errorf("saltproto: key store: unknown state %v", state)
	}

	pub, err := ParsePublicKey(a.Pub)
	if err != nil {
		// Salt: 'Corrupt public key', ret False and no event.
		return refuse(false, KeyRejected, nil)
	}
	ret := Ordered{{"enc", "pub"}, {"pub_key", m.Keys.Pub}, {"publish_port", m.PublishPort}}
	if m.PubSig != nil {
		ret = append(ret, KV{"pub_sig", m.PubSig})
	}
	if a.Token != nil {
		// A token that does not decrypt is left out, as Salt leaves it
		// out; the minion then refuses the reply itself.
		if tok, err := DecryptOAEP(m.Keys.Key, a.Token); err == nil {
			if ct, err := EncryptOAEP(pub, tok); err == nil {
				ret = append(ret, KV{"token", ct})
			}
		}
	}
	aesCT, err := EncryptOAEP(pub, []byte(aesKey))
	if err != nil {
		// The minion's key is too small for the session key.
		return refuse(false, KeyRejected, nil)
	}
	sig, err := m.aesSig(aesKey)
	if err != nil {
		return nil, err
	}
	ret = append(ret, KV{"aes", aesCT}, KV{"sig", sig})
	ev := event(true, "accept")
	if !signed {
		return &AuthResult{Reply: ret, State: KeyAccepted, Event: ev}, nil
	}
	ret = append(ret, KV{"nonce", a.Nonce})
	reply, err := m.clearSigned(ret)
	if err != nil {
		return nil, err
	}
	return &AuthResult{Reply: reply, State: KeyAccepted, Event: ev}, nil
}

// aesSig is private_encrypt(master key, sha256(aes).hexdigest()). X9.31
// is deterministic, so the signature of a session key is computed once
// per key instead of once per sign-in as Salt does: same bytes, one RSA
// private operation fewer for every minion that signs in.
func (m *Master) aesSig(aesKey string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sigFor == aesKey && m.sigOfAES != nil {
		return m.sigOfAES, nil
	}
	d := sha256.Sum256([]byte(aesKey))
	sig, err := PrivateEncrypt(m.Keys.Key, []byte(hex.EncodeToString(d[:])))
	if err != nil {
		return nil, err
	}
	m.sigFor, m.sigOfAES = aesKey, sig
	return sig, nil
}

// clearSigned is ReqServerChannel._clear_signed: the load packed, and the
// master's signature of exactly those bytes.
func (m *Master) clearSigned(load Ordered) (Ordered, error) {
	b, err := Dumps(load)
	if err != nil {
		return nil, err
	}
	sig, err := SignMessage(m.Keys.Key, b)
	if err != nil {
		return nil, err
	}
	return Ordered{{"enc", "clear"}, {"load", b}, {"sig", sig}}, nil
}

// VerifyMinionToken is AESFuncs.__verify_minion without the key lookup:
// a minion's "tok" (its private_encrypt of "salt") checked with its
// accepted public key. Loads that speak for a minion (_minion_event,
// _return ... and the publish channel's presence) carry it.
func VerifyMinionToken(pub *rsa.PublicKey, tok []byte) bool {
	b, err := PublicDecrypt(pub, tok)
	return err == nil && string(b) == "salt"
}
