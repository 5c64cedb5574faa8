//go:build !windows

package grains

import (
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// platform sets the grains of a Unix system: os-release and lsb_release,
// uname, memory, names, addresses, machine id, virtualisation and the
// rest of Salt's core grains.
func (c Collector) platform(g map[string]any) {
	osRel := c.osRelease(g)
	c.lsbDistrib(g, osRel)
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		g["kernelrelease"] = unix.ByteSliceToString(uts.Release[:])
		g["kernelversion"] = unix.ByteSliceToString(uts.Version[:])
		g["cpuarch"] = unix.ByteSliceToString(uts.Machine[:])
	}
	c.bsdOS(g)
	if mem, ok := c.memTotal(); ok {
		g["mem_total"] = mem
	}
	c.names(g)
	c.addresses(g)
	if b, err := os.ReadFile(c.Root + "/etc/machine-id"); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			g["machine_id"] = id
		}
	}
	g["virtual"] = c.virtual()
	c.more(g)
}

// bsdOS sets os, os_family and osrelease where there is no os-release
// file, as Salt's os_data does from the kernel: macOS ("MacOS", its
// release from sw_vers) and FreeBSD (its release without -RELEASE).
// Linux keeps what os-release said.
func (c Collector) bsdOS(g map[string]any) {
	switch runtime.GOOS {
	case "darwin":
		g["os"], g["os_family"] = "MacOS", "MacOS"
		if out, err := c.output("sw_vers", "-productVersion"); err == nil && strings.TrimSpace(out) != "" {
			g["osrelease"] = strings.TrimSpace(out)
			g["osfullname"] = "macOS"
		}
	case "freebsd":
		g["os"], g["os_family"], g["osfullname"] = "FreeBSD", "FreeBSD", "FreeBSD"
		if rel, ok := g["kernelrelease"].(string); ok && rel != "" {
			g["osrelease"], _, _ = strings.Cut(rel, "-")
		}
	}
}
