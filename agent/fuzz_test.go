package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadConfig feeds arbitrary minion files to the loader: it must
// return a configuration or an error naming the file, never panic.
func FuzzLoadConfig(f *testing.F) {
	for _, seed := range []string{
		"master: salt\nid: web01\n",
		"master: [a, b]\nmine_functions:\n  network.ip_addrs: [eth0]\n  alias: {mine_function: grains.get, key: os}\n",
		"grains:\n  roles: [web, db]\nacceptance_wait_time: 5\n",
		"mine_functions: [1, 2]\n",
		"master: {a: b}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "minion")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(dir)
		if err != nil {
			if !strings.Contains(err.Error(), "minion") && !strings.Contains(err.Error(), "master") {
				t.Fatalf("error names no file or key: %v", err)
			}
			return
		}
		if len(cfg.Master) == 0 || cfg.MasterPort < 1 {
			t.Fatalf("accepted an invalid configuration: %+v", cfg.Config)
		}
	})
}
