// Package cron is Salt's cron state module: cron.present and
// cron.absent, one job of a user's crontab each, with Salt's changes
// ({user: command}) and comments.
//
// The crontab is read and installed with the crontab command (crontab -u
// USER -l, crontab -u USER FILE) and written the way Salt's cron
// execution module writes it: what precedes the line "# Lines below here
// are managed by Salt, do not edit" is kept as it is, and each job below
// it may carry a comment line ending in "SALT_CRON_IDENTIFIER:<id>" that
// names it, so that a job whose time or command changes is updated rather
// than added twice. A crontab Salt wrote is read by brine, and the other
// way round.
package cron

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/state"
)

const (
	// tag is the line after which Salt manages the crontab.
	tag = "# Lines below here are managed by Salt, do not edit"
	// idMark introduces a job's identifier in its comment line.
	idMark = "SALT_CRON_IDENTIFIER"
	// noID is Salt's identifier of a job that has none.
	noID = "NO ID SET"
	// disabled prefixes a commented-out job.
	disabled = "#DISABLED#"
)

// Module declares the cron states.
func Module(*modules.Env) []function.Func {
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	usr := function.Param{Name: "user", Kind: function.String, Default: "root"}
	identifier := function.Param{Name: "identifier", Kind: function.Any, Default: false}
	special := function.Param{Name: "special", Kind: function.String}
	field := func(n string) function.Param { return function.Param{Name: n, Kind: function.String, Default: "*"} }
	return []function.Func{
		{Name: "cron.present",
			Doc: "Ensure the command name runs from user's crontab at the time given (minute, hour, daymonth, month, " +
				"dayweek: cron's fields, or random; special: @hourly and the like).",
			Params: []function.Param{name, usr, field("minute"), field("hour"), field("daymonth"), field("month"), field("dayweek"),
				{Name: "comment", Kind: function.String},
				{Name: "commented", Kind: function.Bool, Default: false},
				identifier, special},
			Run: present},
		{Name: "cron.absent", Doc: "Ensure the command name is not in user's crontab.",
			Params:    []function.Param{name, usr, identifier, special},
			VarKwargs: true, Run: absent},
		{Name: "cron.env_present", Doc: "Ensure the variable name is set to value in user's crontab (MAILTO, PATH…).",
			Params: []function.Param{name, {Name: "value", Kind: function.Any}, usr}, Run: envPresent},
		{Name: "cron.env_absent", Doc: "Ensure the variable name is not set in user's crontab.",
			Params: []function.Param{name, usr}, Run: envAbsent},
	}
}

// job is one line of the managed part: a timed job (spec empty) or a
// special one (@reboot); comment and identifier are nil when absent
// (Salt's None).
type job struct {
	minute, hour, daymonth, month, dayweek string
	spec                                   string
	cmd                                    string
	comment, identifier                    *string
	commented                              bool
}

// id is Salt's _cron_id.
func (j job) id() string {
	if j.identifier == nil || *j.identifier == "" {
		return noID
	}
	return *j.identifier
}

// crontab is a user's crontab as Salt's list_tab reads it.
type crontab struct {
	pre      []string
	env      [][2]string
	crons    []job
	specials []job
}

func ptr(s string) *string { return &s }

// parse reads a crontab as Salt's list_tab.
func parse(text string) *crontab {
	tab := &crontab{}
	managed := false
	var comment, identifier *string
	for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		if text == "" {
			break
		}
		if line == tag {
			managed = true
			continue
		}
		if !managed {
			tab.pre = append(tab.pre, line)
			continue
		}
		commented := false
		if strings.HasPrefix(line, disabled) {
			line, commented = line[len(disabled):], true
		}
		switch {
		case strings.HasPrefix(line, "@"):
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			tab.specials = append(tab.specials, job{spec: f[0], cmd: strings.Join(f[1:], " "), comment: comment, identifier: identifier, commented: commented})
			comment, identifier = nil, nil
		case strings.HasPrefix(line, "#"):
			c := strings.TrimLeft(line, "# ")
			if before, after, ok := strings.Cut(c, idMark); ok {
				c = strings.TrimRight(before, " \t")
				if len(after) > 1 {
					identifier = ptr(after[1:])
				}
			}
			if comment == nil {
				comment = ptr(c)
			} else {
				comment = ptr(*comment + "\n" + c)
			}
		case strings.Index(line, "=") > 0 && (!strings.Contains(line, " ") || strings.Index(line, "=") < strings.Index(line, " ")):
			k, v, _ := strings.Cut(line, "=")
			tab.env = append(tab.env, [2]string{k, v})
		case len(strings.Split(line, " ")) > 5:
			f := strings.Split(line, " ")
			tab.crons = append(tab.crons, job{minute: f[0], hour: f[1], daymonth: f[2], month: f[3], dayweek: f[4],
				cmd: strings.Join(f[5:], " "), comment: comment, identifier: identifier, commented: commented})
			comment, identifier = nil, nil
		}
	}
	return tab
}

// render writes the crontab as Salt's _render_tab.
func (tab *crontab) render() string {
	var b strings.Builder
	for _, l := range tab.pre {
		b.WriteString(l + "\n")
	}
	if len(tab.pre) == 0 || tab.pre[len(tab.pre)-1] != tag {
		b.WriteString(tag + "\n")
	}
	for _, e := range tab.env {
		if e[1] == "" {
			fmt.Fprintf(&b, "%s=\"\"\n", e[0])
		} else {
			fmt.Fprintf(&b, "%s=%s\n", e[0], e[1])
		}
	}
	line := func(j job, what string) {
		if j.comment != nil || j.identifier != nil {
			c := "#"
			if j.comment != nil && *j.comment != "" {
				c += " " + strings.ReplaceAll(strings.TrimRight(*j.comment, " \t\n"), "\n", "\n# ")
			}
			if j.identifier != nil && *j.identifier != "" {
				c += " " + idMark + ":" + *j.identifier
			}
			b.WriteString(c + "\n")
		}
		if j.commented {
			b.WriteString(disabled)
		}
		b.WriteString(what + "\n")
	}
	for _, j := range tab.crons {
		line(j, strings.Join([]string{j.minute, j.hour, j.daymonth, j.month, j.dayweek, j.cmd}, " "))
	}
	for _, j := range tab.specials {
		line(j, j.spec+" "+j.cmd)
	}
	return b.String()
}

// matched is Salt's _cron_matched: whether j is the job of cmd and
// identifier.
func matched(j job, cmd string, identifier *string) bool {
	cid := j.id()
	eid := noID
	if identifier != nil && *identifier != "" {
		eid = *identifier
	}
	if j.cmd != cmd && cid == noID && eid == noID {
		return false
	}
	if j.cmd == cmd && cid == noID && eid != noID {
		return true
	}
	return eid == cid
}

// needsChange is Salt's _needs_change: new (nil: any) differs from old;
// random replaces only "*", and a range a value outside it.
func needsChange(old, new *string) bool {
	switch {
	case new == nil:
		return false
	case old != nil && *old == *new:
		return false
	case *new == "random":
		return old != nil && *old == "*"
	case old != nil && inRange(*old, *new):
		// A value picked from a "start:end" range stays.
		return false
	}
	return true
}

// inRange reports whether v is a number within the "start:end" range r.
func inRange(v, r string) bool {
	a, b, ok := strings.Cut(r, ":")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	n, err3 := strconv.Atoi(v)
	if !ok || err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	return min(x, y) <= n && n <= max(x, y)
}

// fieldRange is each time field's values.
var fieldRange = map[string][2]int{"minute": {0, 59}, "hour": {0, 23}, "daymonth": {1, 31}, "month": {1, 12}, "dayweek": {0, 6}}

// randomize is Salt's _get_cron_date_time: "random" becomes a value of
// the field's range, a "start:end" range one value in it.
func randomize(field, v string) string {
	r := fieldRange[field]
	lo, hi := r[0], r[1]
	if v == "random" {
		return strconv.Itoa(lo + rand.IntN(hi-lo+1))
	}
	if a, b, ok := strings.Cut(v, ":"); ok {
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if err1 == nil && err2 == nil {
			if x > y {
				x, y = y, x
			}
			return strconv.Itoa(x + rand.IntN(y-x+1))
		}
	}
	return v
}

// read returns user's crontab ("" when there is none), as Salt's
// raw_cron.
func read(ctx context.Context, user string) (string, error) {
	res, err := service.Exec(ctx, "crontab", "-u", user, "-l")
	if err != nil {
		return "", fmt.Errorf("crontab -l: %w", err)
	}
	if res.Code != 0 {
		if strings.Contains(res.Stderr, "no crontab for") {
			return "", nil
		}
		return "", fmt.Errorf("crontab -u %s -l: %s", user, res.Stderr)
	}
	lines := strings.SplitAfter(res.Stdout, "\n")
	// Some crontabs list with a three-line header of their own.
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# DO NOT EDIT THIS FILE - edit the master and reinstall.") {
		lines = lines[min(3, len(lines)):]
	}
	return strings.Join(lines, ""), nil
}

// write installs text as user's crontab; the error is crontab's stderr,
// which Salt's comment shows.
func write(ctx context.Context, user, text string) error {
	f, err := os.CreateTemp("", "brine-crontab-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	res, err := service.Exec(ctx, "crontab", "-u", user, f.Name())
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("%s", res.Stderr)
	}
	return nil
}

// args are a state's arguments as Salt's cron functions use them.
type args struct {
	user, cmd                              string
	minute, hour, daymonth, month, dayweek string
	special                                string
	comment, identifier                    *string
	commented                              bool
}

func read2args(in *function.Input) (args, error) {
	a := args{
		user: in.String("user"), cmd: strings.TrimSpace(in.String("name")), special: in.String("special"),
		commented: in.Bool("commented"),
	}
	for _, f := range []struct {
		to   *string
		name string
	}{{&a.minute, "minute"}, {&a.hour, "hour"}, {&a.daymonth, "daymonth"}, {&a.month, "month"}, {&a.dayweek, "dayweek"}} {
		*f.to = strings.ToLower(in.String(f.name))
		if *f.to == "" && in.Has(f.name) {
			*f.to = "*"
		}
	}
	if in.Has("comment") {
		a.comment = ptr(in.String("comment"))
	}
	switch id := in.Value("identifier"); id {
	case false:
		// Salt's default: the command names the job.
		a.identifier = ptr(a.cmd)
	case nil:
	default:
		switch t := id.(type) {
		case string, int64, float64:
			a.identifier = ptr(fmt.Sprint(t))
		default:
			return a, fmt.Errorf("identifier: want a string, got %T", id)
		}
	}
	if a.cmd == "" || strings.ContainsAny(a.cmd, "\n\r") {
		return a, fmt.Errorf("the command %q is not one crontab line", a.cmd)
	}
	if a.user == "" || strings.HasPrefix(a.user, "-") {
		return a, fmt.Errorf("invalid user %q", a.user)
	}
	return a, nil
}

// wantedJob is the job a asks for.
func (a args) wantedJob() job {
	return job{minute: a.minute, hour: a.hour, daymonth: a.daymonth, month: a.month, dayweek: a.dayweek,
		spec: a.special, cmd: a.cmd, comment: a.comment, identifier: a.identifier, commented: a.commented}
}

// differs reports whether cur must change to be want (Salt's tests of
// set_job and _check_cron).
func differs(cur, want job) bool {
	b := func(v bool) *string { return ptr(strconv.FormatBool(v)) }
	pairs := [][2]*string{
		{cur.comment, want.comment}, {b(cur.commented), b(want.commented)},
		{ptr(cur.id()), want.identifier}, {&cur.cmd, &want.cmd},
	}
	if want.spec == "" {
		pairs = append(pairs, [2]*string{&cur.minute, &want.minute}, [2]*string{&cur.hour, &want.hour},
			[2]*string{&cur.daymonth, &want.daymonth}, [2]*string{&cur.month, &want.month}, [2]*string{&cur.dayweek, &want.dayweek})
	} else {
		pairs = append(pairs, [2]*string{&cur.spec, &want.spec})
	}
	for _, p := range pairs {
		if needsChange(p[0], p[1]) {
			return true
		}
	}
	return false
}

// merged is want with cur's values where want asks for no change, as
// Salt's set_job keeps them.
func merged(cur, want job) job {
	keep := func(old, new *string) *string {
		if !needsChange(old, new) {
			return old
		}
		return new
	}
	out := want
	if want.spec == "" {
		out.minute, out.hour = *keep(&cur.minute, &want.minute), *keep(&cur.hour, &want.hour)
		out.daymonth, out.month, out.dayweek = *keep(&cur.daymonth, &want.daymonth), *keep(&cur.month, &want.month), *keep(&cur.dayweek, &want.dayweek)
	}
	out.comment = keep(cur.comment, want.comment)
	if want.identifier == nil {
		out.identifier = cur.identifier
	}
	return out
}

// load is what present and absent start with: the state's arguments,
// the user's crontab and the list in it (crons or specials) the job
// belongs in, or the failure to answer with. sep is what stands in the
// failure between Salt's words and the error (present's has a newline,
// absent's not).
func load(ctx context.Context, in *function.Input, sep string) (a args, tab *crontab, list *[]job, fail *state.Result) {
	a, err := read2args(in)
	if err != nil {
		r := state.Failed(in.String("name"), "%v", err)
		return a, nil, nil, &r
	}
	text, err := read(ctx, a.user)
	if err != nil {
		r := commitFailed(a, sep, err)
		return a, nil, nil, &r
	}
	tab = parse(text)
	list = &tab.crons
	if a.special != "" {
		list = &tab.specials
	}
	return a, tab, list, nil
}

// commitFailed is Salt's failure to read or write the crontab, sep as
// load's.
func commitFailed(a args, sep string, err error) state.Result {
	return state.Failed(a.cmd, "Cron %s for user %s failed to commit with error%s%v", a.cmd, a.user, sep, err)
}

func present(ctx context.Context, in *function.Input) (any, error) {
	a, tab, list, fail := load(ctx, in, " \n")
	if fail != nil {
		return *fail, nil
	}
	name := a.cmd
	want := a.wantedJob()
	status := "absent"
	at := -1
	for i, j := range *list {
		if matched(j, a.cmd, a.identifier) {
			at, status = i, "present"
			if differs(j, want) {
				status = "update"
			}
			break
		}
	}
	switch {
	case status == "present":
		return state.Succeeded(name, fmt.Sprintf("Cron %s already present", name), nil), nil
	case state.From(ctx).Test && status == "absent":
		return state.Pending(name, fmt.Sprintf("Cron %s is set to be added", name), nil), nil
	case state.From(ctx).Test:
		return state.Pending(name, fmt.Sprintf("Cron %s is set to be updated", name), nil), nil
	}
	if at >= 0 {
		want = merged((*list)[at], want)
		*list = append((*list)[:at], (*list)[at+1:]...)
	}
	if want.spec == "" {
		want.minute, want.hour = randomize("minute", want.minute), randomize("hour", want.hour)
		want.daymonth, want.month, want.dayweek = randomize("daymonth", want.daymonth), randomize("month", want.month), randomize("dayweek", want.dayweek)
	}
	*list = append(*list, want)
	if err := write(ctx, a.user, tab.render()); err != nil {
		return commitFailed(a, " \n", err), nil
	}
	if status == "update" {
		return state.Succeeded(name, fmt.Sprintf("Cron %s updated", name), map[string]any{a.user: name}), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Cron %s added to %s's crontab", name, a.user), map[string]any{a.user: name}), nil
}

func absent(ctx context.Context, in *function.Input) (any, error) {
	a, tab, list, fail := load(ctx, in, " ")
	if fail != nil {
		return *fail, nil
	}
	name := a.cmd
	at := -1
	for i, j := range *list {
		if matched(j, a.cmd, a.identifier) && (a.special == "" || j.spec == a.special) {
			at = i
			break
		}
	}
	if at < 0 {
		if state.From(ctx).Test {
			return state.Succeeded(name, fmt.Sprintf("Cron %s is absent", name), nil), nil
		}
		return state.Succeeded(name, fmt.Sprintf("Cron %s already absent", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Cron %s is set to be removed", name), nil), nil
	}
	*list = append((*list)[:at], (*list)[at+1:]...)
	if err := write(ctx, a.user, tab.render()); err != nil {
		return commitFailed(a, " ", err), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Cron %s removed from %s's crontab", name, a.user), map[string]any{a.user: name}), nil
}

// envValue is a variable's value as the crontab holds it: None is "",
// written NAME="" (which reads back as "").
func envValue(v any) string {
	if v == nil {
		return ""
	}
	if s := fmt.Sprint(v); s != `""` {
		return s
	}
	return ""
}

// envAt is the index of variable name in tab, -1 when it is not set.
func envAt(tab *crontab, name string) int {
	at := -1
	for i, e := range tab.env {
		if e[0] == name {
			at = i
		}
	}
	return at
}

func validEnvName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "= \t\n#")
}

// envPresent is Salt's cron.env_present: a changed value moves the
// variable to the end, as Salt's set_env removes and adds it.
func envPresent(ctx context.Context, in *function.Input) (any, error) {
	name, user := in.String("name"), in.String("user")
	value := envValue(in.Value("value"))
	if !validEnvName(name) || strings.ContainsAny(value, "\n\r") {
		return state.Failed(name, "Cron env %s for user %s failed to commit with error \ninvalid variable", name, user), nil
	}
	text, err := read(ctx, user)
	if err != nil {
		return state.Failed(name, "Cron env %s for user %s failed to commit with error \n%v", name, user, err), nil
	}
	tab := parse(text)
	at := envAt(tab, name)
	status := "absent"
	if at >= 0 {
		status = "present"
		if envValue(tab.env[at][1]) != value {
			status = "update"
		}
	}
	switch {
	case status == "present":
		return state.Succeeded(name, fmt.Sprintf("Cron env %s already present", name), nil), nil
	case state.From(ctx).Test && status == "absent":
		return state.Pending(name, fmt.Sprintf("Cron env %s is set to be added", name), nil), nil
	case state.From(ctx).Test:
		return state.Pending(name, fmt.Sprintf("Cron env %s is set to be updated", name), nil), nil
	}
	if at >= 0 {
		tab.env = append(tab.env[:at], tab.env[at+1:]...)
	}
	tab.env = append(tab.env, [2]string{name, value})
	if err := write(ctx, user, tab.render()); err != nil {
		return state.Failed(name, "Cron env %s for user %s failed to commit with error \n%v", name, user, err), nil
	}
	if status == "update" {
		return state.Succeeded(name, fmt.Sprintf("Cron env %s updated", name), map[string]any{user: name}), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Cron env %s added to %s's crontab", name, user), map[string]any{user: name}), nil
}

func envAbsent(ctx context.Context, in *function.Input) (any, error) {
	name, user := strings.TrimSpace(in.String("name")), in.String("user")
	text, err := read(ctx, user)
	if err != nil {
		return state.Failed(name, "Cron env %s for user %s failed to commit with error %v", name, user, err), nil
	}
	tab := parse(text)
	at := envAt(tab, name)
	if at < 0 {
		if state.From(ctx).Test {
			return state.Succeeded(name, fmt.Sprintf("Cron env %s is absent", name), nil), nil
		}
		return state.Succeeded(name, fmt.Sprintf("Cron env %s already absent", name), nil), nil
	}
	if state.From(ctx).Test {
		return state.Pending(name, fmt.Sprintf("Cron env %s is set to be removed", name), nil), nil
	}
	tab.env = append(tab.env[:at], tab.env[at+1:]...)
	if err := write(ctx, user, tab.render()); err != nil {
		return state.Failed(name, "Cron env %s for user %s failed to commit with error %v", name, user, err), nil
	}
	return state.Succeeded(name, fmt.Sprintf("Cron env %s removed from %s's crontab", name, user), map[string]any{user: name}), nil
}
