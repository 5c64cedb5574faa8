package saltproto

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"
)

// Request is one message a minion sent to the request port (4506), after
// ReqServerChannel.handle_message's checks: {"enc": "clear"|"aes",
// "load": ..., "version": 2}, an "aes" load decrypted.
type Request struct {
	// Enc is "clear" (the _auth, and the few clear commands) or "aes".
	Enc string
	// Load is the decrypted load: its "cmd" names the master function
	// (_auth in clear; _return, _pillar, _minion_event, _file_list,
	// _serve_file, _mine, ... under aes).
	Load map[string]any
	// Version is the envelope's version (2 for 3006 minions, 0 when
	// absent); above 1 the replies are signed and nonced.
	Version int64
	// Nonce is the load's "nonce", removed from Load for an aes load of
	// version 2 (as Salt pops it): the reply must carry it (Reply).
	Nonce string
}

// ID is the load's "id" ("" when there is none). For an aes load it is
// only a claim: the master functions check it against the minion's "tok"
// or the key it authenticated with, as Salt's do.
func (r *Request) ID() string {
	id, _ := r.Load["id"].(string)
	return id
}

// Cmd is the load's "cmd".
func (r *Request) Cmd() string {
	cmd, _ := r.Load["cmd"].(string)
	return cmd
}

// IsAuth is a clear _auth, which Salt answers before anything else looks
// at the load (Master.Auth).
func (r *Request) IsAuth() bool { return r.Enc == "clear" && r.Cmd() == "_auth" }

// DecodeRequest reads one request frame as ReqServerChannel.handle_message
// does: a mapping with enc and load; an aes load decrypted with c (an
// ErrAuthentication may mean the minion holds a key rotated away: Salt
// retries once with the fresh key, then answers "bad load"); the load a
// mapping; its id a string without NUL. Salt answers each refusal with a
// clear string; the error says which.
func DecodeRequest(frame []byte, c *Crypticle) (*Request, error) {
	p, err := LoadsMap(frame)
	if err != nil {
		return nil, err
	}
	enc, ok := p["enc"].(string)
	if !ok {
		return nil, fmt.Errorf("%w: bad load received on socket", ErrPayload)
	}
	raw, ok := p["load"]
	if !ok {
		return nil, fmt.Errorf("%w: bad load received on socket", ErrPayload)
	}
	r := &Request{Enc: enc}
	switch v := p["version"].(type) {
	case nil:
	case int64:
		r.Version = v
	default:
		return nil, fmt.Errorf("%w: version is a %T", ErrPayload, v)
	}
	if enc == "aes" {
		b, ok := Bytes(raw)
		if !ok {
			return nil, fmt.Errorf("%w: aes load is a %T", ErrPayload, raw)
		}
		if raw, err = c.Loads(b, ""); err != nil {
			return nil, err
		}
	}
	if r.Load, ok = raw.(map[string]any); !ok {
		return nil, errors.New("saltproto: payload and load must be a dict")
	}
	if id, ok := r.Load["id"]; ok {
		s, ok := id.(string)
		if !ok {
			return nil, fmt.Errorf("saltproto: bad load: id %v is not a string", id)
		}
		if strings.Contains(s, "\x00") {
			return nil, errors.New("saltproto: bad load: id contains a null byte")
		}
	}
	if r.Version > 1 && !r.IsAuth() {
		if n, ok := r.Load["nonce"]; ok {
			delete(r.Load, "nonce")
			if r.Nonce, ok = n.(string); !ok {
				return nil, fmt.Errorf("saltproto: bad load: nonce is a %T", n)
			}
		}
	}
	return r, nil
}

// Reply is the frame of the answer to an aes request, Salt's "send":
// crypticle.dumps(ret, nonce), packed. (A "send_clear" answer is
// Dumps(ret); a "send_private" one Dumps of EncryptPrivate.)
func (r *Request) Reply(c *Crypticle, ret any) ([]byte, error) {
	enc, err := c.Dumps(ret, r.Nonce)
	if err != nil {
		return nil, err
	}
	return Dumps(enc)
}

// EncryptPrivate is ReqServerChannel._encrypt_private, how _pillar
// answers: ret encrypted with a fresh session key that only the target
// minion's RSA key can open, signed with the master's key and bound to
// the request nonce when the request is of version 2 (sign). dictKey is
// the field ("pillar") the minion reads; the signed mapping always names
// the data "pillar", as in Salt. A ret of false is sent as {}.
func EncryptPrivate(ret any, dictKey string, minionPub *rsa.PublicKey, nonce string, sign bool, master *rsa.PrivateKey) (Ordered, error) {
	key, err := GenerateKeyString()
	if err != nil {
		return nil, err
	}
	pcrypt, err := NewCrypticle(key)
	if err != nil {
		return nil, err
	}
	ek, err := EncryptOAEP(minionPub, []byte(key))
	if err != nil {
		return nil, err
	}
	if b, ok := ret.(bool); ok && !b {
		ret = map[string]any{}
	}
	pret := Ordered{{"key", ek}}
	var body []byte
	if sign {
		if nonce == "" {
			return Ordered{{"error", "Nonce not included in request"}}, nil
		}
		tosign, err := Dumps(Ordered{{"key", ek}, {"pillar", ret}, {"nonce", nonce}})
		if err != nil {
			return nil, err
		}
		sig, err := SignMessage(master, tosign)
		if err != nil {
			return nil, err
		}
		body, err = pcrypt.Dumps(Ordered{{"data", tosign}, {"sig", sig}}, "")
		if err != nil {
			return nil, err
		}
	} else {
		body, err = pcrypt.Dumps(ret, "")
		if err != nil {
			return nil, err
		}
	}
	return append(pret, KV{dictKey, body}), nil
}
