package grains

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinehq/brine/modules/cmd"
)

// cpuData sets cpu_model and cpu_flags from /proc/cpuinfo as Salt's
// _linux_cpudata reads it (x86's model name, ARM's Processor and
// Features, POWER's cpu), "Unknown" and [] when it says nothing.
func (c Collector) cpuData(g map[string]any) {
	model, flags := "Unknown", []any{}
	if b, err := os.ReadFile(c.Root + "/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			comps := strings.Split(sc.Text(), ":")
			if len(comps) < 2 {
				continue
			}
			key, val := strings.TrimSpace(comps[0]), strings.TrimSpace(comps[1])
			switch key {
			case "vendor_id", "model name", "cpu":
				model = val
			case "flags", "Features":
				flags = []any{}
				for _, f := range strings.Fields(val) {
					flags = append(flags, f)
				}
			case "Processor":
				model, _, _ = strings.Cut(val, "-")
			}
		}
	}
	g["cpu_model"], g["cpu_flags"] = model, flags
}

// swapTotal is SwapTotal from /proc/meminfo in MiB, as Salt's swap_total.
func (c Collector) swapTotal() (int, bool) {
	b, err := os.ReadFile(c.Root + "/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "SwapTotal:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if kb, err := strconv.Atoi(f[0]); err == nil {
					return kb / 1024, true
				}
			}
		}
	}
	return 0, true
}

// disks sets disks and ssds from /sys/block as Salt's _linux_disks: the
// block devices that are not virtual, by their queue/rotational flag.
func (c Collector) disks(g map[string]any) {
	disks, ssds := []any{}, []any{}
	entries, _ := filepath.Glob(c.Root + "/sys/block/*")
	for _, e := range entries {
		if l, err := os.Readlink(e); err == nil && strings.HasPrefix(l, "../devices/virtual/") {
			continue
		}
		b, err := os.ReadFile(e + "/queue/rotational")
		if err != nil || len(b) == 0 {
			continue
		}
		switch b[0] {
		case '0':
			ssds = append(ssds, filepath.Base(e))
		case '1':
			disks = append(disks, filepath.Base(e))
		}
	}
	g["disks"], g["ssds"] = disks, ssds
}

// gpuClasses and gpuVendors are Salt's _linux_gpu_data's.
var (
	gpuClasses = []string{"vga compatible controller", "3d controller", "display controller"}
	gpuVendors = []string{"nvidia", "amd", "ati", "intel", "cirrus logic", "vmware", "matrox", "aspeed"}
	lspciLine  = regexp.MustCompile(`^\w+:\s+.*`)
	nonAlnum   = regexp.MustCompile(`[^A-Za-z0-9]`)
)

// gpus sets gpus and num_gpus from lspci -vmm as Salt does (none without
// lspci).
func (c Collector) gpus(g map[string]any) {
	gpus := []any{}
	g["gpus"], g["num_gpus"] = gpus, 0
	if _, err := c.lookPath("lspci"); err != nil {
		return
	}
	out, err := c.output("lspci", "-vmm")
	if err != nil {
		return
	}
	dev := map[string]string{}
	for _, line := range append(strings.Split(out, "\n"), "") {
		if line == "" {
			if cls := strings.ToLower(dev["Class"]); containsStr(gpuClasses, cls) {
				vendor := "unknown"
				words := nonAlnum.Split(strings.ToLower(dev["Vendor"]), -1)
				for _, v := range gpuVendors {
					if containsStr(words, v) {
						vendor = v
						break
					}
				}
				gpus = append(gpus, map[string]any{"vendor": vendor, "model": dev["Device"]})
			}
			dev = map[string]string{}
			continue
		}
		if lspciLine.MatchString(line) {
			k, v, _ := strings.Cut(line, ":")
			dev[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	g["gpus"], g["num_gpus"] = gpus, len(gpus)
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// dmiGrains are Salt's _hw_data grains from /sys/class/dmi/id.
var dmiGrains = [][2]string{
	{"biosversion", "bios_version"}, {"biosvendor", "bios_vendor"}, {"boardname", "board_name"},
	{"productname", "product_name"}, {"manufacturer", "sys_vendor"}, {"biosreleasedate", "bios_date"},
	{"uuid", "product_uuid"}, {"serialnumber", "product_serial"},
}

// hwData sets the firmware grains the kernel exports (those it lets this
// user read: product_serial and product_uuid are root's).
func (c Collector) hwData(g map[string]any) {
	for _, d := range dmiGrains {
		b, err := os.ReadFile(c.Root + "/sys/class/dmi/id/" + d[1])
		if err != nil {
			continue
		}
		v := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
		if d[0] == "uuid" {
			v = strings.ToLower(v)
		}
		g[d[0]] = v
	}
}

// uefi sets efi and efi-secure-boot as Salt's uefi grains.
func (c Collector) uefi(g map[string]any) {
	dir := ""
	for _, d := range []string{"/sys/firmware/efi/efivars", "/sys/firmware/efi/vars"} {
		if _, err := os.Stat(c.Root + d); err == nil {
			dir = c.Root + d
			break
		}
	}
	secure := false
	if dir != "" {
		if m, _ := filepath.Glob(dir + "/SecureBoot-*/data"); len(m) == 1 {
			if b, err := os.ReadFile(m[0]); err == nil && len(b) > 0 {
				secure = b[len(b)-1] == 1
			}
		}
	}
	g["efi"], g["efi-secure-boot"] = dir != "", secure
}

// kernelParams is Salt's kernelparams grain: /proc/cmdline split as a
// shell splits it, each word a [name, value] pair (value None without
// "=", and a word with several "=" also None, as Salt).
func (c Collector) kernelParams(g map[string]any) {
	b, err := os.ReadFile(c.Root + "/proc/cmdline")
	if err != nil {
		return
	}
	words, err := cmd.Split(string(b))
	if err != nil {
		return
	}
	params := []any{}
	for _, w := range words {
		data := strings.Split(w, "=")
		var value any
		if len(data) == 2 {
			value = strings.Trim(data[1], `"`)
		}
		params = append(params, []any{data[0], value})
	}
	g["kernelparams"] = params
}

// zfs sets zfs_support (the zfs kernel module or zfs-fuse, and zpool) and
// zfs_feature_flags (zpool-features' manual page is installed), as Salt.
func (c Collector) zfs(g map[string]any) {
	supported := false
	if _, err := os.Stat(c.Root + "/sys/module/zfs"); err == nil {
		supported = true
	} else if _, err := c.lookPath("zfs-fuse"); err == nil {
		supported = true
	}
	if _, err := c.lookPath("zpool"); err != nil {
		supported = false
	}
	flags := false
	if _, err := c.lookPath("man"); err == nil {
		_, err := c.output("man", "-w", "zpool-features")
		flags = err == nil
	}
	g["zfs_support"], g["zfs_feature_flags"] = supported, flags
}
