package agent

import (
	"os"
	"path/filepath"
)

// programData is where Windows services keep their data (%ProgramData%),
// where Salt's Windows minion keeps its root_dir (C:\ProgramData\Salt
// Project\Salt).
func programData() string {
	if d := os.Getenv("ProgramData"); d != "" {
		return d
	}
	return `C:\ProgramData`
}

// DefaultConfigDir is where the agent looks for `minion` and `minion.d/`:
// C:\ProgramData\brine\conf, as Salt's C:\ProgramData\Salt Project\Salt\conf.
var DefaultConfigDir = filepath.Join(programData(), "brine", "conf")

// DefaultCacheDir is the agent's cache directory, as Salt's
// <root_dir>\var\cache\salt\minion: C:\ProgramData\brine\var\cache\minion.
var DefaultCacheDir = filepath.Join(programData(), "brine", "var", "cache", "minion")
