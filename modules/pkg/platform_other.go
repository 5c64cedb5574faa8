//go:build !linux

package pkg

import (
	"fmt"
	"runtime"
)

// platformErr says why brine's agent manages no packages on this system,
// and what Salt would use there, rather than look for apt or dnf.
func platformErr() error {
	switch runtime.GOOS {
	case "windows":
		return fmt.Errorf("pkg is not supported on Windows by brine's agent: Salt's win_pkg installs from a " +
			"winrepo (software definitions synced with winrepo.update_git_repos), which brine does not have; " +
			"run the installer with cmd.run (msiexec /i …, winget, choco) instead")
	case "darwin":
		return fmt.Errorf("pkg is not supported on macOS by brine's agent (Salt's mac_brew_pkg: Homebrew); " +
			"run brew with cmd.run instead")
	case "freebsd":
		return fmt.Errorf("pkg is not supported on FreeBSD by brine's agent (Salt's pkgng); run pkg(8) with cmd.run instead")
	}
	return fmt.Errorf("pkg is not supported on %s by brine's agent", runtime.GOOS)
}
