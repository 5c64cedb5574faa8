package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Tree describes the SLS tree the benchmark applies.
type Tree struct {
	SLSFiles     int `json:"sls_files"`
	StatesPerSLS int `json:"states_per_sls"`
	States       int `json:"states"`
	// SourceStates are file.managed with a salt:// source rendered as a
	// Jinja template on the agent (fetched through the master's file
	// server); ContentsStates have contents written by the SLS's own Jinja
	// loop with pillar and grains, and rendered again as a template on
	// the agent (template: jinja).
	SourceStates   int `json:"source_template_states"`
	ContentsStates int `json:"contents_template_states"`
	// Requisites are the require declarations: each state but an SLS's
	// first requires the one before it, and each SLS's first state
	// requires the whole previous SLS (require: - sls: …).
	Requisites int `json:"requisites"`
	// TargetDir is where the managed files go (under the run's temporary
	// directory, named by the pillar's bench_root).
	TargetDir string `json:"-"`
}

// slsName is the i-th SLS of the tree.
func slsName(i int) string { return fmt.Sprintf("s%02d", i) }

// slsTemplate is one SLS file: a Jinja loop writing per states
// file.managed declarations, half from a salt:// template, half with
// contents, each requiring the one before it and the first requiring the
// previous SLS. The target root and the application's settings come from
// the pillar; the first SLS has no SLS to require.
const slsTemplate = `{%- set app = pillar['app'] %}
{%- set root = pillar['bench_root'] %}
{%- for i in range(@PER@) %}
@SLS@_f{{ i }}:
  file.managed:
    - name: {{ root }}/@SLS@/f{{ i }}.conf
    - makedirs: True
    - mode: '0644'
    - template: jinja
{%- if i % 2 == 0 %}
    - source: salt://templates/@SLS@.conf.j2
    - context:
        index: {{ i }}
        sls_name: {{ sls }}
{%- else %}
    - contents: |
        # {{ sls }} file {{ i }} of {{ app.name }}, written for {{ grains['id'] }}
        listen = {{ app.port + i }}
        env = {% raw %}{{ pillar['app']['env'] }}{% endraw %}
        host = {% raw %}{{ grains['id'] }}{% endraw %}
{%- endif %}
{%- if i > 0 %}
    - require:
      - file: @SLS@_f{{ i - 1 }}
{%- elif @PREV@ %}
    - require:
      - sls: @PREVSLS@
{%- endif %}
{%- endfor %}
`

// confTemplate is a source template, rendered on the agent with the
// state's context, the pillar and the grains.
const confTemplate = `# {{ sls_name }} file {{ index }} of {{ pillar['app']['name'] }}, written for {{ grains['id'] }}
[{{ pillar['app']['name'] }}]
listen = {{ pillar['app']['port'] + index }}
env = {{ pillar['app']['env'] }}
{%- for key, value in pillar['app']['settings'] | dictsort %}
{{ key }} = {{ value }}
{%- endfor %}
`

// writeTree writes the file roots (top.sls, the SLS files, the source
// templates) under dir/salt and the pillar roots under dir/pillar, and
// returns them with the tree's description.
func writeTree(dir string, files, per int) (fileRoot, pillarRoot string, t Tree, err error) {
	fileRoot, pillarRoot = filepath.Join(dir, "salt"), filepath.Join(dir, "pillar")
	t = Tree{SLSFiles: files, StatesPerSLS: per, States: files * per, TargetDir: filepath.Join(dir, "target")}
	write := func(p, body string) {
		if err != nil {
			return
		}
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
	}
	var top strings.Builder
	top.WriteString("base:\n  '*':\n")
	for i := range files {
		name := slsName(i)
		fmt.Fprintf(&top, "    - %s\n", name)
		prev, prevSLS := "False", ""
		if i > 0 {
			prev, prevSLS = "True", slsName(i-1)
			t.Requisites++
		}
		body := strings.NewReplacer("@PER@", fmt.Sprint(per), "@SLS@", name, "@PREV@", prev, "@PREVSLS@", prevSLS).Replace(slsTemplate)
		write(filepath.Join(fileRoot, name+".sls"), body)
		write(filepath.Join(fileRoot, "templates", name+".conf.j2"), confTemplate)
		t.SourceStates += (per + 1) / 2
		t.ContentsStates += per / 2
		t.Requisites += per - 1
	}
	write(filepath.Join(fileRoot, "top.sls"), top.String())
	write(filepath.Join(pillarRoot, "top.sls"), "base:\n  '*':\n    - app\n")
	write(filepath.Join(pillarRoot, "app.sls"), fmt.Sprintf(`bench_root: %s
app:
  name: brine-bench
  port: 8000
  env: bench
  settings:
    workers: 4
    timeout: 30
    log_level: info
`, t.TargetDir))
	return fileRoot, pillarRoot, t, err
}
