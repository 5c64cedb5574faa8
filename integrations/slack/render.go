package slack

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/internal/fnmatch"
	"github.com/brinehq/brine/jobs"
	"github.com/brinehq/brine/output"
)

// op is what a message does to its thread.
type op int

const (
	opPost   op = iota // a message of its own
	opParent           // a thread's parent, remembered durably
	opReply            // a reply in the thread (on its own when there is no parent)
	opUpdate           // an edit of the parent (posted on its own when it cannot be edited)
	opSkip             // nothing to post: remember that the rule left the thread out
	opTally            // count an agent's result in its job's thread; summarise after the last
)

func (o op) String() string {
	return [...]string{"post", "parent", "reply", "update", "skip", "tally"}[o]
}

// message is one thing to send to Slack.
type message struct {
	Op      op
	Channel string
	// Thread is the durable key of the thread (its parent).
	Thread string
	// Event is the id of the event the message comes from: a redelivered
	// parent is recognised and not posted twice.
	Event string
	Text  string
	// Headline goes before Text when a reply is posted on its own (its
	// parent not posted when it is sent): a job's command line.
	Headline string
	Color    string
	// Detail is shown in an attachment under the text (a return excerpt).
	Detail string
	// Minions are the agents a job was sent to (a parent's, remembered
	// for the summary); Minion and OK one agent's result (a tally).
	Minions []string
	Minion  string
	OK      bool
}

// selfFunctions are the integration's own runner functions: their jobs are
// not audited, so that a reaction posting to Slack for every job does not
// also feed the audit trail with its own posts.
func selfFunction(fun string) bool {
	return strings.HasPrefix(strings.TrimPrefix(fun, "runner."), "slack.")
}

// ErrorTag is fired when Slack refuses the integration's messages.
const ErrorTag = "brine/slack/error"

// ownEvent reports events the integration must never post: its own.
func (a *Audit) ownEvent(ev *bus.Event) bool {
	return strings.HasPrefix(ev.Tag, "brine/slack/") || ev.Source == a.events.Source
}

// render turns an event into the messages every matching rule wants sent.
// lookup finds a thread's parent (nil when none is remembered).
func (s *state) render(ev *bus.Event, lookup func(key string) *thread) ([]message, error) {
	var out []message
	var data map[string]any
	for i := range s.cfg.Audit {
		r := &s.cfg.Audit[i]
		channel := r.Channel
		if channel == "" {
			channel = s.cfg.Channel
		}
		switch r.Preset {
		case PresetJobs:
			ms, err := s.renderJob(i, r, channel, ev, lookup)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		case PresetCloud:
			out = append(out, s.renderCloud(i, channel, ev)...)
		default:
			if !matchAny(r.tags, ev.Tag) {
				continue
			}
			if data == nil {
				var err error
				if data, err = ev.DataMap(); err != nil {
					return nil, err
				}
			}
			f := fields{fun: str(data["fun"]), user: str(data["user"])}
			if t, ok := data["tgt"]; ok {
				f.tgt, f.hasTgt = jobs.TargetText(t), true
			}
			if !r.matches(f) {
				continue
			}
			out = append(out, message{Op: opPost, Channel: channel, Event: ev.ID, Color: r.Color,
				Text: escape(s.red.Text(format(r.Text, ev.Tag, s.red.Value("", data).(map[string]any))))})
		}
	}
	return out, nil
}

// fields are what rule conditions look at.
type fields struct {
	fun, tgt, user string
	hasTgt         bool
}

func (r *Rule) matches(f fields) bool {
	fun := []string{f.fun, strings.TrimPrefix(f.fun, "runner.")}
	switch {
	case len(r.fun) > 0 && !matchAny(r.fun, fun...),
		matchAny(r.funNot, fun...),
		f.hasTgt && len(r.tgt) > 0 && !matchAny(r.tgt, f.tgt),
		f.hasTgt && matchAny(r.tgtNot, f.tgt),
		f.user != "" && len(r.user) > 0 && !matchAny(r.user, f.user),
		f.user != "" && matchAny(r.userNot, f.user):
		return false
	}
	return true
}

func matchAny(globs []*fnmatch.Glob, s ...string) bool {
	for _, g := range globs {
		for _, x := range s {
			if g.Match(x) {
				return true
			}
		}
	}
	return false
}

func (s *state) renderJob(i int, r *Rule, channel string, ev *bus.Event, lookup func(string) *thread) ([]message, error) {
	if _, _, _, _, ok := jobs.ParseTag(ev.Tag); !ok {
		return nil, nil
	}
	j, what, minion, err := jobs.FromEvent(ev)
	if err != nil {
		return nil, err
	}
	if selfFunction(j.Fun) {
		return nil, nil
	}
	key := fmt.Sprintf("r%d.job.%s", i, j.JID)
	f := fields{fun: j.Fun, user: j.User}
	if j.Tgt != nil {
		f.tgt, f.hasTgt = jobs.TargetText(j.Tgt), true
	}
	if what == "new" {
		if !r.matches(f) {
			// Results carry less than the start (no target): remember
			// the decision for them.
			return []message{{Op: opSkip, Channel: channel, Thread: key, Event: ev.ID}}, nil
		}
		m := message{Op: opParent, Channel: channel, Thread: key, Event: ev.ID, Text: s.jobHeadline(j)}
		for _, id := range j.Minions {
			if !slices.Contains(j.NotConnected, id) {
				m.Minions = append(m.Minions, id)
			}
		}
		if len(m.Minions) < 2 {
			m.Minions = nil // one agent's reply is its own summary
		}
		return []message{m}, nil
	}
	if what == "prog" {
		return s.renderStep(channel, key, ev, lookup), nil
	}
	// A result: under its parent when the start was posted; on its own
	// (with the command) when the start was not seen but the rule selects
	// what the result tells. Which of the two is decided when it is sent:
	// another master may be posting the parent meanwhile.
	m := message{Op: opReply, Channel: channel, Thread: key, Event: ev.ID}
	parent := lookup(key)
	if parent != nil && parent.Skip {
		return nil, nil
	}
	if parent == nil {
		if !r.matches(f) {
			return nil, nil
		}
		m.Headline = s.jobHeadline(j)
	}
	ok, ret, dur := false, any(nil), j.Duration
	if j.Kind == jobs.KindRun {
		ok, ret = j.Success != nil && *j.Success, j.Return
	} else {
		mr := j.Returns[minion]
		ok, ret = mr.Success, mr.Return
		dur = mr.Time.Sub(j.StartTime).Seconds()
	}
	status := "succeeded"
	m.Color = "good"
	if !ok {
		status, m.Color = "failed", "danger"
	}
	icon := map[bool]string{true: ":white_check_mark:", false: ":x:"}[ok]
	if minion != "" {
		m.Text = fmt.Sprintf("%s *%s* %s in %.2fs (retcode %d)", icon, escape(minion), status, dur, j.Returns[minion].Retcode)
	} else {
		m.Text = fmt.Sprintf("%s %s in %.2fs", icon, status, dur)
	}
	m.Detail = s.excerpt(ret)
	if minion == "" {
		return []message{m}, nil
	}
	return []message{m, {Op: opTally, Channel: channel, Thread: key, Event: ev.ID, Minion: minion, OK: ok}}, nil
}

// maxCommand bounds the command line shown for a job (a mapping argument
// can be long; Slack refuses texts over 40,000 characters).
const maxCommand = 400

// jobHeadline is the command line and who ran it.
func (s *state) jobHeadline(j *jobs.Job) string {
	cmd := s.red.Text(jobs.CommandLine(j, s.red.Value))
	if r := []rune(cmd); len(r) > maxCommand {
		cmd = string(r[:maxCommand]) + "…"
	}
	user := j.User
	if user == "" {
		user = "unknown"
	}
	return fmt.Sprintf("`%s` by *%s* (jid %s)", strings.ReplaceAll(escape(cmd), "`", "'"), escape(user), j.JID)
}

// cloudKey is the thread of a VM's current lifecycle.
func cloudKey(i int, name string) string {
	return fmt.Sprintf("r%d.cloud.%s", i, base64.RawURLEncoding.EncodeToString([]byte(name)))
}

func (s *state) renderCloud(i int, channel string, ev *bus.Event) []message {
	parts := strings.Split(ev.Tag, "/")
	if len(parts) < 4 || parts[0] != "salt" || parts[1] != "cloud" {
		return nil
	}
	name, task := parts[2], strings.Join(parts[3:], "/")
	data, err := ev.DataMap()
	if err != nil {
		return nil
	}
	data, _ = s.red.Value("", data).(map[string]any)
	splitProvider(data)
	key := cloudKey(i, name)
	vm := "*" + escape(name) + "*"
	step := func(text, color string) message {
		return message{Op: opReply, Channel: channel, Thread: key, Event: ev.ID, Text: text, Color: color}
	}
	switch {
	case task == "creating" || task == "destroying":
		return []message{{Op: opParent, Channel: channel, Thread: key, Event: ev.ID,
			Text: fmt.Sprintf(":cloud: %s: %s%s", vm, task, details(data, "profile", "provider", "driver", "instance_id"))}}
	case task == "created" || task == "destroyed":
		final := fmt.Sprintf(":cloud: %s: %s :white_check_mark:%s", vm, task,
			details(data, "ip_address", "instance_id", "profile", "provider"))
		return []message{step(":white_check_mark: "+task, "good"), {Op: opUpdate, Channel: channel, Thread: key, Event: ev.ID, Text: final, Color: "good"}}
	case strings.HasSuffix(task, "/failed"):
		at := strings.TrimSuffix(task, "/failed")
		text := fmt.Sprintf(":x: failed at %s: %s", escape(at), escape(str(data["error"])))
		final := fmt.Sprintf(":cloud: %s: failed at %s :x:", vm, escape(at))
		return []message{step(text, "danger"), {Op: opUpdate, Channel: channel, Thread: key, Event: ev.ID, Text: final, Color: "danger"}}
	}
	text := "`" + escape(task) + "`"
	if e := str(data["event"]); e != "" {
		text += " " + escape(e)
	}
	return []message{step(text, "")}
}

// details lists the present keys as " (k v, …)".
// splitProvider shows salt-cloud's provider and driver fields, both
// "<alias>:<driver>" in its events, as what they are: the provider's alias
// and the driver.
func splitProvider(data map[string]any) {
	for _, k := range []string{"provider", "driver"} {
		s, _ := data[k].(string)
		alias, driver, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		if k == "provider" {
			data[k] = alias
		} else {
			data[k] = driver
		}
	}
}

func details(data map[string]any, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if v, ok := data[k]; ok && v != nil && v != "" {
			parts = append(parts, k+" "+escape(fmt.Sprint(v)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// excerpt is a short, redacted view of a return, as a code block.
func (s *state) excerpt(ret any) string {
	if s.cfg.Excerpt == 0 || ret == nil {
		return ""
	}
	var text string
	if str, ok := ret.(string); ok {
		text = str
	} else if st, ok := stateSummary(s.red.Value("", ret)); ok {
		text = st
	} else {
		b, err := yaml.Marshal(s.red.Value("", ret))
		if err != nil {
			text = fmt.Sprint(ret)
		} else {
			text = string(b)
		}
	}
	text = strings.TrimSpace(s.red.Text(text))
	lines := strings.Split(text, "\n")
	cut := false
	if len(lines) > 15 {
		lines, cut = lines[:15], true
	}
	text = strings.Join(lines, "\n")
	if r := []rune(text); len(r) > s.cfg.Excerpt {
		text, cut = string(r[:s.cfg.Excerpt]), true
	}
	if cut {
		text += "\n…"
	}
	return "```" + strings.ReplaceAll(escape(text), "```", "'''") + "```"
}

// escape makes text safe for Slack's mrkdwn: &, < and > are control
// characters there.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]]+\])*)\}`)

// format fills a rule's text: {tag}, {key} for a data key, {data[a][b]} or
// {a[b]} for nested keys, as Python's str.format does with the event data
// (Salt's slack_webhook titles use the same style). Unknown keys stay as
// written, so a typo shows in Slack instead of vanishing.
func format(text, tag string, data map[string]any) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		var v any
		switch sub[1] {
		case "tag":
			v = tag
		case "data":
			v = data
		default:
			var ok bool
			if v, ok = data[sub[1]]; !ok {
				return m
			}
		}
		for _, k := range strings.Split(strings.Trim(sub[2], "[]"), "][") {
			if k == "" {
				continue
			}
			mm, ok := v.(map[string]any)
			if !ok {
				return m
			}
			if v, ok = mm[strings.Trim(k, `'"`)]; !ok {
				return m
			}
		}
		return str(v)
	})
}

// stateSummary is what a state run's return shows in its thread: Salt's
// summary (succeeded, changed, failed, total), then one terse line per
// state that changed or failed — the part of a highstate a person reads.
func stateSummary(ret any) (string, bool) {
	var rets output.Returns
	rets.Add("x", ret)
	var b strings.Builder
	if err := output.Write(&b, "highstate", rets, output.Options{StateOutput: "terse", StateQuiet: true}); err != nil {
		return "", false
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Summary for ") })
	if at < 0 || len(lines) < at+7 {
		return "", false
	}
	states := lines[1:at]
	var out []string
	for _, l := range lines[at+2:] {
		if strings.HasPrefix(l, "Succeeded:") || strings.HasPrefix(l, "Failed:") || strings.HasPrefix(l, "Total") {
			out = append(out, l)
		}
	}
	for _, l := range states {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n"), true
}

// renderStep is an orchestration step's end, in its job's thread (when
// the job's start was posted): a person follows the run step by step.
func (s *state) renderStep(channel, key string, ev *bus.Event, lookup func(string) *thread) []message {
	parent := lookup(key)
	if parent == nil || parent.Skip {
		return nil
	}
	data, err := ev.DataMap()
	if err != nil {
		return nil
	}
	tag, _ := data["tag"].(string)
	ret, _ := data["ret"].(map[string]any)
	parts := strings.SplitN(tag, "_|-", 4)
	if len(parts) != 4 || ret == nil {
		return nil
	}
	icon, status, color := ":white_check_mark:", "succeeded", "good"
	switch ret["result"] {
	case false:
		icon, status, color = ":x:", "failed", "danger"
	case nil:
		icon, status, color = ":large_yellow_circle:", "would change (test)", "warning"
	}
	if ret["__state_ran__"] == false {
		icon, status = ":fast_forward:", "did not run"
	}
	ms, _ := ret["duration"].(float64)
	m := message{Op: opReply, Channel: channel, Thread: key, Event: ev.ID, Color: color,
		Text: fmt.Sprintf("%s step *%s* (`%s.%s`) %s in %.2fs", icon, escape(parts[1]), parts[0], parts[3], status, ms/1000)}
	if c, ok := ret["comment"].(string); ok && c != "" {
		m.Detail = s.excerpt(c)
	}
	return []message{m}
}
