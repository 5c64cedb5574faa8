package saltapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brinehq/brine/bus"
)

// TokenBucket is where logins' tokens are kept, so that a token outlives
// a master restart and is good on every master of a cluster (Salt keeps
// them in its token cache, eauth_tokens).
var TokenBucket = bus.BucketConfig{Name: "saltapi_tokens", Description: "salt-api login tokens"}

// Token is one login, as Salt's LoadAuth.mk_token makes it.
type Token struct {
	Token  string  `json:"token"`
	Name   string  `json:"name"`
	EAuth  string  `json:"eauth"`
	Start  float64 `json:"start"`
	Expire float64 `json:"expire"`
	// Perms is the user's permission list at login (the /login reply's
	// perms); every request is checked against it.
	Perms []any `json:"perms"`
}

// expired reports whether t is past its expiry at now.
func (t *Token) expired(now time.Time) bool {
	return float64(now.UnixNano())/1e9 >= t.Expire
}

// errNoToken is a token that is unknown or expired.
var errNoToken = errors.New("token is not valid (unknown or expired)")

// tokens keeps the tokens in a bucket.
type tokens struct {
	kv bus.Bucket

	mu    sync.Mutex
	cache map[string]*Token
}

func newTokens(kv bus.Bucket) *tokens { return &tokens{kv: kv, cache: map[string]*Token{}} }

// mint makes and stores a token for a login.
func (s *tokens) mint(ctx context.Context, name, eauth string, perms []any, life time.Duration) (*Token, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	now := time.Now()
	t := &Token{Token: hex.EncodeToString(b), Name: name, EAuth: eauth, Perms: perms,
		Start: float64(now.UnixNano()) / 1e9, Expire: float64(now.Add(life).UnixNano()) / 1e9}
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	if _, err := s.kv.Create(ctx, t.Token, raw); err != nil {
		return nil, fmt.Errorf("storing the token: %w", err)
	}
	s.mu.Lock()
	s.cache[t.Token] = t
	s.mu.Unlock()
	return t, nil
}

// get returns the live token tok.
func (s *tokens) get(ctx context.Context, tok string) (*Token, error) {
	if _, err := hex.DecodeString(tok); err != nil || tok == "" {
		return nil, errNoToken
	}
	s.mu.Lock()
	t := s.cache[tok]
	s.mu.Unlock()
	if t == nil {
		e, err := s.kv.Get(ctx, tok)
		if errors.Is(err, bus.ErrKeyNotFound) {
			return nil, errNoToken
		}
		if err != nil {
			return nil, err
		}
		t = &Token{}
		if err := json.Unmarshal(e.Value, t); err != nil {
			return nil, errNoToken
		}
		s.mu.Lock()
		s.cache[tok] = t
		s.mu.Unlock()
	}
	if t.expired(time.Now()) {
		s.remove(ctx, tok)
		return nil, errNoToken
	}
	return t, nil
}

// remove forgets tok (logout, expiry).
func (s *tokens) remove(ctx context.Context, tok string) {
	s.mu.Lock()
	delete(s.cache, tok)
	s.mu.Unlock()
	if err := s.kv.Delete(ctx, tok); err != nil && !errors.Is(err, bus.ErrKeyNotFound) {
		return
	}
}
