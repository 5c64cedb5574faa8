package master

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/keys"
)

// startKeys opens the agent keys' bucket, once, and applies the key
// options: a policy file that is missing or unsafe stops the master here,
// naming the option's file and line.
func (m *Master) startKeys(ctx context.Context) error {
	kv, err := m.bus.Bucket(ctx, keys.BucketConfig)
	if err != nil {
		return err
	}
	m.keys = keys.New(kv, m.emitter("keys"), keys.WithLogger(m.component("keys")), keys.WithLocal(keys.LocalRSA, m.saltPub))
	return m.reloadKeys(m.cfg)
}

// reloadKeys applies the key options of a configuration; on an error the
// policy in force stays.
func (m *Master) reloadKeys(c *config.Master) error {
	err := m.keys.SetPolicy(m.keyPolicy(c))
	if pe, ok := errors.AsType[*keys.PolicyError](err); ok {
		return fmt.Errorf("%s: %w", c.Where(pe.Key), err)
	}
	return err
}

// keyPolicy is the key policy of c, its relative paths taken from the
// configuration directory (as the cloud files are).
func (m *Master) keyPolicy(c *config.Master) keys.Policy {
	dir := cloud.ConfigDir(m.opts.ConfigPath)
	path := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	s := c.Settings
	return keys.Policy{
		AutoAccept:        s.AutoAccept,
		AutosignFile:      path(s.AutosignFile),
		AutorejectFile:    path(s.AutorejectFile),
		AutosignGrainsDir: path(s.AutosignGrainsDir),
		AuthEvents:        s.AuthEvents,
		MaxPending:        s.MaxPendingKeys,
	}
}
