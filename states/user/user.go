// Package user is Salt's user state module: user.present (uid, gid by
// name or id, groups, optional_groups, remove_groups, home, createhome,
// shell, the GECOS fields, system, password hash, usergroup) and
// user.absent (purge, force), with Salt's changes and comments; a
// password hash is never shown, Salt's "XXX-REDACTED-XXX" stands for it.
//
// Users and groups are read with the user.info and group.info execution
// functions, as Salt's state does, and the password hash from
// /etc/shadow (Salt's shadow.info). brine's user module only reads, so
// the changes are made here with the shadow tools Salt's useradd module
// runs: useradd, usermod and userdel.
package user

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/state"
)

// redacted stands for a password hash in changes and comments.
const redacted = "XXX-REDACTED-XXX"

// Module declares the user states for env's agent.
func Module(env *modules.Env) []function.Func {
	s := &states{env: env, shadow: "/etc/shadow"}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	str := func(n string) function.Param { return function.Param{Name: n, Kind: function.String} }
	flag := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return []function.Func{
		{Name: "user.present",
			Doc: "Ensure a user exists with the attributes given; groups lists its supplementary groups " +
				"(remove_groups: False only adds), password is a hash.",
			Params: []function.Param{name,
				{Name: "uid", Kind: function.Int},
				{Name: "gid", Kind: function.Any},
				{Name: "usergroup", Kind: function.Bool},
				{Name: "groups", Kind: function.Any},
				{Name: "optional_groups", Kind: function.Any},
				flag("remove_groups", true),
				str("home"),
				flag("createhome", true),
				str("password"),
				flag("hash_password", false),
				flag("enforce_password", true),
				flag("empty_password", false),
				str("shell"),
				flag("unique", true),
				flag("system", false),
				str("fullname"), str("roomnumber"), str("workphone"), str("homephone"), str("other"),
				flag("nologinit", false),
				flag("allow_uid_change", false),
				flag("allow_gid_change", false),
			},
			Run: s.present},
		{Name: "user.absent", Doc: "Ensure a user does not exist; purge also removes its home and mail.",
			Params: []function.Param{name, flag("purge", false), flag("force", false)},
			Run:    s.absent},
	}
}

type states struct {
	env *modules.Env
	// shadow is the shadow password file.
	shadow string
}

// call runs an execution function returning a mapping (user.info,
// group.info): nil when it is empty.
func (s *states) info(ctx context.Context, fun, name string) (map[string]any, error) {
	return s.env.Mapping(ctx, fun, name)
}

// hash is the user's password hash in the shadow file (Salt's
// shadow.info passwd).
func (s *states) hash(name string) (string, error) {
	f, err := os.Open(s.shadow)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Split(sc.Text(), ":"); len(fs) >= 2 && fs[0] == name {
			return fs[1], nil
		}
	}
	return "", sc.Err()
}

// names reads a list of names; ok is false for anything else.
func names(v any) (out []string, ok bool) {
	if v == nil {
		return nil, true
	}
	var l []any
	switch t := v.(type) {
	case []any:
		l = t
	case string:
		// Salt accepts a comma-separated string.
		for n := range strings.SplitSeq(t, ",") {
			if n = strings.TrimSpace(n); n != "" {
				l = append(l, n)
			}
		}
	default:
		return nil, false
	}
	for _, x := range l {
		switch n := x.(type) {
		case string:
			out = append(out, n)
		case int64:
			out = append(out, strconv.FormatInt(n, 10))
		default:
			return nil, false
		}
	}
	return out, true
}

func toInt(v any) (int, bool) {
	switch t := v.(type) {
	case int:
		return t, true
	case int64:
		return int(t), true
	case float64:
		return int(t), true
	}
	return 0, false
}

// wanted is what present was asked for.
type wanted struct {
	uid, gid                 int
	hasUID, hasGID           bool
	groups                   []string // nil: leave them
	optional                 []string // the optional groups that exist
	removeGroups             bool
	home, shell              string
	createhome               bool
	password                 string
	enforce, emptyPassword   bool
	gecos                    [5]*string // fullname, roomnumber, workphone, homephone, other
	allowUID, allowGID       bool
	system, unique, nologini bool
}

var gecosKeys = [5]string{"fullname", "roomnumber", "workphone", "homephone", "other"}

// change is one attribute to change, in Salt's order.
type change struct {
	key   string
	value any
}

// comment is how Salt's test mode lists a change.
func (c change) comment() string {
	switch v := c.value.(type) {
	case []string:
		return fmt.Sprintf("%s: %s\n", c.key, py.ReprList(v))
	}
	if c.key == "passwd" {
		return c.key + ": " + redacted + "\n"
	}
	return fmt.Sprintf("%s: %s\n", c.key, py.Str(c.value))
}

// groupName is the name of group gid (Salt's file.gid_to_group); the
// number when no group has it.
func groupName(gid int, all []any) string {
	for _, g := range all {
		if m, _ := g.(map[string]any); m != nil {
			if id, _ := toInt(m["gid"]); id == gid {
				return fmt.Sprint(m["name"])
			}
		}
	}
	return strconv.Itoa(gid)
}

// changes is Salt's _changes: what differs between the user and w, or
// the changes that are not allowed; cur is user.info.
func (s *states) changes(ctx context.Context, name string, cur map[string]any, w wanted) ([]change, []string, error) {
	var out []change
	var refused []string
	uid, _ := toInt(cur["uid"])
	gid, _ := toInt(cur["gid"])
	if w.hasUID && uid != w.uid {
		out = append(out, change{"uid", w.uid})
		if !w.allowUID {
			refused = append(refused, fmt.Sprintf("Changing uid (%d -> %d) not permitted, set allow_uid_change to True to force this change. "+
				"Note that this will not change file ownership.", uid, w.uid))
		}
	}
	if w.hasGID && gid != w.gid {
		out = append(out, change{"gid", w.gid})
		if !w.allowGID {
			refused = append(refused, fmt.Sprintf("Changing gid (%d -> %d) not permitted, set allow_gid_change to True to force this change. "+
				"Note that this will not change file ownership.", gid, w.gid))
		}
	}
	have, _ := names(cur["groups"])
	if w.groups != nil || len(w.optional) > 0 {
		allOut, err := s.env.Functions.Call(ctx, "group.getent", nil, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		all, _ := allOut.([]any)
		want := slices.Concat(w.groups, w.optional)
		slices.Sort(want)
		want = slices.Compact(want)
		primary := gid
		if w.hasGID {
			primary = w.gid
		}
		def, oldDef := groupName(primary, all), groupName(gid, all)
		have = slices.DeleteFunc(have, func(g string) bool {
			return g == def || g == oldDef || (g == name && !slices.Contains(want, name))
		})
		want = slices.DeleteFunc(want, func(g string) bool { return g == def })
		differ := false
		if w.removeGroups {
			a, b := slices.Clone(have), slices.Clone(want)
			slices.Sort(a)
			differ = !slices.Equal(slices.Compact(a), b)
		} else {
			for _, g := range want {
				differ = differ || !slices.Contains(have, g)
			}
		}
		if differ {
			out = append(out, change{"groups", want})
		}
	}
	home, _ := cur["home"].(string)
	if w.home != "" && home != w.home {
		out = append(out, change{"home", w.home})
	}
	if w.createhome {
		h := w.home
		if h == "" {
			h = home
		}
		if fi, err := os.Stat(h); h != "" && (err != nil || !fi.IsDir()) {
			out = append(out, change{"homeDoesNotExist", h})
		}
	}
	if shell, _ := cur["shell"].(string); w.shell != "" && shell != w.shell {
		out = append(out, change{"shell", w.shell})
	}
	hash, err := s.hash(name)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case w.password != "" && !w.emptyPassword:
		// Salt's default_hash: a locked account without a password yet.
		if (hash == "!" || hash == "*" || w.enforce) && hash != w.password {
			out = append(out, change{"passwd", w.password})
		}
	case w.emptyPassword && hash != "":
		out = append(out, change{"empty_password", true})
	}
	for i, k := range gecosKeys {
		if v := w.gecos[i]; v != nil && fmt.Sprint(cur[k]) != *v {
			out = append(out, change{k, *v})
		}
	}
	return out, refused, nil
}

func (s *states) present(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	w := wanted{
		uid: int(in.Int("uid")), hasUID: in.Has("uid"),
		removeGroups: in.Bool("remove_groups"), home: in.String("home"), shell: in.String("shell"),
		createhome: in.Bool("createhome"), password: in.String("password"),
		enforce: in.Bool("enforce_password"), emptyPassword: in.Bool("empty_password"),
		allowUID: in.Bool("allow_uid_change"), allowGID: in.Bool("allow_gid_change"),
		system: in.Bool("system"), unique: in.Bool("unique"), nologini: in.Bool("nologinit"),
	}
	if in.Bool("hash_password") {
		return state.Failed(name, "hash_password is not supported: give password as a hash"), nil
	}
	for i, k := range gecosKeys {
		if in.Has(k) {
			v := in.String(k)
			if strings.Contains(v, ",") && i < 3 {
				return state.Failed(name, "Unsupported char ',' in %s", v), nil
			}
			w.gecos[i] = &v
		}
	}
	groups, ok := names(in.Value("groups"))
	if !ok {
		return state.Failed(name, "groups: want a list of group names"), nil
	}
	if in.Value("groups") != nil && groups == nil {
		groups = []string{}
	}
	w.groups = groups
	var missing []string
	for _, g := range groups {
		if i, err := s.info(ctx, "group.info", g); err != nil {
			return nil, err
		} else if i == nil {
			missing = append(missing, g)
		}
	}
	if len(missing) > 0 {
		return state.Failed(name, "The following group(s) are not present: %s", strings.Join(missing, ",")), nil
	}
	optional, ok := names(in.Value("optional_groups"))
	if !ok {
		return state.Failed(name, "optional_groups: want a list of group names"), nil
	}
	for _, g := range optional {
		if i, err := s.info(ctx, "group.info", g); err != nil {
			return nil, err
		} else if i != nil {
			w.optional = append(w.optional, g)
		}
	}
	if g := in.Value("gid"); g != nil {
		if n, ok := toInt(g); ok {
			w.gid = n
		} else if n, err := strconv.Atoi(fmt.Sprint(g)); err == nil {
			w.gid = n
		} else {
			i, err := s.info(ctx, "group.info", fmt.Sprint(g))
			if err != nil {
				return nil, err
			}
			if i == nil {
				return state.Failed(name, "The following group(s) are not present: %v", g), nil
			}
			w.gid, _ = toInt(i["gid"])
		}
		w.hasGID = true
	}

	cur, err := s.info(ctx, "user.info", name)
	if err != nil {
		return nil, err
	}
	test := state.From(ctx).Test
	if cur == nil {
		if test {
			return state.Pending(name, fmt.Sprintf("User %s set to be added", name), nil), nil
		}
		return s.add(ctx, name, in, w)
	}

	todo, refused, err := s.changes(ctx, name, cur, w)
	if err != nil {
		return nil, err
	}
	if len(refused) > 0 {
		return state.Failed(name, "Encountered error checking for needed changes. Additional info follows:\n\n- %s", strings.Join(refused, "\n- ")), nil
	}
	if len(todo) == 0 {
		return state.Succeeded(name, fmt.Sprintf("User %s is present and up to date", name), nil), nil
	}
	if test {
		// Salt's test mode lists the changes in the comment alone.
		var comment strings.Builder
		comment.WriteString("The following user attributes are set to be changed:\n")
		for _, c := range todo {
			comment.WriteString(c.comment())
		}
		return state.Pending(name, comment.String(), nil), nil
	}

	preHash, err := s.hash(name)
	if err != nil {
		return nil, err
	}
	var failures []string
	gecos := [5]string{}
	gecosChanged := false
	for i, k := range gecosKeys {
		gecos[i] = fmt.Sprint(cur[k])
	}
	for _, c := range todo {
		var argv []string
		switch c.key {
		case "uid":
			argv = []string{"usermod", "-u", fmt.Sprint(c.value)}
			if !w.unique {
				argv = append(argv, "-o")
			}
		case "gid":
			argv = []string{"usermod", "-g", fmt.Sprint(c.value)}
		case "groups":
			argv = []string{"usermod", "-G", strings.Join(c.value.([]string), ",")}
			if !w.removeGroups {
				argv = []string{"usermod", "-a", "-G", strings.Join(c.value.([]string), ",")}
			}
		case "home":
			argv = []string{"usermod", "-d", w.home}
		case "shell":
			argv = []string{"usermod", "-s", w.shell}
		case "passwd":
			argv = []string{"usermod", "-p", fmt.Sprint(c.value)}
		case "empty_password":
			argv = []string{"usermod", "-p", ""}
		case "homeDoesNotExist":
			if err := s.mkhome(ctx, name, fmt.Sprint(c.value)); err != nil {
				failures = append(failures, err.Error())
			}
			continue
		default:
			for i, k := range gecosKeys {
				if k == c.key {
					gecos[i] = fmt.Sprint(c.value)
					gecosChanged = true
				}
			}
			continue
		}
		if err := service.Run(ctx, append(argv, "--", name)...); err != nil {
			failures = append(failures, err.Error())
		}
	}
	if gecosChanged {
		if err := service.Run(ctx, "usermod", "-c", gecosField(gecos), "--", name); err != nil {
			failures = append(failures, err.Error())
		}
	}

	post, err := s.info(ctx, "user.info", name)
	if err != nil {
		return nil, err
	}
	ret := state.Result{Name: name, Result: state.Bool(true), Changes: map[string]any{},
		Comment: fmt.Sprintf("User %s is present and up to date", name), Warnings: failures}
	for k, v := range post {
		if fmt.Sprint(cur[k]) != fmt.Sprint(v) {
			ret.Changes[k] = v
		}
	}
	if postHash, err := s.hash(name); err == nil && postHash != preHash {
		ret.Changes["passwd"] = redacted
	}
	if len(ret.Changes) > 0 {
		ret.Comment = fmt.Sprintf("Updated user %s", name)
	}
	left, _, err := s.changes(ctx, name, post, w)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		m := map[string]any{}
		for _, c := range left {
			m[c.key] = c.value
			if c.key == "passwd" {
				m[c.key] = redacted
			}
			if l, ok := c.value.([]string); ok {
				m[c.key] = py.List(l)
			}
		}
		ret.Comment = "These values could not be changed: " + py.ReprValue(m)
		ret.Result = state.Bool(false)
	}
	return ret, nil
}

// gecosField joins the GECOS fields, without the empty ones at the end.
func gecosField(f [5]string) string {
	return strings.TrimRight(strings.Join(f[:], ","), ",")
}

// mkhome creates a missing home directory owned by the user, as Salt's
// file.mkdir with mode 0755.
func (s *states) mkhome(ctx context.Context, name, home string) error {
	u, err := s.info(ctx, "user.info", name)
	if err != nil {
		return err
	}
	uid, _ := toInt(u["uid"])
	gid, _ := toInt(u["gid"])
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	return os.Chown(home, uid, gid)
}

// add is user.present for a user that does not exist: Salt's user.add,
// then its password.
func (s *states) add(ctx context.Context, name string, in *function.Input, w wanted) (any, error) {
	argv := []string{"useradd"}
	if w.hasUID {
		argv = append(argv, "-u", strconv.Itoa(w.uid))
	}
	usergroup, setUG := in.Bool("usergroup"), in.Has("usergroup")
	switch {
	case setUG && usergroup:
		argv = append(argv, "-U")
	case w.hasGID:
		argv = append(argv, "-g", strconv.Itoa(w.gid))
	case setUG:
		argv = append(argv, "-N")
	}
	if groups := slices.Concat(w.groups, w.optional); len(groups) > 0 {
		argv = append(argv, "-G", strings.Join(groups, ","))
	}
	if w.home != "" {
		argv = append(argv, "-d", w.home)
	}
	if w.shell != "" {
		argv = append(argv, "-s", w.shell)
	}
	if !w.unique && w.hasUID {
		argv = append(argv, "-o")
	}
	if w.system {
		argv = append(argv, "-r")
	}
	if w.createhome {
		argv = append(argv, "-m")
	} else {
		argv = append(argv, "-M")
	}
	if w.nologini {
		argv = append(argv, "-l")
	}
	var gecos [5]string
	hasGecos := false
	for i, v := range w.gecos {
		if v != nil {
			gecos[i], hasGecos = *v, true
		}
	}
	if hasGecos {
		argv = append(argv, "-c", gecosField(gecos))
	}
	if err := service.Run(ctx, append(argv, "--", name)...); err != nil {
		r := state.Failed(name, "Failed to create new user %s", name)
		r.Warnings = []string{err.Error()}
		return r, nil
	}
	info, err := s.info(ctx, "user.info", name)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, errors.New("useradd succeeded but user.info does not know the user")
	}
	ret := state.Succeeded(name, fmt.Sprintf("New user %s created", name), info)
	if !w.createhome {
		ret.Changes["home"] = ""
	}
	switch {
	case w.password != "" && !w.emptyPassword:
		err := service.Run(ctx, "usermod", "-p", w.password, "--", name)
		if h, herr := s.hash(name); err != nil || herr != nil || h != w.password {
			ret.Comment = fmt.Sprintf("User %s created but failed to set password to %s", name, redacted)
			ret.Result = state.Bool(false)
		}
		ret.Changes["password"] = redacted
	case w.emptyPassword:
		err := service.Run(ctx, "usermod", "-p", "", "--", name)
		if h, herr := s.hash(name); err != nil || herr != nil || h != "" {
			ret.Comment = fmt.Sprintf("User %s created but failed to empty password", name)
			ret.Result = state.Bool(false)
		}
		ret.Changes["password"] = ""
	}
	return ret, nil
}

func (s *states) absent(ctx context.Context, in *function.Input) (any, error) {
	name := in.String("name")
	cur, err := s.info(ctx, "user.info", name)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return state.Succeeded(name, fmt.Sprintf("User %s is not present", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("User %s set for removal", name), nil), nil
	}
	before, _ := names(cur["groups"])
	argv := []string{"userdel"}
	if in.Bool("purge") {
		argv = append(argv, "-r")
	}
	if in.Bool("force") {
		argv = append(argv, "-f")
	}
	if err := service.Run(ctx, append(argv, "--", name)...); err != nil {
		// userdel -r reports a missing home or mail spool (status 12)
		// after removing the user.
		if u, ierr := s.info(ctx, "user.info", name); ierr != nil || u != nil {
			r := state.Failed(name, "Failed to remove user %s", name)
			r.Warnings = []string{err.Error()}
			return r, nil
		}
	}
	changes := map[string]any{}
	for _, g := range before {
		if i, err := s.info(ctx, "group.info", g); err == nil && i == nil {
			changes[g+" group"] = "removed"
		}
	}
	changes[name] = "removed"
	return state.Succeeded(name, fmt.Sprintf("Removed user %s", name), changes), nil
}
