package grains

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// lsbLine is Salt's _LSB_REGEX: the lines of /etc/lsb-release it keeps.
var lsbLine = regexp.MustCompile(`^(DISTRIB_(?:ID|RELEASE|CODENAME|DESCRIPTION))=(?:'|")?([\w\s.\-_]+)(?:'|")?`)

// lsbDistrib sets the lsb_distrib_* grains as a Salt minion does when
// Python's lsb_release module is not importable (Salt's own onedir Python
// never has it): from /etc/lsb-release, else from os-release's NAME,
// VERSION_ID and VERSION_CODENAME (PRETTY_NAME when there is no codename).
// lsb_distrib_description therefore only comes from /etc/lsb-release.
func (c Collector) lsbDistrib(g map[string]any, osRelease map[string]string) {
	if b, err := os.ReadFile(c.Root + "/etc/lsb-release"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if m := lsbLine.FindStringSubmatch(sc.Text()); m != nil {
				g["lsb_"+strings.ToLower(m[1])] = strings.TrimRight(m[2], " \t\r\n\v\f")
			}
		}
	}
	if _, ok := g["lsb_distrib_id"]; ok || osRelease == nil {
		return
	}
	if v, ok := osRelease["NAME"]; ok {
		g["lsb_distrib_id"] = strings.TrimSpace(v)
	}
	if v, ok := osRelease["VERSION_ID"]; ok {
		g["lsb_distrib_release"] = v
	}
	if v, ok := osRelease["VERSION_CODENAME"]; ok {
		g["lsb_distrib_codename"] = v
	} else if v, ok := osRelease["PRETTY_NAME"]; ok {
		g["lsb_distrib_codename"] = v
	}
}

// osReleaseData sets osrelease_info, osmajorrelease and osfinger from
// osrelease, as Salt's _osrelease_data: osrelease_info is osrelease split
// at dots with the numeric parts as numbers; osfinger is os (Debian,
// Raspbian and the BSDs) or osfullname, then the major release, or the
// whole release on Ubuntu and Pop.
func osReleaseData(g map[string]any) {
	rel, _ := g["osrelease"].(string)
	if rel == "" {
		return
	}
	parts := strings.Split(rel, ".")
	info := make([]any, len(parts))
	for i, p := range parts {
		info[i] = p
		if isDigits(p) {
			if n, err := strconv.Atoi(p); err == nil {
				info[i] = n
			}
		}
	}
	g["osrelease_info"] = info
	if n, ok := info[0].(int); ok {
		g["osmajorrelease"] = n
	} else {
		delete(g, "osmajorrelease")
	}
	osName, _ := g["os"].(string)
	name := osName
	switch osName {
	case "Debian", "FreeBSD", "OpenBSD", "NetBSD", "Mac", "Raspbian":
	default:
		name, _ = g["osfullname"].(string)
	}
	ver := py.Str(info[0])
	if osName == "Ubuntu" || osName == "Pop" {
		ver = rel
	}
	g["osfinger"] = name + "-" + ver
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// osArch is Salt's osarch grain: the package manager's architecture name
// (dpkg --print-architecture on Debian, rpm's %{_host_cpu} on Red Hat and
// SUSE), else the CPU architecture.
func (c Collector) osArch(family, cpuarch string) string {
	var out string
	var err error
	switch family {
	case "Debian":
		out, err = c.output("dpkg", "--print-architecture")
	case "RedHat", "Suse":
		out, err = c.output("rpm", "--eval", "%{_host_cpu}")
	default:
		return cpuarch
	}
	if out = strings.TrimSpace(out); err != nil || out == "" {
		return cpuarch
	}
	return out
}

// initSystem is Salt's init grain (_linux_init_system): systemd when
// /run/systemd/system exists, else what PID 1's command line names
// (an init binary is searched for the names of the inits it may be).
func (c Collector) initSystem() string {
	if _, err := os.Stat(c.Root + "/run/systemd/system"); err == nil {
		return "systemd"
	}
	b, err := os.ReadFile(c.Root + "/proc/1/cmdline")
	if err != nil {
		return "unknown"
	}
	cmdline := strings.Fields(strings.ReplaceAll(string(b), "\x00", " "))
	if len(cmdline) == 0 {
		return "unknown"
	}
	bin, _ := c.lookPath(cmdline[0])
	has := func(name string) bool {
		p, err := c.lookPath(name)
		if err != nil {
			return false
		}
		for _, a := range cmdline {
			if a == p {
				return true
			}
		}
		return false
	}
	switch {
	case bin != "" && strings.HasSuffix(bin, "bin/init"):
		data, err := os.ReadFile(c.Root + bin)
		if err != nil {
			return "unknown"
		}
		data = bytes.ToLower(data)
		for _, name := range []string{"upstart", "sysvinit", "systemd"} {
			if bytes.Contains(data, []byte(name)) {
				return name
			}
		}
	case has("supervisord"):
		return "supervisord"
	case has("dumb-init"):
		return "dumb-init"
	case has("tini"):
		return "tini"
	case len(cmdline) == 1 && cmdline[0] == "runit":
		return "runit"
	default:
		for _, a := range cmdline {
			if a == "/sbin/my_init" {
				return "runit"
			}
		}
	}
	return "unknown"
}

// ps is Salt's ps grain, the command that lists processes.
func ps(g map[string]any) string {
	switch g["os"] {
	case "FreeBSD", "NetBSD", "OpenBSD", "MacOS":
		return "ps auxwww"
	}
	if g["os_family"] == "Solaris" {
		return "/usr/ucb/ps auxwww"
	}
	return "ps -efHww"
}

// systemd is Salt's systemd grain, from systemctl --version, set when
// both systemctl and localectl are installed (whether or not systemd
// runs).
func (c Collector) systemd(g map[string]any) {
	if _, err := c.lookPath("systemctl"); err != nil {
		return
	}
	if _, err := c.lookPath("localectl"); err != nil {
		return
	}
	out, err := c.output("systemctl", "--version")
	lines := strings.Split(out, "\n")
	if err != nil || len(lines) < 2 {
		return
	}
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		return
	}
	g["systemd"] = map[string]any{"version": f[1], "features": lines[1]}
}

// selinux is Salt's selinux grain, set when selinuxenabled is installed:
// whether SELinux is enabled, and getenforce's mode when that is installed
// too.
func (c Collector) selinux(g map[string]any) {
	if _, err := c.lookPath("selinuxenabled"); err != nil {
		return
	}
	_, err := c.output("selinuxenabled")
	se := map[string]any{"enabled": err == nil}
	if _, lerr := c.lookPath("getenforce"); lerr == nil {
		if out, err := c.output("getenforce"); err == nil {
			se["enforced"] = strings.TrimSpace(out)
		}
	}
	g["selinux"] = se
}
