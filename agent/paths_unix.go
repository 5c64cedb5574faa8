//go:build !windows

package agent

// DefaultConfigDir is where the agent looks for `minion` and `minion.d/`,
// as Salt's /etc/salt.
const DefaultConfigDir = "/etc/brine"

// DefaultCacheDir is the agent's cache directory, as Salt's
// /var/cache/salt/minion.
const DefaultCacheDir = "/var/cache/brine/minion"
