// Package pkgrepo is Salt's pkgrepo state module: pkgrepo.managed and
// pkgrepo.absent, for apt (a "deb …" line in /etc/apt/sources.list or a
// file of sources.list.d) and for dnf/yum (a section of a .repo file in
// /etc/yum.repos.d), with Salt's arguments, changes and comments.
//
// The files are read and written as Salt's aptpkg and yumpkg modules
// read and write them, so a repository Salt configured is found by brine
// and the other way round; a change refreshes the package lists with
// pkg.refresh_db unless refresh (or refresh_db) is False (apt; dnf reads
// a new repository's metadata when it next needs it).
package pkgrepo

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// aptPaths are apt's sources files.
type aptPaths struct {
	list string // sources.list
	dir  string // sources.list.d
}

type states struct {
	env  *modules.Env
	apt  aptPaths
	yum  []string // the .repo directories, the first that exists taking new files
	keys string   // apt's keyrings directory
	// family is the os_family grain ("Debian", "RedHat").
	family func() string
	// refresh updates the package lists after a change.
	refresh func(ctx context.Context) error
	// aptKey runs apt-key; "" when there is none (Salt's aptkey False).
	aptKey string
}

// Module declares the pkgrepo states for env's agent.
func Module(env *modules.Env) []function.Func {
	aptKey, _ := exec.LookPath("apt-key")
	s := &states{env: env,
		apt:  aptPaths{list: "/etc/apt/sources.list", dir: "/etc/apt/sources.list.d"},
		yum:  []string{"/etc/yum.repos.d", "/etc/yum/repos.d"},
		keys: "/etc/apt/keyrings", aptKey: aptKey,
		family: func() string {
			if env == nil || env.Grains == nil {
				return ""
			}
			f, _ := env.Grains()["os_family"].(string)
			return f
		},
	}
	s.refresh = func(ctx context.Context) error {
		_, err := env.Call(ctx, "pkg.refresh_db", nil, nil)
		return err
	}
	return s.funcs()
}

func (s *states) funcs() []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	return []function.Func{
		{Name: "pkgrepo.managed",
			Doc: "Ensure a package repository is configured: apt, name is its \"deb …\" line (file, comps, architectures, " +
				"dist, comments, disabled/enabled, key_url or keyid and keyserver, aptkey, clean_file); dnf/yum, name is " +
				"the repository id and the other arguments its options (humanname, baseurl or mirrorlist, gpgcheck, gpgkey, enabled…).",
			Params:    []function.Param{name, {Name: "ppa", Kind: function.Any}, {Name: "copr", Kind: function.Any}, {Name: "aptkey", Kind: function.Bool, Default: true}},
			VarKwargs: true, Run: s.managed},
		{Name: "pkgrepo.absent", Doc: "Ensure a package repository is not configured (apt: its \"deb …\" line; dnf/yum: its id).",
			Params: []function.Param{name}, VarKwargs: true, Run: s.absent},
	}
}

// stateKeywords are the state system's arguments, which Salt's pkgrepo
// drops before passing the rest to the package module.
var stateKeywords = []string{"onchanges", "onchanges_any", "onfail", "onfail_any", "onfail_all", "onfail_stop", "prereq",
	"prerequired", "watch", "watch_any", "require", "require_any", "listen", "require_in", "watch_in", "onchanges_in",
	"onfail_in", "prereq_in", "listen_in", "use", "use_in", "order", "fun", "state", "check_cmd", "failhard", "reload_modules",
	"reload_grains", "reload_pillar", "runas", "runas_password", "fire_event", "saltenv", "__env__", "__id__", "__sls__",
	"__run_num__", "unless", "onlyif", "creates", "retry", "parallel", "name", "names", "__pub_fun", "__pub_jid", "__pub_pid",
	"__pub_tgt", "__pub_user", "__pub_arg", "__pub_ret", "__pub_tgt_type", "__pub_ret_config", "__pub_fun_args"}

func configuring(name string) string {
	return fmt.Sprintf("Package repo '%s' would be configured. This may cause pkg states to behave differently than stated "+
		"if this action is repeated without test=True, due to the differences in the configured repositories.", name)
}

func (s *states) managed(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	kw := map[string]any{}
	for k, v := range in.ExtraKwargs {
		if !slices.Contains(stateKeywords, k) && !strings.HasPrefix(k, "__") {
			kw[k] = v
		}
	}
	_, keyURL := kw["key_url"]
	_, keyText := kw["key_text"]
	_, keyID := kw["keyid"]
	_, keyServer := kw["keyserver"]
	var conflict string
	switch {
	case keyURL && (keyID || keyServer):
		conflict = `You may not use both "keyid"/"keyserver" and "key_url" argument.`
	case keyText && (keyID || keyServer):
		conflict = `You may not use both "keyid"/"keyserver" and "key_text" argument.`
	case keyText && keyURL:
		conflict = `You may not use both "key_url" and "key_text" argument.`
	}
	if _, ok := kw["repo"]; ok {
		return state.Failed(name, "'repo' is not a supported argument for this state. The 'name' argument is probably what was intended."), nil
	}
	en, hasEn := kw["enabled"]
	dis, hasDis := kw["disabled"]
	delete(kw, "enabled")
	delete(kw, "disabled")
	if hasEn && hasDis {
		return state.Failed(name, "Only one of enabled/disabled is allowed"), nil
	}
	if conflict != "" {
		// Salt goes on after these, and fails later.
		return state.Failed(name, "%s", conflict), nil
	}
	if in.Value("ppa") != nil || in.Value("copr") != nil {
		return state.Failed(name, "ppa and copr repositories are not supported: give the repository's line (apt) or options (dnf)"), nil
	}
	switch s.family() {
	case "Debian":
		disabled := false
		switch {
		case hasDis:
			disabled = py.Truth(dis)
		case hasEn:
			disabled = !py.Truth(en)
		}
		return s.aptManaged(ctx, name, in.Bool("aptkey") && s.aptKey != "", kw, disabled, hasEn || hasDis)
	case "RedHat":
		enabled := true
		switch {
		case hasDis:
			enabled = !py.Truth(dis)
		case hasEn:
			enabled = py.Truth(en)
		}
		return s.yumManaged(ctx, name, kw, enabled)
	}
	return state.Failed(name, "Repo management not implemented on this platform"), nil
}

func (s *states) absent(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	switch s.family() {
	case "Debian":
		return s.aptAbsent(ctx, name, in.ExtraKwargs)
	case "RedHat":
		return s.yumAbsent(ctx, name)
	}
	return state.Failed(name, "Repo management not implemented on this platform"), nil
}

// refreshFlag is refresh (or refresh_db, which wins), True by default.
func refreshFlag(kw map[string]any) bool {
	if v, ok := kw["refresh_db"]; ok {
		return py.Truth(v)
	}
	if v, ok := kw["refresh"]; ok {
		return py.Truth(v)
	}
	return true
}

// list reads a comma-separated list argument (or a list).
func list(v any) []string {
	var out []string
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			out = append(out, strings.TrimSpace(fmt.Sprint(x)))
		}
	default:
		for x := range strings.SplitSeq(fmt.Sprint(v), ",") {
			out = append(out, strings.TrimSpace(x))
		}
	}
	return out
}

// comments is Salt's combine_comments for apt: one line.
func comments(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

func (s *states) aptManaged(ctx context.Context, name string, aptkey bool, kw map[string]any, disabled, hasDisabled bool) (any, error) {
	repo := parseSource(name, "")
	if repo.invalid {
		return state.Failed(name, "Failed to configure repo '%s': Name %s is not valid. This must be the complete repo entry as seen in the sources file", name, name), nil
	}
	ra := repoArgs{repo: repo}
	if v, ok := kw["file"]; ok {
		ra.file = fmt.Sprint(v)
	}
	if v, ok := kw["comps"]; ok {
		ra.comps, ra.hasComps = list(v), true
	}
	if v, ok := kw["architectures"]; ok {
		ra.arches, ra.hasArches = list(v), true
	}
	if v, ok := kw["dist"]; ok {
		ra.dist = fmt.Sprint(v)
	}
	if v, ok := kw["comments"]; ok {
		ra.comments, ra.hasComments = comments(v), true
	}
	if hasDisabled {
		ra.disabled = &disabled
	}
	sl, err := s.apt.read()
	if err != nil {
		return state.Failed(name, "Failed to examine repo '%s': %v", name, err), nil
	}
	pre := sl.get(repo)
	want := ra.expanded(s.apt.list)
	if pre != nil && upToDate(pre, want, ra) {
		return state.Succeeded(name, fmt.Sprintf("Package repo '%s' already configured", name), nil), nil
	}
	if state.From(ctx).Test {
		changes := map[string]any{"repo": name}
		if pre != nil {
			changes = diff(pre.info(), want.info())
		}
		return state.Pending(name, configuring(name), changes), nil
	}
	if py.Truth(kw["clean_file"]) && ra.file != "" {
		if err := writeFile(ra.file, ""); err != nil {
			return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
		}
		if sl, err = s.apt.read(); err != nil {
			return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
		}
	}
	if !aptkey && repo.opt("signed-by") == "" {
		return state.Failed(name, "Failed to configure repo '%s': missing 'signedby' option when apt-key is missing", name), nil
	}
	if failure := s.aptKeys(ctx, kw, aptkey, repo.opt("signed-by")); failure != "" {
		return state.Failed(name, "Failed to configure repo '%s': %s", name, failure), nil
	}
	var preInfo map[string]any
	if pre != nil {
		// mod changes the entry pre points to.
		preInfo = pre.info()
	}
	_, changed := sl.mod(ra, s.apt.list)
	if err := s.apt.save(sl, changed); err != nil {
		return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Comment: fmt.Sprintf("Configured package repo '%s'", name)}
	after, err := s.apt.read()
	if err != nil {
		return state.Failed(name, "Failed to confirm config of repo '%s': %v", name, err), nil
	}
	post := after.get(repo)
	switch {
	case post == nil:
		return state.Failed(name, "Failed to confirm config of repo '%s': it is not in the sources files", name), nil
	case pre == nil:
		ret.Changes = map[string]any{"repo": name}
	default:
		ret.Changes = diff(preInfo, post.info())
	}
	if refreshFlag(kw) {
		// Salt's refresh_db reports a failed source in its log, not in the
		// state's result.
		_ = s.refresh(ctx)
	}
	return ret, nil
}

// aptKeys adds the repository's key: key_url (a local path, file://,
// http(s):// or salt://) or keyid from keyserver, with apt-key or (aptkey
// False) into the signed-by keyring; failure is Salt's words for what
// went wrong.
func (s *states) aptKeys(ctx context.Context, kw map[string]any, aptkey bool, signedBy string) (failure string) {
	if v, ok := kw["keyid"]; ok {
		server, _ := kw["keyserver"].(string)
		if !py.Truth(v) || server == "" {
			return "both keyserver and keyid options required."
		}
		ids := list(v)
		for _, id := range ids {
			if aptkey {
				out, _ := exec.CommandContext(ctx, s.aptKey, "export", id).Output()
				if strings.HasPrefix(string(out), "-----BEGIN PGP") {
					continue
				}
				if out, err := exec.CommandContext(ctx, s.aptKey, "adv", "--batch", "--keyserver", server, "--logger-fd", "1", "--recv-keys", id).CombinedOutput(); err != nil {
					return fmt.Sprintf("Error: key retrieval failed: %s", out)
				}
				continue
			}
			if out, err := exec.CommandContext(ctx, "gpg", "--no-default-keyring", "--keyring", signedBy, "--keyserver", server, "--recv-keys", id).CombinedOutput(); err != nil {
				return fmt.Sprintf("Error: Could not add key: %s: %s", id, out)
			}
		}
		return ""
	}
	v, ok := kw["key_url"]
	if !ok {
		if t, ok := kw["key_text"]; ok {
			if !aptkey {
				return "key_text needs apt-key: give key_url and a signed-by keyring"
			}
			c := exec.CommandContext(ctx, s.aptKey, "add", "-")
			c.Stdin = strings.NewReader(fmt.Sprint(t))
			if out, err := c.Output(); err != nil || !strings.HasPrefix(strings.ToUpper(string(out)), "OK") {
				return fmt.Sprintf("Error: failed to add key:\n%v", t)
			}
		}
		return ""
	}
	url := fmt.Sprint(v)
	key, err := s.fetch(ctx, url)
	if err != nil {
		return fmt.Sprintf("Error: file not found: %s: %v", url, err)
	}
	if aptkey {
		c := exec.CommandContext(ctx, s.aptKey, "add", "-")
		c.Stdin = strings.NewReader(string(key))
		if out, err := c.Output(); err != nil || !strings.HasPrefix(strings.ToUpper(string(out)), "OK") {
			return fmt.Sprintf("Error: failed to add key from %s", url)
		}
		return ""
	}
	dir := filepath.Dir(signedBy)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Sprintf("Error: Could not add key: the directory %s does not exist", dir)
	}
	if strings.HasPrefix(strings.TrimLeft(string(key), "-"), "BEGIN PGP") {
		c := exec.CommandContext(ctx, "gpg", "--dearmor")
		c.Stdin = strings.NewReader(string(key))
		if key, err = c.Output(); err != nil {
			return fmt.Sprintf("Error: Could not add key: gpg --dearmor %s: %v", url, err)
		}
	}
	if err := atomicfile.WriteBytes(signedBy, key, 0o644); err != nil {
		return fmt.Sprintf("Error: Could not add key: %v", err)
	}
	return ""
}

// fetch reads a key: a local path, file://, http(s):// or salt://.
func (s *states) fetch(ctx context.Context, url string) ([]byte, error) {
	switch {
	case strings.HasPrefix(url, "salt://"):
		if s.env == nil || s.env.Files == nil {
			return nil, fmt.Errorf("no master to fetch %s from", url)
		}
		p, err := s.env.Files.Cache(ctx, url, "base")
		if err != nil {
			return nil, err
		}
		return os.ReadFile(p)
	case strings.HasPrefix(url, "http://"), strings.HasPrefix(url, "https://"):
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s", resp.Status)
		}
		var b strings.Builder
		buf := make([]byte, 32*1024)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return []byte(b.String()), nil
	}
	return os.ReadFile(strings.TrimPrefix(url, "file://"))
}

func (s *states) aptAbsent(ctx context.Context, name string, kw map[string]any) (any, error) {
	// Salt's strip_uri: no trailing slash on http(s) and ftp URIs.
	f := strings.Fields(name)
	for i, x := range f {
		if strings.HasPrefix(x, "http://") || strings.HasPrefix(x, "https://") || strings.HasPrefix(x, "ftp://") {
			f[i] = strings.TrimRight(x, "/")
		}
	}
	strip := strings.Join(f, " ")
	repo := parseSource(strip, "")
	if repo.invalid {
		return state.Failed(name, "Failed to configure repo '%s': Error: repo '%s' is not a well formatted definition", name, strip), nil
	}
	sl, err := s.apt.read()
	if err != nil {
		return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
	}
	pre := sl.get(repo)
	if pre != nil {
		a, b := slices.Sorted(slices.Values(repo.architectures())), slices.Sorted(slices.Values(pre.architectures()))
		if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
			pre = nil
		}
	}
	if pre == nil {
		return state.Succeeded(name, fmt.Sprintf("Package repo %s is absent", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Package repo '%s' will be removed. This may cause pkg states to behave differently "+
			"than stated if this action is repeated without test=True, due to the differences in the configured repositories.", name), nil), nil
	}
	changed := sl.del(repo)
	if len(changed) == 0 {
		return state.Failed(name, "Repo %s doesn't exist in the sources.list(s)", strip), nil
	}
	if err := s.apt.save(sl, changed); err != nil {
		return state.Failed(name, "Failed to remove repo %s: %v", name, err), nil
	}
	// Salt's del_repo refreshes the package lists whatever refresh says.
	_ = s.refresh(ctx)
	after, err := s.apt.read()
	if err != nil {
		return state.Failed(name, "Failed to remove repo %s: %v", name, err), nil
	}
	if p := after.get(repo); p != nil && slices.Equal(p.architectures(), repo.architectures()) {
		return state.Failed(name, "Failed to remove repo %s", name), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Removed repo %s", name), map[string]any{"repo": name}), nil
}

// yumManaged is pkgrepo.managed for dnf and yum: name is the section,
// the arguments its options, written in the order the SLS gave them,
// then name (humanname, else the id) and enabled.
func (s *states) yumManaged(ctx context.Context, name string, kw map[string]any, enabled bool) (any, error) {
	order := state.From(ctx).ArgOrder
	var keys []string
	for _, k := range order {
		if _, ok := kw[k]; ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range kw {
			if !yield(k) {
				return
			}
		}
	}) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	opts := map[string]any{}
	var optKeys []string
	human := any(name)
	for _, k := range keys {
		switch k {
		case "humanname":
			human = kw[k]
		case "aptkey", "basedir":
		default:
			opts[k] = kw[k]
			optKeys = append(optKeys, k)
		}
	}
	opts["name"], opts["enabled"] = human, enabled
	optKeys = append(optKeys, "name", "enabled")

	file, f, err := yumFind(s.yum, name)
	if err != nil {
		return state.Failed(name, "Failed to examine repo '%s': %v", name, err), nil
	}
	var pre map[string]any
	if f != nil {
		pre = yumInfo(f.section(name))
		same := true
		for _, k := range optKeys {
			w := opts[k]
			p, ok := pre[k]
			switch {
			case !ok:
				if k == "enabled" && py.Truth(w) {
					continue
				}
				same = false
			case k == "comments":
				same = same && yumComments(p) == yumComments(w)
			default:
				if _, isBool := w.(bool); isBool {
					same = same && py.Truth(w) == yumTruth(fmt.Sprint(p))
				} else {
					same = same && yumValue(w) == fmt.Sprint(p)
				}
			}
		}
		if same {
			return state.Succeeded(name, fmt.Sprintf("Package repo '%s' already configured", name), nil), nil
		}
	}
	if state.From(ctx).Test {
		changes := map[string]any{"repo": name}
		if pre != nil {
			changes = map[string]any{}
			for _, k := range optKeys {
				if fmt.Sprint(opts[k]) != fmt.Sprint(pre[k]) {
					changes[k] = map[string]any{"new": opts[k], "old": pre[k]}
				}
			}
		}
		return state.Pending(name, configuring(name), changes), nil
	}

	// Salt's yumpkg.mod_repo: empty options are removed, baseurl and
	// mirrorlist exclude each other.
	var drop []string
	for _, k := range optKeys {
		if empty(opts[k]) {
			drop = append(drop, k)
		}
	}
	if _, ok := opts["mirrorlist"]; ok && !slices.Contains(drop, "mirrorlist") {
		drop = append(drop, "baseurl")
	} else if _, ok := opts["baseurl"]; ok && !slices.Contains(drop, "baseurl") {
		drop = append(drop, "mirrorlist")
	}
	if f == nil {
		dir := ""
		for _, d := range s.yum {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				dir = d
				break
			}
		}
		if dir == "" {
			return state.Failed(name, "Failed to configure repo '%s': The repo does not exist and needs to be created, but none of "+
				"the following basedir directories exist: %s", name, py.ReprList(s.yum)), nil
		}
		_, hasBase := opts["baseurl"]
		_, hasMirror := opts["mirrorlist"]
		if (!hasBase || empty(opts["baseurl"])) && (!hasMirror || empty(opts["mirrorlist"])) {
			return state.Failed(name, "Failed to configure repo '%s': The repo does not exist and needs to be created, but either "+
				"a baseurl or a mirrorlist needs to be given", name), nil
		}
		file = filepath.Join(dir, name+".repo")
		f = &repoFile{sections: []*repoSection{{name: name, values: map[string]string{}}}}
	}
	sec := f.section(name)
	for _, k := range drop {
		sec.unset(k)
	}
	for _, k := range optKeys {
		if slices.Contains(drop, k) {
			continue
		}
		if k == "comments" {
			sec.comments = nil
			if l, ok := opts[k].([]any); ok {
				for _, c := range l {
					sec.comments = append(sec.comments, fmt.Sprint(c))
				}
			} else {
				sec.comments = []string{fmt.Sprint(opts[k])}
			}
			continue
		}
		sec.set(k, yumValue(opts[k]))
	}
	if err := writeFile(file, f.String()); err != nil {
		return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Comment: fmt.Sprintf("Configured package repo '%s'", name)}
	if pre == nil {
		ret.Changes = map[string]any{"repo": name}
	} else {
		post := yumInfo(sec)
		ret.Changes = map[string]any{}
		for _, k := range optKeys {
			if fmt.Sprint(post[k]) != fmt.Sprint(pre[k]) {
				ret.Changes[k] = map[string]any{"new": post[k], "old": pre[k]}
			}
		}
	}
	// Salt's yumpkg.mod_repo refreshes nothing: dnf reads the new
	// repository's metadata when it next needs it.
	return ret, nil
}

func yumTruth(s string) bool {
	switch strings.ToLower(s) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}

func yumComments(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, "\n")
	}
	return fmt.Sprint(v)
}

func (s *states) yumAbsent(ctx context.Context, name string) (any, error) {
	file, f, err := yumFind(s.yum, name)
	if err != nil {
		return state.Failed(name, "Failed to configure repo '%s': %v", name, err), nil
	}
	if f == nil {
		return state.Succeeded(name, fmt.Sprintf("Package repo %s is absent", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Package repo '%s' will be removed. This may cause pkg states to behave differently "+
			"than stated if this action is repeated without test=True, due to the differences in the configured repositories.", name), nil), nil
	}
	// Salt's yumpkg.del_repo: the file goes with its last section.
	f.sections = slices.DeleteFunc(f.sections, func(s *repoSection) bool { return s.name == name })
	if len(f.sections) == 0 {
		err = os.Remove(file)
	} else {
		err = writeFile(file, f.String())
	}
	if err != nil {
		return state.Failed(name, "Failed to remove repo %s: %v", name, err), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Removed repo %s", name), map[string]any{"repo": name}), nil
}

// writeFile replaces path's contents, 0644 for a new file.
func writeFile(path, text string) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return atomicfile.WriteBytes(path, []byte(text), mode)
}
