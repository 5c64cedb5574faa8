package saltproto

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The minion's side of the sign-in, as salt.crypt.AsyncAuth does it: the
// tests check the master's replies with it, and the protocol-level bench
// fleet signs in with it.

// Outcomes of a sign-in that did not yield a session key (Salt's
// handle_signin_response returns "retry" or "full", or exits).
var (
	ErrPending  = errors.New("saltproto: the master has cached the public key for this node (pending)")
	ErrRejected = errors.New("saltproto: the master has rejected this minion's public key")
	ErrFull     = errors.New("saltproto: the master is full (max_minions)")
)

// SignIn is one sign-in of a minion: the load to send and what checking
// the reply needs.
type SignIn struct {
	Load  Ordered
	Token []byte
	Nonce string
}

// NewSignIn is AsyncAuth.minion_sign_in_payload: cmd, id, a fresh nonce,
// the token (a random key string, encrypted to the master's key, when the
// minion already has that key: masterPub non-nil) and the minion's public
// key text. Send it as {"enc": "clear", "load": Load, "version": 2}.
func NewSignIn(id, minionPub string, masterPub *rsa.PublicKey) (*SignIn, error) {
	tok, err := GenerateKeyString()
	if err != nil {
		return nil, err
	}
	nb := make([]byte, NonceSize/2)
	if _, err := rand.Read(nb); err != nil {
		return nil, fmt.Errorf("saltproto: nonce: %w", err)
	}
	s := &SignIn{Token: []byte(tok), Nonce: hex.EncodeToString(nb)}
	s.Load = Ordered{{"cmd", "_auth"}, {"id", id}, {"nonce", s.Nonce}}
	if masterPub != nil {
		ct, err := EncryptOAEP(masterPub, s.Token)
		if err != nil {
			return nil, err
		}
		s.Load = append(s.Load, KV{"token", ct})
	}
	s.Load = append(s.Load, KV{"pub", minionPub})
	return s, nil
}

// Creds is a successful sign-in: the session key and the publish port.
type Creds struct {
	AES         string
	PublishPort int64
	// MasterPub is the master's pub_key as received (what the minion
	// stores as minion_master.pub on first contact).
	MasterPub string
}

// HandleReply is AsyncAuth.handle_signin_response with its defaults
// (open_mode, verify_master_pubkey_sign and always_verify_signature off,
// rejected_retry on): knownMasterPub is minion_master.pub ("" on first
// contact, when the reply's pub_key is taken and then used to check the
// signatures); masterFinger, when set, must be its Fingerprint.
func (s *SignIn) HandleReply(reply map[string]any, minionKey *rsa.PrivateKey, knownMasterPub, masterFinger string) (*Creds, error) {
	clearLoad, ok := Bytes(reply["load"])
	if !ok {
		return nil, fmt.Errorf("saltproto: sign-in attempt failed: %v", reply)
	}
	clearSig, ok := Bytes(reply["sig"])
	if !ok {
		// A 3006 minion reads payload["sig"] unconditionally.
		return nil, errors.New("saltproto: sign-in reply without a signature")
	}
	p, err := LoadsMap(clearLoad)
	if err != nil {
		return nil, err
	}
	masterPubText := knownMasterPub
	var aesKey string
	if pk, ok := p["pub_key"].(string); ok {
		strip := strings.NewReplacer("\n", "", "\r", "")
		if knownMasterPub != "" && strip.Replace(pk) != strip.Replace(knownMasterPub) {
			return nil, errors.New("saltproto: the master key has changed")
		}
		if knownMasterPub == "" {
			masterPubText = pk
		}
		mpub, err := ParsePublicKey(masterPubText)
		if err != nil {
			return nil, err
		}
		if aesKey, err = s.extractAES(p, minionKey, mpub, knownMasterPub != ""); err != nil {
			return nil, err
		}
	}
	if masterPubText != "" {
		mpub, err := ParsePublicKey(masterPubText)
		if err != nil {
			return nil, err
		}
		if !VerifySignature(mpub, clearLoad, clearSig) {
			return nil, errors.New("saltproto: the payload signature did not validate")
		}
	}
	if n, _ := p["nonce"].(string); n != s.Nonce {
		return nil, errors.New("saltproto: the payload nonce did not validate")
	}
	if ret, ok := p["ret"]; ok {
		switch ret {
		case false, nil, "", int64(0):
			return nil, ErrRejected
		case "full":
			return nil, ErrFull
		}
		return nil, ErrPending
	}
	if masterFinger != "" {
		f, err := Fingerprint([]byte(masterPubText), "sha256")
		if err != nil {
			return nil, err
		}
		if f != masterFinger {
			return nil, fmt.Errorf("saltproto: master_finger %s does not match the master's key %s", masterFinger, f)
		}
	}
	port, ok := p["publish_port"].(int64)
	if !ok {
		return nil, fmt.Errorf("saltproto: publish_port is a %T", p["publish_port"])
	}
	return &Creds{AES: aesKey, PublishPort: port, MasterPub: masterPubText}, nil
}

// extractAES is AsyncAuth.decrypt_aes and extract_aes: the session key
// decrypted, its "sig" checked, and the token compared with the one sent
// when the minion sent one (sentToken).
func (s *SignIn) extractAES(p map[string]any, minionKey *rsa.PrivateKey, mpub *rsa.PublicKey, sentToken bool) (string, error) {
	ct, ok := Bytes(p["aes"])
	if !ok {
		return "", errors.New("saltproto: reply without aes")
	}
	keyStr, err := DecryptOAEP(minionKey, ct)
	if err != nil {
		return "", err
	}
	sig, ok := Bytes(p["sig"])
	if !ok {
		return "", errors.New("saltproto: the Salt Master server's public key did not authenticate (no sig)")
	}
	d := sha256.Sum256(keyStr)
	got, err := PublicDecrypt(mpub, sig)
	if err != nil || !bytes.Equal(got, []byte(hex.EncodeToString(d[:]))) {
		return "", errors.New("saltproto: the session key's signature did not verify")
	}
	if !sentToken {
		return string(keyStr), nil
	}
	tct, ok := Bytes(p["token"])
	if !ok {
		return "", errors.New("saltproto: the master failed to decrypt the random minion token")
	}
	tok, err := DecryptOAEP(minionKey, tct)
	if err != nil || !bytes.Equal(tok, s.Token) {
		return "", errors.New("saltproto: the master failed to decrypt the random minion token")
	}
	return string(keyStr), nil
}

// DecryptPrivate is the minion's side of EncryptPrivate
// (AsyncReqChannel.crypted_transfer_decode_dictentry): the per-request key
// opened with the minion's key, the master's signature, the key and the
// nonce checked, the data returned.
func DecryptPrivate(reply map[string]any, dictKey string, minionKey *rsa.PrivateKey, masterPub *rsa.PublicKey, nonce string) (any, error) {
	ek, ok := Bytes(reply["key"])
	if !ok {
		return nil, errors.New("saltproto: private reply without key")
	}
	key, err := DecryptOAEP(minionKey, ek)
	if err != nil {
		return nil, err
	}
	pcrypt, err := NewCrypticle(string(key))
	if err != nil {
		return nil, err
	}
	body, ok := Bytes(reply[dictKey])
	if !ok {
		return nil, fmt.Errorf("saltproto: private reply without %s", dictKey)
	}
	v, err := pcrypt.Loads(body, "")
	if err != nil {
		return nil, err
	}
	signed, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("saltproto: private reply is a %T", v)
	}
	data, _ := Bytes(signed["data"])
	sig, _ := Bytes(signed["sig"])
	if !VerifySignature(masterPub, data, sig) {
		return nil, fmt.Errorf("%w: pillar payload signature failed to validate", ErrAuthentication)
	}
	d, err := LoadsMap(data)
	if err != nil {
		return nil, err
	}
	dk, _ := Bytes(d["key"])
	if !bytes.Equal(dk, ek) {
		return nil, fmt.Errorf("%w: key verification failed", ErrAuthentication)
	}
	if n, _ := d["nonce"].(string); n != nonce {
		return nil, fmt.Errorf("%w: pillar nonce verification failed", ErrAuthentication)
	}
	return d["pillar"], nil
}

// Frame is the sign-in as the minion sends it on the request port:
// {"enc": "clear", "load": Load, "version": 2}, packed.
func (s *SignIn) Frame() ([]byte, error) {
	return Dumps(Ordered{{"enc", "clear"}, {"load", s.Load}, {"version", int64(2)}})
}

// AESRequest is AsyncReqChannel.send of an aes load, as a 3006 minion
// sends it: a fresh nonce (uuid4().hex) added to the load, the load
// encrypted with the session Crypticle, {"enc": "aes", "load": ...,
// "version": 2} packed. OpenReply reads the answer with the nonce.
func AESRequest(c *Crypticle, load Ordered) (frame []byte, nonce string, err error) {
	nb := make([]byte, NonceSize/2)
	if _, err := rand.Read(nb); err != nil {
		return nil, "", fmt.Errorf("saltproto: nonce: %w", err)
	}
	nonce = hex.EncodeToString(nb)
	enc, err := c.Dumps(append(load[:len(load):len(load)], KV{"nonce", nonce}), "")
	if err != nil {
		return nil, "", err
	}
	frame, err = Dumps(Ordered{{"enc", "aes"}, {"load", enc}, {"version", int64(2)}})
	return frame, nonce, err
}

// OpenReply is the minion's reading of the answer to an AESRequest: the
// master's "send" decrypted and its nonce checked. A clear answer (Salt's
// "bad load", which a minion meets as an undecryptable reply and answers
// by signing in again) is an ErrAuthentication naming it.
func OpenReply(c *Crypticle, reply []byte, nonce string) (any, error) {
	v, err := Loads(reply)
	if err != nil {
		return nil, err
	}
	data, ok := Bytes(v)
	if !ok {
		return nil, fmt.Errorf("%w: the master answered %v", ErrAuthentication, v)
	}
	return c.Loads(data, nonce)
}
