package output

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brinehq/brine/internal/py"
)

// Salt's highstate outputter (salt/output/highstate.py, state_output
// full): each state of a state function's return as a block of aligned
// fields in the order the states ran, then a summary per minion. A return
// that is not a state result (an error text, a list of compile errors)
// prints as Salt prints it.

// stateResult is one state's return, keyed "mod_|-id_|-name_|-fun".
type stateResult struct {
	mod, id, name, fun string
	result             any // true, false or nil (test=True)
	comment            string
	started            string
	duration           float64
	changes            any
	runNum             float64
}

// isStateReturn reports whether v is a state function's return: a
// mapping whose every key is a state key.
func isStateReturn(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, false
	}
	for k, x := range m {
		if _, isMap := x.(map[string]any); !isMap || strings.Count(k, "_|-") != 3 {
			return nil, false
		}
	}
	return m, true
}

// numberOrZero is a number of a return (a duration, a __run_num__, a
// retcode), 0 when it is missing or not a number.
func numberOrZero(v any) float64 {
	f, _ := py.Number(v)
	return f
}

func parseStates(m map[string]any) []stateResult {
	out := make([]stateResult, 0, len(m))
	for key, x := range m {
		parts := strings.SplitN(key, "_|-", 4)
		d := x.(map[string]any)
		s := stateResult{mod: parts[0], id: parts[1], name: parts[2], fun: parts[3], result: d["result"],
			started: fmt.Sprint(d["start_time"]), duration: numberOrZero(d["duration"]), changes: d["changes"], runNum: numberOrZero(d["__run_num__"])}
		if id, ok := d["__id__"].(string); ok {
			s.id = id
		}
		if n, ok := d["name"].(string); ok {
			s.name = n
		}
		switch c := d["comment"].(type) {
		case string:
			s.comment = c
		case []any:
			lines := make([]string, len(c))
			for i, l := range c {
				lines[i] = fmt.Sprint(l)
			}
			s.comment = strings.Join(lines, "\n")
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b stateResult) int {
		if a.runNum != b.runNum {
			if a.runNum < b.runNum {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// highstate writes one minion's state return.
func highstate(b *strings.Builder, id string, v any, o Options) {
	color := o.Color
	mode, byID := strings.CutSuffix(o.StateOutput, "_id")
	m, ok := isStateReturn(v)
	if !ok {
		if l, isList := v.([]any); isList && len(l) > 0 {
			// Salt's way of showing a state run that did not compile.
			b.WriteString(paint(color, lightRed, id) + ":\n")
			b.WriteString(paint(color, lightRed, "    Data failed to compile:") + "\n")
			for _, x := range l {
				b.WriteString(paint(color, lightRed, "----------") + "\n")
				for _, line := range splitLines(fmt.Sprint(x)) {
					b.WriteString(paint(color, lightRed, "    "+line) + "\n")
				}
			}
			return
		}
		nested(b, v, 0, id, color, true)
		return
	}
	states := parseStates(m)
	var succeeded, failed, changed, unchanged int
	var total float64
	b.WriteString(paint(color, cyan, id) + ":\n")
	for _, s := range states {
		hue := green
		result := "True"
		switch s.result {
		case false:
			hue, result = lightRed, "False"
			failed++
		case nil:
			hue, result = lightYellow, "None"
			unchanged++
			succeeded++
		default:
			succeeded++
		}
		if c, ok := s.changes.(map[string]any); ok && len(c) > 0 {
			changed++
			if s.result == true {
				hue = green
			}
		}
		total += s.duration
		hasChanges := false
		if c, ok := s.changes.(map[string]any); ok && len(c) > 0 {
			hasChanges = true
		}
		if o.StateQuiet && s.result == true && !hasChanges {
			continue
		}
		terse := false
		switch mode {
		case "terse":
			terse = true
		case "mixed":
			terse = s.result != false
		case "changes":
			terse = s.result != false && !hasChanges
		}
		if terse {
			status := "Clean"
			switch {
			case s.result == false:
				status = "Failed"
			case s.result == nil:
				status = "Differs"
			case hasChanges:
				status = "Changed"
			}
			label, shown := "Name", s.name
			if byID {
				label, shown = "ID", s.id
			}
			b.WriteString(paint(color, hue, fmt.Sprintf("  %s: %s - Function: %s.%s - Result: %s Started: - %s Duration: %s ms",
				label, shown, s.mod, s.fun, status, s.started, strconv.FormatFloat(s.duration, 'f', -1, 64))) + "\n")
			continue
		}
		field := func(label, value string) {
			b.WriteString(paint(color, hue, fmt.Sprintf("%13s %s", label+":", value)) + "\n")
		}
		b.WriteString(paint(color, hue, "----------") + "\n")
		field("ID", s.id)
		field("Function", s.mod+"."+s.fun)
		if s.name != s.id {
			field("Name", s.name)
		}
		field("Result", result)
		lines := splitLines(s.comment)
		if len(lines) == 0 {
			lines = []string{""}
		}
		field("Comment", lines[0])
		for _, l := range lines[1:] {
			b.WriteString(paint(color, hue, strings.Repeat(" ", 14)+l) + "\n")
		}
		field("Started", s.started)
		field("Duration", strconv.FormatFloat(s.duration, 'f', -1, 64)+" ms")
		b.WriteString(paint(color, hue, fmt.Sprintf("%13s   ", "Changes:")) + "\n")
		if c, ok := s.changes.(map[string]any); ok && len(c) > 0 {
			nestedValue(b, c, 14, "", color)
		}
	}
	stats := []string{}
	if unchanged > 0 {
		stats = append(stats, "unchanged="+strconv.Itoa(unchanged))
	}
	if changed > 0 {
		stats = append(stats, "changed="+strconv.Itoa(changed))
	}
	okLine := fmt.Sprintf("Succeeded: %d", succeeded)
	if len(stats) > 0 {
		okLine += " (" + strings.Join(stats, ", ") + ")"
	}
	width := len(strconv.Itoa(succeeded)) + len("Succeeded: ") - len("Failed: ")
	run := fmt.Sprintf("%7.3f ms", total)
	if total > 999 {
		run = fmt.Sprintf("%7.3f s", total/1000)
	}
	summaryHue := green
	if failed > 0 {
		summaryHue = lightRed
	}
	fmt.Fprintf(b, "\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n",
		paint(color, cyan, "Summary for "+id), paint(color, cyan, "------------"), paint(color, green, okLine),
		paint(color, summaryHue, fmt.Sprintf("Failed: %*d", width, failed)), paint(color, cyan, "------------"),
		paint(color, cyan, fmt.Sprintf("Total states run: %5d", len(states))), paint(color, cyan, "Total run time: "+run))
}
