// Package mount is Salt's mount state module: mount.mounted mounts a
// file system and keeps its fstab entry, mount.unmounted unmounts it and
// (persist) removes the entry, with Salt's comments and changes.
//
// What is mounted is read from /proc/self/mountinfo, as Salt's
// mount.active reads it; mounts are made with mount and umount, and the
// fstab entries written as Salt's mount.set_fstab writes them
// ("DEVICE\t\tNAME\tFSTYPE\tOPTS\tDUMP PASS").
package mount

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

type states struct {
	// mountinfo is the kernel's table of mounts.
	mountinfo string
}

// Module declares the mount states.
func Module(*modules.Env) []function.Func {
	return (&states{mountinfo: "/proc/self/mountinfo"}).funcs()
}

func (s *states) funcs() []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	config := function.Param{Name: "config", Kind: function.String, Default: "/etc/fstab"}
	return []function.Func{
		{Name: "mount.mounted",
			Doc: "Ensure device (of fstype) is mounted on name with opts, and (persist) in the fstab; mkmnt creates name.",
			Params: []function.Param{name,
				{Name: "device", Kind: function.String, Required: true},
				{Name: "fstype", Kind: function.String, Required: true},
				{Name: "mkmnt", Kind: function.Bool, Default: false},
				{Name: "opts", Kind: function.Any, Default: "defaults"},
				{Name: "dump", Kind: function.Int, Default: int64(0)},
				{Name: "pass_num", Kind: function.Int, Default: int64(0)},
				config,
				{Name: "persist", Kind: function.Bool, Default: true},
				{Name: "mount", Kind: function.Bool, Default: true},
				{Name: "match_on", Kind: function.Any, Default: "auto"},
				{Name: "hidden_opts", Kind: function.Any},
			},
			VarKwargs: true, Run: s.mounted},
		{Name: "mount.unmounted", Doc: "Ensure nothing is mounted on name; persist also removes its fstab entry (of device, when given).",
			Params: []function.Param{name, {Name: "device", Kind: function.String}, config,
				{Name: "persist", Kind: function.Bool, Default: false}},
			VarKwargs: true, Run: s.unmounted},
	}
}

// mnt is a line of mountinfo, as Salt's mount.active(extended=True).
type mnt struct {
	device          string
	opts, superopts []string
}

// active reads the mounts, by mount point as written in mountinfo
// (spaces as \040).
func (s *states) active() (map[string]mnt, error) {
	f, err := os.Open(s.mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]mnt{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 6 || len(b) < 3 {
			continue
		}
		out[a[4]] = mnt{device: b[1], opts: strings.Split(a[5], ","), superopts: strings.Split(b[2], ",")}
	}
	return out, sc.Err()
}

// Salt's lists of options mount does not show, and of translations.
var (
	invisibleOpts = []string{"_netdev", "actimeo", "bg", "comment", "defaults", "delay_connect", "direct-io-mode", "intr",
		"loop", "nointr", "nobootwait", "nofail", "password", "reconnect", "retry", "soft", "auto", "users", "bind",
		"nonempty", "transform_symlinks", "port", "backup-volfile-servers"}
	invisibleKeys = []string{"actimeo", "comment", "credentials", "direct-io-mode", "password", "port", "retry", "secretfile"}
	translate     = map[string]string{"tcp": "proto=tcp", "udp": "proto=udp"}
	sizeRE        = regexp.MustCompile(`^size=([0-9]+)(k|m|g)`)
)

// kb is Salt's _size_convert: size=1m is size=1024k.
func kb(opt string) string {
	m := sizeRE.FindStringSubmatch(opt)
	if m == nil {
		return opt
	}
	n, _ := strconv.Atoi(m[1])
	switch m[2] {
	case "m":
		n *= 1024
	case "g":
		n *= 1024 * 1024
	}
	return fmt.Sprintf("size=%dk", n)
}

// optList reads opts: a comma-separated string or a list.
func optList(v any) []string {
	switch t := v.(type) {
	case []any:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = fmt.Sprint(x)
		}
		return out
	case nil:
		return nil
	}
	return strings.Split(fmt.Sprint(v), ",")
}

// run runs a command, its standard error as the failure.
func run(ctx context.Context, argv ...string) error {
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}

func (s *states) mounted(ctx context.Context, in *function.Input) (any, error) {
	name, device, fstype := in.String("name"), in.String("device"), in.String("fstype")
	test := state.From(ctx).Test
	switch {
	case name == "":
		return state.Failed(name, "Must provide name to mount.mounted"), nil
	case device == "":
		return state.Failed(name, "Must provide device to mount.mounted"), nil
	case fstype == "":
		return state.Failed(name, "Must provide fstype to mount.mounted"), nil
	}
	opts := optList(in.Value("opts"))
	hidden := optList(in.Value("hidden_opts"))
	if name != "/" {
		name = strings.TrimRight(name, "/")
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	active, err := s.active()
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	realName, err := filepath.EvalSymlinks(name)
	if err != nil {
		realName = filepath.Clean(name)
	}
	key := strings.ReplaceAll(realName, " ", `\040`)
	realDevice := device
	switch {
	case strings.HasPrefix(device, "/"):
		if r, err := filepath.EvalSymlinks(device); err == nil {
			realDevice = r
		}
	case strings.HasPrefix(strings.ToUpper(device), "UUID="):
		realDevice = strings.ToLower(strings.Trim(strings.SplitN(device, "=", 2)[1], `"`))
	}
	mount := in.Bool("mount")
	if cur, ok := active[key]; ok && mount {
		devices := []string{cur.device}
		if r, err := filepath.EvalSymlinks(cur.device); err == nil && r != cur.device {
			devices = append(devices, r)
		}
		superopts := make([]string, len(cur.superopts))
		for i, o := range cur.superopts {
			superopts[i] = kb(o)
		}
		var trigger []string
		for _, opt := range opts {
			if t, ok := translate[opt]; ok {
				opt = t
			}
			k, _, _ := strings.Cut(opt, "=")
			if slices.Contains(invisibleKeys, k) {
				opt = k
			}
			opt = kb(opt)
			if fstype == "ramfs" && k == "size" {
				continue
			}
			if !slices.Contains(cur.opts, opt) && !slices.Contains(superopts, opt) && !slices.Contains(invisibleOpts, opt) &&
				!slices.Contains(hidden, opt) && !slices.Contains(invisibleKeys, opt) {
				trigger = append(trigger, opt)
			}
		}
		slices.Sort(trigger)
		if len(trigger) > 0 {
			what := fmt.Sprintf("options (%s) changed", strings.Join(trigger, ","))
			if test {
				ret.Result = nil
				ret.Comment = "Remount would be forced because " + what
				return ret, nil
			}
			ret.Changes["umount"] = "Forced remount because " + what
			argv := []string{"mount", "-o", strings.Join(append(slices.Clone(opts), "remount"), ","), "-t", fstype, device, name}
			if err := run(ctx, argv...); err != nil {
				ret.Result = state.Bool(false)
				ret.Comment = err.Error()
				return ret, nil
			}
		}
		if realDevice != cur.device && !slices.Contains(devices, realDevice) {
			if test {
				ret.Result = nil
				ret.Comment = "An umount would have been forced because devices do not match.  Watched: " + device
				return ret, nil
			}
			msg := "Forced unmount because devices don't match. Wanted: " + device
			if realDevice != device {
				msg += " (" + realDevice + ")"
			}
			ret.Changes["umount"] = msg + ", current: " + strings.Join(devices, ", ")
			_ = run(ctx, "umount", name)
			if active, err = s.active(); err != nil {
				return state.Failed(name, "%v", err), nil
			}
			if _, still := active[key]; still {
				ret.Result, ret.Comment = nil, "Unable to unmount"
				return ret, nil
			}
		} else {
			ret.Comment = "Target was already mounted"
		}
	}
	if _, ok := active[key]; !ok {
		_, statErr := os.Stat(name)
		exists := statErr == nil
		switch {
		case mount && test:
			ret.Result = nil
			switch {
			case exists:
				ret.Comment = name + " would be mounted"
			case in.Bool("mkmnt"):
				ret.Comment = name + " would be created and mounted"
			default:
				ret.Comment = name + " does not exist and would not be created"
			}
			return ret, nil
		case mount:
			if !exists && !in.Bool("mkmnt") {
				return state.Failed(name, "Mount directory is not present"), nil
			}
			if !exists {
				if err := os.MkdirAll(name, 0o755); err != nil {
					return state.Failed(name, "%v", err), nil
				}
			}
			argv := []string{"mount"}
			if len(opts) > 0 {
				argv = append(argv, "-o", strings.Join(opts, ","))
			}
			if err := run(ctx, append(argv, "-t", fstype, device, name)...); err != nil {
				ret.Result, ret.Comment = state.Bool(false), err.Error()
				return ret, nil
			}
			if active, err = s.active(); err != nil {
				return state.Failed(name, "%v", err), nil
			}
			if _, ok := active[key]; ok {
				ret.Comment = "Target was successfully mounted"
				ret.Changes["mount"] = true
			}
		case !exists && test:
			ret.Result = nil
			if in.Bool("mkmnt") {
				ret.Comment = name + " would be created, but not mounted"
			} else {
				ret.Comment = name + " does not exist and would neither be created nor mounted"
			}
		case !exists && in.Bool("mkmnt"):
			if err := os.MkdirAll(name, 0o755); err != nil {
				return state.Failed(name, "%v", err), nil
			}
			ret.Comment = name + " was created, not mounted"
		case !exists:
			ret.Comment = name + " not present and not mounted"
		case test:
			ret.Comment = name + " would not be mounted"
		default:
			ret.Comment = name + " not mounted"
		}
	}
	if !in.Bool("persist") {
		return ret, nil
	}
	e := entry{device: strings.ReplaceAll(device, `\ `, `\040`), name: name, fstype: fstype,
		opts: strings.ReplaceAll(strings.Join(opts, ","), `\ `, `\040`),
		dump: strconv.FormatInt(in.Int("dump"), 10), pass: strconv.FormatInt(in.Int("pass_num"), 10)}
	matchOn, err := matchKeys(in.Value("match_on"), fstype)
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	out, err := setFstab(in.String("config"), e, matchOn, test)
	if err != nil {
		if errors.Is(err, errBadConfig) {
			ret.Result = state.Bool(false)
			ret.Comment += ". However, the fstab was not found."
			return ret, nil
		}
		return state.Failed(name, "%v", err), nil
	}
	if test && out != "present" {
		ret.Result = nil
		var comment string
		switch {
		case out == "new" && mount:
			comment = name + " is mounted, but needs to be written to the fstab in order to be made persistent."
		case out == "new":
			comment = name + " needs to be written to the fstab in order to be made persistent."
		case mount:
			comment = name + " is mounted, but its fstab entry must be updated."
		default:
			comment = "The " + name + " fstab entry must be updated."
		}
		ret.Comment = ret.Comment + ". " + comment
		return ret, nil
	}
	switch out {
	case "present":
		ret.Comment += ". Entry already exists in the fstab."
	case "new":
		ret.Changes["persist"] = "new"
		ret.Comment += ". Added new entry to the fstab."
	case "change":
		ret.Changes["persist"] = "update"
		ret.Comment += ". Updated the entry in the fstab."
	}
	return ret, nil
}

func (s *states) unmounted(ctx context.Context, in *function.Input) (any, error) {
	name, device, config := in.String("name"), in.String("device"), in.String("config")
	if name == "" {
		return state.Failed(name, "Must provide name to mount.unmounted"), nil
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{}}
	active, err := s.active()
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if _, ok := active[strings.ReplaceAll(name, " ", `\040`)]; !ok {
		ret.Comment = "Target was already unmounted"
	} else {
		if state.From(ctx).Test {
			ret.Result = nil
			ret.Comment = fmt.Sprintf("Mount point %s is mounted but should not be", name)
			return ret, nil
		}
		target := name
		if device != "" {
			target = device
		}
		if err := run(ctx, "umount", target); err != nil {
			ret.Result, ret.Comment = state.Bool(false), err.Error()
		} else {
			ret.Comment = "Target was successfully unmounted"
			ret.Changes["umount"] = true
		}
	}
	if !in.Bool("persist") {
		return ret, nil
	}
	entries, err := readFstab(config)
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	e, ok := entries[name]
	if !ok {
		ret.Comment += ". fstab entry not found"
		return ret, nil
	}
	if device != "" && e.device != device {
		ret.Comment += fmt.Sprintf(". fstab entry for device %s not found", device)
		return ret, nil
	}
	if state.From(ctx).Test {
		ret.Result = nil
		ret.Comment = fmt.Sprintf("Mount point %s is unmounted but needs to be purged from %s to be made persistent", name, config)
		return ret, nil
	}
	if err := rmFstab(config, name, device); err != nil {
		ret.Result = state.Bool(false)
		ret.Comment += ". Failed to persist purge"
		ret.Warnings = []string{err.Error()}
		return ret, nil
	}
	ret.Comment += ". Removed target from fstab"
	ret.Changes["persist"] = "purged"
	return ret, nil
}

// entry is an fstab line, as Salt's _fstab_entry.
type entry struct{ device, name, fstype, opts, dump, pass string }

var fstabKeys = []string{"device", "name", "fstype", "opts", "dump", "pass_num"}

func (e entry) get(key string) string {
	switch key {
	case "device":
		return e.device
	case "name":
		return e.name
	case "fstype":
		return e.fstype
	case "opts":
		return e.opts
	case "dump":
		return e.dump
	}
	return e.pass
}

func (e entry) String() string {
	return fmt.Sprintf("%s\t\t%s\t%s\t%s\t%s %s\n", e.device, e.name, e.fstype, e.opts, e.dump, e.pass)
}

// parseEntry reads an fstab line; false for a comment or a line that is
// not an entry.
func parseEntry(line string) (entry, bool) {
	if strings.HasPrefix(line, "#") {
		return entry{}, false
	}
	f := strings.Fields(line)
	if len(f) < 4 || len(f) > 6 {
		return entry{}, false
	}
	for len(f) < 6 {
		f = append(f, "0")
	}
	return entry{f[0], f[1], f[2], f[3], f[4], f[5]}, true
}

// matches is Salt's _fstab_entry.match: the keys of want equal (opts in
// any order).
func matches(have, want entry, keys []string) bool {
	for _, k := range keys {
		if k == "opts" {
			a, b := strings.Split(have.opts, ","), strings.Split(want.opts, ",")
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				return false
			}
		} else if have.get(k) != want.get(k) {
			return false
		}
	}
	return true
}

// matchKeys is set_fstab's match_on: auto is the name for special file
// systems, else the device.
func matchKeys(v any, fstype string) ([]string, error) {
	var keys []string
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			keys = append(keys, fmt.Sprint(x))
		}
	case string:
		if t == "auto" {
			special := []string{"none", "tmpfs", "sysfs", "proc", "fusectl", "debugfs", "securityfs", "devtmpfs", "cgroup", "nfs", "nfs4", "glusterfs", "btrfs"}
			if slices.Contains(special, fstype) {
				return []string{"name"}, nil
			}
			return []string{"device"}, nil
		}
		keys = []string{t}
	default:
		return nil, errors.New("match_on must be a string or list of strings")
	}
	for _, k := range keys {
		if !slices.Contains(fstabKeys, k) {
			//lint:ignore ST1005 Salt's words, the state's comment.
			return nil, fmt.Errorf(`Unrecognized keys in match_on: "%s"`, k)
		}
	}
	return keys, nil
}

var errBadConfig = errors.New("bad config")

// setFstab is Salt's mount.set_fstab: "present", "change" (the matching
// line replaced) or "new" (appended); test writes nothing.
func setFstab(config string, e entry, matchOn []string, test bool) (string, error) {
	b, err := os.ReadFile(config)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errBadConfig
		}
		return "", err
	}
	var lines []string
	ret := ""
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		have, ok := parseEntry(line)
		if !ok || !matches(have, e, matchOn) {
			lines = append(lines, line)
			continue
		}
		ret = "present"
		if matches(have, e, fstabKeys) {
			lines = append(lines, line)
		} else {
			ret = "change"
			lines = append(lines, e.String())
		}
	}
	if ret == "" {
		lines = append(lines, e.String())
		ret = "new"
	}
	if ret != "present" && !test {
		if err := writeKeepingMode(config, strings.Join(lines, "")); err != nil {
			return "", err
		}
	}
	return ret, nil
}

// readFstab is Salt's mount.fstab: the entries by mount point.
func readFstab(config string) (map[string]entry, error) {
	b, err := os.ReadFile(config)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]entry{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]entry{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if e, ok := parseEntry(line); ok {
			out[e.name] = e
		}
	}
	return out, nil
}

// rmFstab is Salt's mount.rm_fstab: the lines of name (and device, when
// given) go.
func rmFstab(config, name, device string) error {
	b, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	keys := []string{"name"}
	if device != "" {
		keys = append(keys, "device")
	}
	want := entry{name: name, device: device}
	var lines []string
	changed := false
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if e, ok := parseEntry(line); ok && matches(e, want, keys) {
			changed = true
			continue
		}
		lines = append(lines, line)
	}
	if !changed {
		return nil
	}
	return writeKeepingMode(config, strings.Join(lines, ""))
}

func writeKeepingMode(path, text string) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.WriteBytes(path, []byte(text), mode)
}
