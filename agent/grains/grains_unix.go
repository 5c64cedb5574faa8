//go:build !windows

package grains

import (
	"os"
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
