package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// targetFlags are the salt CLI's short options for a target type (glob needs
// none).
var targetFlags = map[string]string{
	"glob":        "",
	"pcre":        "-E",
	"list":        "-L",
	"grain":       "-G",
	"grain_pcre":  "-P",
	"pillar":      "-I",
	"pillar_pcre": "-J",
	"compound":    "-C",
	"nodegroup":   "-N",
	"ipcidr":      "-S",
	"range":       "-R",
}

// CommandLine renders a job as the command an operator would have typed:
// `salt -G 'roles:nginx' cmd.run 'nginx restart'` for a targeted job,
// `salt-run test.arg hello color=red` for a runner job, with shell quoting.
// redact, when not nil, sees every argument value first (name is the
// keyword, empty for a positional argument); Redactor.Value is one.
func CommandLine(j *Job, redact func(name string, v any) any) string {
	if redact == nil {
		redact = func(_ string, v any) any { return v }
	}
	var b strings.Builder
	if j.Kind == KindJob {
		b.WriteString("salt ")
		if flag, ok := targetFlags[j.TgtType]; !ok && j.TgtType != "" {
			b.WriteString("--" + strings.ReplaceAll(j.TgtType, "_", "-") + " ")
		} else if flag != "" {
			b.WriteString(flag + " ")
		}
		b.WriteString(Quote(TargetText(j.Tgt)))
		b.WriteString(" " + j.Fun)
	} else {
		b.WriteString("salt-run " + strings.TrimPrefix(j.Fun, "runner."))
	}
	for i, a := range j.Arg {
		kw, isMap := a.(map[string]any)
		// Salt marks keyword arguments of targeted jobs with __kwarg__; a
		// runner job's keyword arguments are its trailing mapping.
		if isMap && (kw["__kwarg__"] == true || j.Kind == KindRun && i == len(j.Arg)-1) {
			keys := make([]string, 0, len(kw))
			for k := range kw {
				if k != "__kwarg__" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				b.WriteString(" " + k + "=" + Quote(argText(redact(k, kw[k]))))
			}
			continue
		}
		b.WriteString(" " + Quote(argText(redact("", a))))
	}
	return b.String()
}

// TargetText is a job's target as typed on the command line: a list target
// comma-separated, no target "*".
func TargetText(t any) string {
	if l, ok := t.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ",")
	}
	if t == nil {
		return "*"
	}
	return fmt.Sprint(t)
}

// argText is an argument as it is typed on a salt command line: YAML
// scalars plain, lists and mappings in JSON flow form.
func argText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_*-]+$`)

// Quote quotes s for a POSIX shell the way Python's shlex.quote does, except
// that a bare * (a glob target) is left alone.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if shellSafe.MatchString(s) && (s == "*" || !strings.Contains(s, "*")) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
