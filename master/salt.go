package master

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/keys"
	"github.com/brinehq/brine/saltmaster"
	"github.com/brinehq/brine/saltproto"
)

// SaltTransportKeys are the master configuration keys of Salt's own
// transport, which serves unmodified salt-minions on the gateway's ports
// (saltmaster): salt_transport turns it off; the others are Salt's
// options of the same names and defaults.
var SaltTransportKeys = []string{"salt_transport", "sign_pub_messages", "zmq_filtering", "rotate_aes_key", "keysize",
	"master_sign_pubkey", "master_sign_key_name", "file_buffer_size"}

// saltSettings are SaltTransportKeys' values.
type saltSettings struct {
	On               bool
	SignPubMessages  bool
	ZMQFiltering     bool
	RotateAESKey     bool
	KeySize          int
	MasterSignPubkey bool
	SignKeyName      string
	FileBufferSize   int
}

// readSaltSettings reads SaltTransportKeys with Salt's defaults.
func readSaltSettings(c *config.Master) (saltSettings, error) {
	s := saltSettings{On: true, SignPubMessages: true, RotateAESKey: true, KeySize: saltproto.DefaultKeySize,
		SignKeyName: "master_sign", FileBufferSize: 1 << 20}
	for key, out := range map[string]any{
		"salt_transport": &s.On, "sign_pub_messages": &s.SignPubMessages, "zmq_filtering": &s.ZMQFiltering,
		"rotate_aes_key": &s.RotateAESKey, "keysize": &s.KeySize, "master_sign_pubkey": &s.MasterSignPubkey,
		"master_sign_key_name": &s.SignKeyName, "file_buffer_size": &s.FileBufferSize,
	} {
		if err := c.Decode(key, out); err != nil {
			return s, err
		}
	}
	if s.KeySize < 2048 {
		return s, fmt.Errorf("%s: keysize: %d bits is too small for Salt's session key (2048 at least)", c.Where("keysize"), s.KeySize)
	}
	if s.FileBufferSize <= 0 {
		return s, fmt.Errorf("%s: file_buffer_size: want a positive number of bytes", c.Where("file_buffer_size"))
	}
	return s, nil
}

// newSaltTransport makes the transport of unmodified salt-minions, or nil
// when salt_transport is off. The master's RSA keys are Salt's files,
// master.pem and master.pub, beside its key_file: a Salt master's may be
// copied there, so that its minions keep the master key they cached.
func (m *Master) newSaltTransport() (*saltmaster.Transport, error) {
	s, err := readSaltSettings(m.cfg)
	if err != nil || !s.On {
		return nil, err
	}
	dir := filepath.Dir(m.cfg.Settings.KeyFile)
	mk, err := saltproto.LoadOrCreateMasterKeys(dir, s.KeySize)
	if err != nil {
		return nil, fmt.Errorf("the master's RSA key (salt_transport): %w", err)
	}
	var pubSig []byte
	if s.MasterSignPubkey {
		sign, _, err := saltproto.LoadOrCreateKeyPair(dir, s.SignKeyName, s.KeySize)
		if err != nil {
			return nil, fmt.Errorf("master_sign_pubkey: %w", err)
		}
		if pubSig, err = saltproto.SignPubkey(sign, mk.Pub); err != nil {
			return nil, fmt.Errorf("master_sign_pubkey: %w", err)
		}
	}
	m.saltPub = mk.Pub
	return saltmaster.New(saltmaster.Config{
		Keys: mk, PublishPort: m.cfg.Settings.PublishPort, PubSig: pubSig,
		SignPubMessages: s.SignPubMessages, ZMQFiltering: s.ZMQFiltering, RotateAESKey: s.RotateAESKey,
		Normalize: keys.NormalizePub, FileBufferSize: s.FileBufferSize, MasterOpts: saltMasterOpts(m.cfg),
		IsPending: func(err error) bool { return errors.Is(err, keys.ErrTooManyPending) },
		StateFile: filepath.Join(dir, "salt-sessions.json"),
		Log:       m.log,
	})
}

// saltMasterOpts are the options a minion's highstate asks its master for
// (_master_opts): Salt's defaults, or the configuration's values.
func saltMasterOpts(c *config.Master) map[string]any {
	o := map[string]any{
		"top_file_merging_strategy": "merge", "env_order": []any{}, "default_top": "base",
		"renderer": "jinja|yaml", "failhard": false, "state_top": "salt://top.sls", "state_top_saltenv": nil,
		"nodegroups": map[string]any{}, "state_auto_order": true, "state_events": false, "state_aggregate": false,
		"jinja_env": map[string]any{}, "jinja_sls_env": map[string]any{}, "jinja_lstrip_blocks": false,
		"jinja_trim_blocks": false,
	}
	for k, def := range o {
		v := def
		if err := c.Decode(k, &v); err == nil && v != nil {
			o[k] = v
		}
	}
	// apply_master_config makes state_top a salt:// URL.
	if top, ok := o["state_top"].(string); ok && top != "" && !strings.Contains(top, "://") {
		o["state_top"] = "salt://" + top
	}
	return o
}
