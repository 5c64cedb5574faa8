package master

import (
	"context"
	"path/filepath"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/drivers"
	"github.com/brinehq/brine/deploy"
	"github.com/brinehq/brine/keys"
)

// startCloud prepares the cloud runner functions (cloud.profile,
// cloud.destroy, cloud.list), so that reactions and `brine run` can create
// and destroy VMs; the cloud files are read at each call.
func (m *Master) startCloud(context.Context) error {
	dir := cloud.ConfigDir(m.opts.ConfigPath)
	d, err := deploy.New(deploy.Config{
		DataDir:    m.cfg.Settings.DataDir,
		ScriptDirs: []string{filepath.Join(dir, "cloud.deploy.d")},
		Log:        m.component("deploy"),
	})
	if err != nil {
		return err
	}
	m.cloud = &cloud.Functions{
		Load:      func() (*cloud.Config, error) { return cloud.LoadConfig(dir) },
		Openers:   drivers.Openers,
		Publisher: cloud.BusPublisher{Bus: m.bus, Source: m.source + "/cloud"},
		Deployer:  d,
		Keys:      cloudKeys{m.keys},
		Log:       m.component("cloud"),
	}
	return nil
}

// cloudKeys deletes the agent key of a VM the cloud runner functions
// destroyed, as salt-cloud -d does.
type cloudKeys struct{ store *keys.Store }

func (k cloudKeys) DeleteKey(ctx context.Context, id string) error {
	sel, err := keys.Everywhere(id)
	if err != nil {
		return err
	}
	_, err = k.store.DeleteDict(ctx, sel)
	return err
}
