package cloud

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/brinehq/brine/config"
)

// Provider is one entry of cloud.providers: an alias for a driver and the
// account it talks to.
//
//	my-vcenter:
//	  driver: vmware
//	  url: vcenter.example.com
//	  user: administrator@vsphere.local
//	  password: sdb://osenv/VSPHERE_PASSWORD
type Provider struct {
	Alias    string
	Driver   string
	Settings Settings
	// File and Line locate the alias.
	File string
	Line int
}

// Profile is one entry of cloud.profiles: how to make a VM on a provider.
// `extends: other` starts from another profile's keys.
type Profile struct {
	Name     string
	Provider string // the provider alias
	// Settings are the profile's keys, including those it extends.
	Settings Settings
	File     string
	Line     int
}

// Config is what salt-cloud reads from /etc/salt: providers and profiles.
type Config struct {
	Providers map[string]*Provider
	Profiles  map[string]*Profile
	// Files are the files read, in order.
	Files []string
}

// ConfigDir is where the cloud files of a configuration are: the
// configuration directory itself, or the directory of a configuration file
// given instead (brine -c /etc/brine/master).
func ConfigDir(config string) string {
	if st, err := os.Stat(config); err == nil && !st.IsDir() {
		return filepath.Dir(config)
	}
	return config
}

// LoadConfig reads dir/cloud.providers, dir/cloud.providers.d/*.conf,
// dir/cloud.profiles and dir/cloud.profiles.d/*.conf. Missing files are
// fine (an empty config); a profile naming an unknown provider is not.
func LoadConfig(dir string) (*Config, error) {
	c := &Config{Providers: map[string]*Provider{}, Profiles: map[string]*Profile{}}
	raw := map[string]*Profile{}
	for _, kind := range []string{"cloud.providers", "cloud.profiles"} {
		files, err := configFiles(dir, kind)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			entries, err := readEntries(f)
			if err != nil {
				return nil, err
			}
			c.Files = append(c.Files, f)
			for _, e := range entries {
				if e.settings == nil {
					return nil, fmt.Errorf("%w: %s:%d: %s: want a mapping of keys", ErrConfig, e.file, e.line, e.name)
				}
				if kind == "cloud.providers" {
					p, err := newProvider(e)
					if err != nil {
						return nil, err
					}
					c.Providers[p.Alias] = p
					continue
				}
				raw[e.name] = &Profile{Name: e.name, Settings: e.settings, File: e.file, Line: e.line}
			}
		}
	}
	for name := range raw {
		p, err := c.resolveProfile(raw, name, nil)
		if err != nil {
			return nil, err
		}
		c.Profiles[name] = p
	}
	return c, nil
}

func configFiles(dir, kind string) ([]string, error) {
	var files []string
	main := filepath.Join(dir, kind)
	switch _, err := os.Stat(main); {
	case err == nil:
		files = append(files, main)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cloud config: %w", err)
	}
	extra, err := filepath.Glob(filepath.Join(dir, kind+".d", "*.conf"))
	if err != nil {
		return nil, fmt.Errorf("cloud config: %w", err)
	}
	sort.Strings(extra)
	return append(files, extra...), nil
}

func newProvider(e entry) (*Provider, error) {
	p := &Provider{Alias: e.name, Settings: e.settings, File: e.file, Line: e.line}
	d, ok := e.settings["driver"]
	if !ok {
		// Before Salt 2015.8 the key was `provider`.
		d, ok = e.settings["provider"]
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s:%d: provider %s: no driver key (e.g. driver: vmware)", ErrConfig, e.file, e.line, e.name)
	}
	if err := d.Decode(&p.Driver); err != nil {
		return nil, err
	}
	if p.Driver == "" {
		return nil, d.Errorf("empty driver")
	}
	return p, nil
}

// resolveProfile applies `extends` and checks the provider.
func (c *Config) resolveProfile(raw map[string]*Profile, name string, seen []string) (*Profile, error) {
	p := raw[name]
	for _, s := range seen {
		if s == name {
			return nil, fmt.Errorf("%w: %s:%d: profile %s: extends loop %s", ErrConfig, p.File, p.Line, name, strings.Join(append(seen, name), " -> "))
		}
	}
	settings := p.Settings
	if ext, ok := p.Settings["extends"]; ok {
		var parent string
		if err := ext.Decode(&parent); err != nil {
			return nil, err
		}
		if _, ok := raw[parent]; !ok {
			return nil, ext.Errorf("profile %s extends unknown profile %q", name, parent)
		}
		base, err := c.resolveProfile(raw, parent, append(seen, name))
		if err != nil {
			return nil, err
		}
		settings = base.Settings.merge(p.Settings)
		delete(settings, "extends")
	}
	out := &Profile{Name: name, Settings: settings, File: p.File, Line: p.Line}
	prov, ok := settings["provider"]
	if !ok {
		return nil, fmt.Errorf("%w: %s:%d: profile %s: no provider key", ErrConfig, p.File, p.Line, name)
	}
	if err := prov.Decode(&out.Provider); err != nil {
		return nil, err
	}
	// Salt also accepts the old "alias:driver" form.
	out.Provider, _, _ = strings.Cut(out.Provider, ":")
	if _, ok := c.Providers[out.Provider]; !ok {
		return nil, prov.Errorf("profile %s: unknown provider %q (known: %s)", name, out.Provider, strings.Join(c.ProviderNames(), ", "))
	}
	return out, nil
}

// ProviderNames lists the provider aliases, sorted.
func (c *Config) ProviderNames() []string {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ProfileNames lists the profile names, sorted.
func (c *Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// VM is everything known about one VM to create: salt-cloud's vm_, the
// provider's keys overlaid by the profile's and then by the map entry's.
type VM struct {
	Name     string
	Profile  *Profile
	Provider *Provider
	Settings Settings
}

// ProviderDriver is Salt's "alias:driver" form used in event payloads.
func (vm *VM) ProviderDriver() string { return vm.Provider.Alias + ":" + vm.Provider.Driver }

// NewVM describes the VM name made from profile, with overrides (from a
// map file) on top; overrides may be nil.
func (c *Config) NewVM(name, profile string, overrides Settings) (*VM, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	p, ok := c.Profiles[profile]
	if !ok {
		return nil, fmt.Errorf("%w: unknown profile %q (known: %s)", ErrConfig, profile, strings.Join(c.ProfileNames(), ", "))
	}
	prov := c.Providers[p.Provider]
	return &VM{Name: name, Profile: p, Provider: prov, Settings: prov.Settings.merge(p.Settings).merge(overrides)}, nil
}

// ErrName marks a VM name that cannot be used.
var ErrName = errors.New("invalid VM name")

// ValidateName reports why name cannot name a VM: it becomes an event tag
// segment (salt/cloud/<name>/created) and a host name, so it must be
// non-empty, at most 80 bytes (vSphere's limit) and free of '/', spaces and
// control characters.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrName)
	case len(name) > 80:
		return fmt.Errorf("%w: %q is longer than 80 bytes", ErrName, name)
	}
	for _, r := range name {
		if r == '/' || r <= ' ' || r == 0x7f {
			return fmt.Errorf("%w: %q holds %q", ErrName, name, r)
		}
	}
	return nil
}

// Map is a salt-cloud map file: VMs by profile, each a name or a name with
// its own keys.
//
//	web-profile:
//	  - web1
//	  - web2:
//	      grains: {role: web}
type Map struct {
	File    string
	Entries []MapEntry
}

// MapEntry is one VM of a map.
type MapEntry struct {
	Name      string
	Profile   string
	Overrides Settings
	Line      int
}

// LoadMap reads a map file; a name listed twice is an error naming both lines.
func LoadMap(path string) (*Map, error) {
	entries, err := readEntries(path)
	if err != nil {
		return nil, err
	}
	m := &Map{File: path}
	seen := map[string]int{}
	for _, e := range entries {
		list, ok := e.value.(*ast.SequenceNode)
		if !ok {
			return nil, fmt.Errorf("%w: %s:%d: profile %s: want a list of VM names", ErrConfig, path, e.line, e.name)
		}
		for _, item := range list.Values {
			me, err := mapItem(path, e.name, item)
			if err != nil {
				return nil, err
			}
			if first, dup := seen[me.Name]; dup {
				return nil, fmt.Errorf("%w: %s:%d: VM %s is already listed at line %d", ErrConfig, path, me.Line, me.Name, first)
			}
			seen[me.Name] = me.Line
			m.Entries = append(m.Entries, me)
		}
	}
	return m, nil
}

func mapItem(file, profile string, item ast.Node) (MapEntry, error) {
	line := item.GetToken().Position.Line
	if pairs, ok := config.Pairs(item); ok {
		if len(pairs) != 1 {
			return MapEntry{}, fmt.Errorf("%w: %s:%d: profile %s: want `- name` or `- name: {keys}`", ErrConfig, file, line, profile)
		}
		name := config.Key(pairs[0].Key)
		e := MapEntry{Name: name, Profile: profile, Line: line}
		if _, null := pairs[0].Value.(*ast.NullNode); !null {
			s, err := settingsOf(file, pairs[0].Value)
			if err != nil {
				return MapEntry{}, fmt.Errorf("%w: %s:%d: VM %s: want a mapping of keys", ErrConfig, file, line, name)
			}
			e.Overrides = s
		}
		return e, nil
	}
	var name string
	if sn, ok := item.(*ast.StringNode); ok {
		name = sn.Value
	} else if _, scalar := item.(ast.ScalarNode); scalar {
		name = item.String()
	}
	if name == "" {
		return MapEntry{}, fmt.Errorf("%w: %s:%d: profile %s: want a VM name", ErrConfig, file, line, profile)
	}
	return MapEntry{Name: name, Profile: profile, Line: line}, nil
}

// entry is one top-level key of a providers, profiles or map file.
type entry struct {
	name     string
	file     string
	line     int
	value    ast.Node
	settings Settings // nil unless value is a mapping
}

func readEntries(file string) ([]entry, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cloud config: %w", err)
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		line, msg := config.ErrorLine(err, 0)
		return nil, fmt.Errorf("%w: %s:%d: %s", ErrConfig, file, line, msg)
	}
	var out []entry
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if _, null := doc.Body.(*ast.NullNode); null {
			continue
		}
		pairs, ok := config.Pairs(doc.Body)
		if !ok {
			return nil, fmt.Errorf("%w: %s:%d: want a mapping of names to settings", ErrConfig, file, doc.Body.GetToken().Position.Line)
		}
		for _, kv := range pairs {
			e := entry{name: config.Key(kv.Key), file: file, line: kv.Key.GetToken().Position.Line, value: kv.Value}
			if s, err := settingsOf(file, kv.Value); err == nil {
				e.settings = s
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func settingsOf(file string, n ast.Node) (Settings, error) {
	pairs, ok := config.Pairs(n)
	if !ok {
		return nil, errors.New("not a mapping")
	}
	s := make(Settings, len(pairs))
	for _, kv := range pairs {
		k := config.Key(kv.Key)
		s[k] = Setting{Key: k, File: file, Node: kv.Value}
	}
	return s, nil
}
