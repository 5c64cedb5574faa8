package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// groups of four states each: a directory, a file from contents, a file
// rendered from a salt:// template (its hash asked of the master on every
// run, the file fetched from it on the first) and a command run once
// (creates:). 25 of them are the 100 states.
const groups = 25

// slsName is the SLS applied (state.apply saltside), top.sls naming it too.
const slsName = "saltside"

// Tree is the file_roots tree both masters serve, and where it writes.
type Tree struct {
	FileRoot string `json:"file_root"`
	// Target is the directory the states manage, removed before each
	// first run.
	Target string `json:"target"`
	States int    `json:"states"`
}

const sls = `{%% set root = %q %%}
{%% for i in range(%d) %%}
saltside-dir-{{ i }}:
  file.directory:
    - name: {{ root }}/d{{ i }}
    - makedirs: True

saltside-notes-{{ i }}:
  file.managed:
    - name: {{ root }}/d{{ i }}/notes.txt
    - contents: "group {{ i }} of {{ grains['id'] }}"
    - require:
      - file: saltside-dir-{{ i }}

saltside-conf-{{ i }}:
  file.managed:
    - name: {{ root }}/d{{ i }}/app.conf
    - source: salt://saltside/app.conf.j2
    - template: jinja
    - mode: "0640"
    - context:
        group: {{ i }}
    - require:
      - file: saltside-dir-{{ i }}

saltside-stamp-{{ i }}:
  cmd.run:
    - name: echo {{ i }} > {{ root }}/d{{ i }}/stamp
    - creates: {{ root }}/d{{ i }}/stamp
    - require:
      - file: saltside-conf-{{ i }}
{%% endfor %%}
`

const appConf = `# managed by state saltside-conf-{{ group }}
group = {{ group }}
minion = {{ grains['id'] }}
port = {{ 8000 + group }}
`

// writeTree writes the file_roots tree under dir: top.sls, saltside.sls
// and the template it renders.
func writeTree(dir string) (Tree, error) {
	t := Tree{FileRoot: filepath.Join(dir, "file_roots"), Target: filepath.Join(dir, "target"), States: 4 * groups}
	files := map[string]string{
		"top.sls":              "base:\n  '*':\n    - " + slsName + "\n",
		slsName + ".sls":       fmt.Sprintf(sls, t.Target, groups),
		"saltside/app.conf.j2": appConf,
	}
	for name, text := range files {
		path := filepath.Join(t.FileRoot, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return t, err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return t, err
		}
	}
	return t, nil
}

// checkFiles verifies what a first run wrote under the target.
func checkFiles(t Tree) error {
	for i := range groups {
		d := filepath.Join(t.Target, fmt.Sprintf("d%d", i))
		want := map[string]string{
			"notes.txt": fmt.Sprintf("group %d of %s", i, minionID),
			"app.conf":  fmt.Sprintf("# managed by state saltside-conf-%d\ngroup = %d\nminion = %s\nport = %d\n", i, i, minionID, 8000+i),
			"stamp":     fmt.Sprintf("%d\n", i),
		}
		for name, text := range want {
			b, err := os.ReadFile(filepath.Join(d, name))
			if err != nil {
				return err
			}
			// file.managed's contents: gets a newline added; compare lines.
			if strings.TrimRight(string(b), "\n") != strings.TrimRight(text, "\n") {
				return fmt.Errorf("%s/%s holds %q, want %q", d, name, b, text)
			}
		}
	}
	return nil
}

// stateRet is the part of a state's return the bench reads.
type stateRet struct {
	ID       string          `json:"__id__"`
	Result   *bool           `json:"result"`
	Changes  json.RawMessage `json:"changes"`
	Duration float64         `json:"duration"`
	Comment  any             `json:"comment"`
}

// kind is the state's place in its group (saltside-conf for
// saltside-conf-7): the states whose durations are summed together, so
// that those that ask the master (the salt:// template's) are seen apart
// from those that do not.
func (s stateRet) kind() string {
	k := strings.TrimRight(s.ID, "0123456789")
	if k == s.ID || k == "" {
		return "other"
	}
	return strings.TrimSuffix(k, "-")
}

// checkApply reads the minion's state.apply return: every state True, all
// of them changed (first) or none (a repeat run); it returns the sum of
// the states' durations (the minion's own work, in ms), and the sums by
// kind.
func checkApply(ret json.RawMessage, n int, first bool) (sumMs float64, byKind map[string]float64, err error) {
	var states map[string]stateRet
	if err := json.Unmarshal(ret, &states); err != nil {
		return 0, nil, fmt.Errorf("the return is not a state run's (%.300s): %w", ret, err)
	}
	if len(states) != n {
		return 0, nil, fmt.Errorf("%d states returned, %d expected: %.300s", len(states), n, ret)
	}
	changed := 0
	byKind = map[string]float64{}
	for id, s := range states {
		if s.Result == nil || !*s.Result {
			return 0, nil, fmt.Errorf("state %s failed: %v", id, s.Comment)
		}
		if c := strings.TrimSpace(string(s.Changes)); c != "" && c != "{}" && c != "null" {
			changed++
		}
		sumMs += s.Duration
		byKind[s.kind()] += s.Duration
	}
	want := 0
	if first {
		want = n
	}
	if changed != want {
		return sumMs, byKind, fmt.Errorf("%d of %d states changed something, %d expected", changed, n, want)
	}
	return sumMs, byKind, nil
}
