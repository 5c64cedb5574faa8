package state_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/state"
)

// saltCompiled is what Salt 3006.6 made of an SLS tree (main.sls and what
// it includes), recorded from Salt itself (render_highstate and
// verify_high as state.show_sls does; compile_high_data of that as
// state.show_low_sls; call_high's reconcile_extend, verify_high,
// requisite_in and apply_exclude, then compile_high_data, as a run).
type saltCompiled struct {
	name  string
	files map[string]string
	// showErrors are show_sls's errors, else high and low are its high
	// data and low chunks (JSON); runErrors a run's errors, else runLow its
	// chunks.
	showErrors, runErrors []string
	high, low, runLow     string
}

// TestAsSalt compiles SLS trees as state.show_sls, state.show_low_sls and
// a run do and compares with what Salt 3006.6 gave: verify_high's checks
// and messages, an argument mapping of two keys, __extend__ and
// __exclude__ shown unapplied and applied by a run (a function replaced,
// requisites extended, name replacing names, a module added running at
// the cap), names once each, order numbers and ties, arguments named
// __env__, __sls__ or __id__ overriding the chunk's. In the high data
// each declaration's function name is put first (Salt keeps it where
// written, or appends it to module.function's arguments).
func TestAsSalt(t *testing.T) {
	for _, tc := range saltCases {
		t.Run(tc.name, func(t *testing.T) {
			c := &state.Compiler{Renderer: state.NewRenderer(), Source: memSource(tc.files), Vars: func(string) map[string]any {
				return map[string]any{"grains": map[string]any{"id": "web1"}, "pillar": map[string]any{}}
			}}
			h := c.Compile(context.Background(), "base", []string{"main"})
			if !reflect.DeepEqual(h.Errors, tc.showErrors) {
				t.Fatalf("show_sls errors:\n got %q\nwant %q", h.Errors, tc.showErrors)
			}
			if tc.showErrors != nil {
				return
			}
			same(t, "show_sls", normalHigh(h.Show()), normalHigh(decode(t, tc.high)))
			var low []any
			for _, ch := range h.LowChunks() {
				low = append(low, ch.Low())
			}
			same(t, "show_low_sls", low, decode(t, tc.low))
			run := h.Chunks()
			if !reflect.DeepEqual(h.Errors, tc.runErrors) {
				t.Fatalf("run errors:\n got %q\nwant %q", h.Errors, tc.runErrors)
			}
			if tc.runErrors != nil {
				return
			}
			low = nil
			for _, ch := range run {
				low = append(low, ch.Low())
			}
			same(t, "run", low, decode(t, tc.runLow))
		})
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// same compares as JSON values.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	b, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(b, &g)
	if !reflect.DeepEqual(g, want) {
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, b, w)
	}
}

// normalHigh puts each declaration's function names first, the other
// items following in the order written.
func normalHigh(v any) any {
	b, _ := json.Marshal(v)
	var h map[string]any
	_ = json.Unmarshal(b, &h)
	for id, body := range h {
		m, ok := body.(map[string]any)
		if !ok || strings.HasPrefix(id, "__") {
			continue
		}
		for mod, l := range m {
			if list, ok := l.([]any); ok {
				var funs, args []any
				for _, x := range list {
					if _, ok := x.(string); ok {
						funs = append(funs, x)
					} else {
						args = append(args, x)
					}
				}
				m[mod] = append(funs, args...)
			}
		}
	}
	return h
}

var saltCases = []saltCompiled{
	{name: "dunder_args", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - __env__:\n      - LC_ALL: C.UTF-8\n    - __sls__: other\n    - __id__: z\n    - fun: nope\nb:\n  file.managed:\n    - __env__: dev\n    - require:\n      - pkg: a\n"},
		high:   `{"a": {"__env__": "base", "__sls__": "main", "pkg": [{"__env__": [{"LC_ALL": "C.UTF-8"}]}, {"__sls__": "other"}, {"__id__": "z"}, {"fun": "nope"}, "installed", {"order": 10000}]}, "b": {"__env__": "base", "__sls__": "main", "file": [{"__env__": "dev"}, {"require": [{"pkg": "a"}]}, "managed", {"order": 10001}]}}`,
		low:    `[{"__env__": [{"LC_ALL": "C.UTF-8"}], "__id__": "z", "__sls__": "other", "fun": "installed", "name": "a", "order": 10000, "state": "pkg"}, {"__env__": "dev", "__id__": "b", "__sls__": "main", "fun": "managed", "name": "b", "order": 10001, "require": [{"pkg": "a"}], "state": "file"}]`,
		runLow: `[{"__env__": [{"LC_ALL": "C.UTF-8"}], "__id__": "z", "__sls__": "other", "fun": "installed", "name": "a", "order": 10000, "state": "pkg"}, {"__env__": "dev", "__id__": "b", "__sls__": "main", "fun": "managed", "name": "b", "order": 10001, "require": [{"pkg": "a"}], "state": "file"}]`},
	{name: "trailing_dotted", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n"},
		showErrors: []string{"ID 'a' in SLS 'main' contains a short declaration (pkg.installed) with a trailing colon. When not passing any arguments to a state, the colon must be omitted."}},
	{name: "trailing_plain", files: map[string]string{"main.sls": "a:\n  pkg:\n"},
		showErrors: []string{"ID 'a' in SLS 'main' contains a short declaration (pkg) with a trailing colon. When not passing any arguments to a state, the colon must be omitted."}},
	{name: "notlist", files: map[string]string{"main.sls": "a:\n  pkg.installed: {name: x}\n"},
		showErrors: []string{"State 'a' in SLS 'main' is not formed as a list"}},
	{name: "toomany", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - removed\n    - name: x\n"},
		showErrors: []string{"Too many functions declared in state 'a' in SLS 'main'. Please choose one of the following: removed, installed"}},
	{name: "toomany2", files: map[string]string{"main.sls": "a:\n  pkg:\n    - latest\n    - removed\n"},
		showErrors: []string{"Too many functions declared in state 'a' in SLS 'main'. Please choose one of the following: latest, removed"}},
	{name: "ws", files: map[string]string{"main.sls": "a:\n  pkg:\n    - inst alled\n"},
		showErrors: []string{"The function \"inst alled\" in state \"a\" in SLS \"main\" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a \":\""}},
	{name: "ws_edge", files: map[string]string{"main.sls": "a:\n  pkg:\n    - ' installed'\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [\" installed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \" installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \" installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]"},
	{name: "nofun", files: map[string]string{"main.sls": "a:\n  pkg:\n    - name: x\n"},
		showErrors: []string{"No function declared in state 'a' in SLS 'main'"}},
	{name: "reqstring", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require: b\nb:\n  pkg.installed\n"},
		showErrors: []string{"The require statement in state 'a' in SLS 'main' needs to be formed as a list"}},
	{name: "reqitemlist", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require:\n      - [x]\n"},
		showErrors: []string{"Requisite declaration ['x'] in SLS main is not formed as a single key dictionary"}},
	{name: "reqdot", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require:\n      - pkg.installed: b\nb:\n  pkg.installed\n"},
		showErrors: []string{"Invalid requisite type 'pkg.installed' in state 'a', in SLS 'main'. Requisite types must not contain dots, did you mean 'pkg'?"}},
	{name: "reqillegal", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require:\n      - pkg: [b]\n"},
		showErrors: []string{"Illegal requisite \"['b']\", please check your syntax.\n"}},
	{name: "recursive", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require:\n      - pkg: b\nb:\n  pkg.installed:\n    - require:\n      - pkg: a\n"},
		showErrors: []string{"A recursive requisite was found, SLS \"main\" ID \"b\" ID \"a\""}},
	{name: "multidict", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - require:\n      - pkg: b\n      other: 1\nb:\n  pkg.installed\n"},
		showErrors: []string{"Multiple dictionaries defined in argument of state 'a' in SLS 'main'"}},
	{name: "namesnotlist", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - names: x\n"},
		showErrors: []string{"The 'names' argument in state 'a' in SLS 'main' needs to be formed as a list"}},
	{name: "idint", files: map[string]string{"main.sls": "a: 5\n"},
		showErrors: []string{"ID a in SLS main is not a dictionary", "The type a in 5 is not formatted as a dictionary"}},
	{name: "idstr", files: map[string]string{"main.sls": "a: foo\n"},
		showErrors: []string{"ID a in SLS main is not a dictionary", "The type a in foo is not formatted as a dictionary"}},
	{name: "idlist", files: map[string]string{"main.sls": "a: [x]\n"},
		showErrors: []string{"ID a in SLS main is not a dictionary", "The type a in ['x'] is not formatted as a dictionary"}},
	{name: "nonstrid", files: map[string]string{"main.sls": "5:\n  pkg.installed\n"},
		showErrors: []string{"ID '5' in SLS 'main' is not formed as a string, but is a int. It may need to be quoted."}},
	{name: "dupdecl", files: map[string]string{"main.sls": "a:\n  pkg:\n    - installed\n  pkg.removed:\n    - name: x\n"},
		showErrors: []string{"ID 'a' in SLS 'main' contains multiple state declarations of the same type"}},
	{name: "dupdecl2", files: map[string]string{"main.sls": "a:\n  pkg.removed:\n    - name: x\n  pkg:\n    - installed\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"name\": \"x\"}, \"removed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"removed\", \"name\": \"x\", \"order\": 10000, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"removed\", \"name\": \"x\", \"order\": 10000, \"state\": \"pkg\"}]"},
	{name: "extnotdict", files: map[string]string{"main.sls": "extend: [a]\n"},
		showErrors: []string{"Extension value in SLS 'main' is not a dictionary"}},
	{name: "argitems", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - 5\n    - [q]\n    - name: x\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [5, [\"q\"], {\"name\": \"x\"}, \"installed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"x\", \"order\": 10000, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"x\", \"order\": 10000, \"state\": \"pkg\"}]"},
	{name: "reqstate", files: map[string]string{"main.sls": "a:\n  require:\n    - pkg: b\nb:\n  pkg.installed\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"require\": [{\"pkg\": \"b\"}, {\"order\": 10000}]}, \"b\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [\"installed\", {\"order\": 10001}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"b\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"b\", \"order\": 10001, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"b\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"b\", \"order\": 10001, \"state\": \"pkg\"}]"},
	{name: "extend_all", files: map[string]string{"main.sls": "include:\n  - other\nextend:\n  o1:\n    pkg.removed:\n      - require:\n        - cmd: here\n      - name: new\n  o2:\n    service:\n      - name: svc\n    file.managed:\n      - name: /f\n  byname:\n    cmd:\n      - cwd: /tmp\nexclude:\n  - id: o3\n  - other2\nhere:\n  cmd.run\n", "other.sls": "include:\n  - other2\no1:\n  pkg.installed:\n    - require:\n      - cmd: x\n    - names: [p, q]\no2:\n  service.running\no3:\n  cmd.run:\n    - name: byname\nx:\n  cmd.run\nextend:\n  here:\n    cmd:\n      - cwd: /\n", "other2.sls": "o4:\n  cmd.run\n"},
		high:   "{\"__exclude__\": [{\"id\": \"o3\"}, \"other2\"], \"__extend__\": [{\"o1\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"require\": [{\"cmd\": \"here\"}]}, {\"name\": \"new\"}, \"removed\"]}}, {\"o2\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"file\": [{\"name\": \"/f\"}, \"managed\"], \"service\": [{\"name\": \"svc\"}]}}, {\"byname\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"cmd\": [{\"cwd\": \"/tmp\"}]}}, {\"here\": {\"__env__\": \"base\", \"__sls__\": \"other\", \"cmd\": [{\"cwd\": \"/\"}]}}], \"here\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"cmd\": [\"run\", {\"order\": 10005}]}, \"o1\": {\"__env__\": \"base\", \"__sls__\": \"other\", \"pkg\": [{\"require\": [{\"cmd\": \"x\"}]}, {\"names\": [\"p\", \"q\"]}, \"installed\", {\"order\": 10001}]}, \"o2\": {\"__env__\": \"base\", \"__sls__\": \"other\", \"service\": [\"running\", {\"order\": 10002}]}, \"o3\": {\"__env__\": \"base\", \"__sls__\": \"other\", \"cmd\": [{\"name\": \"byname\"}, \"run\", {\"order\": 10003}]}, \"o4\": {\"__env__\": \"base\", \"__sls__\": \"other2\", \"cmd\": [\"run\", {\"order\": 10000}]}, \"x\": {\"__env__\": \"base\", \"__sls__\": \"other\", \"cmd\": [\"run\", {\"order\": 10004}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"o4\", \"__sls__\": \"other2\", \"fun\": \"run\", \"name\": \"o4\", \"order\": 10000, \"state\": \"cmd\"}, {\"__env__\": \"base\", \"__id__\": \"o1\", \"__sls__\": \"other\", \"fun\": \"installed\", \"name\": \"p\", \"order\": 10001.0001, \"require\": [{\"cmd\": \"x\"}], \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"o1\", \"__sls__\": \"other\", \"fun\": \"installed\", \"name\": \"q\", \"order\": 10001.0002, \"require\": [{\"cmd\": \"x\"}], \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"o2\", \"__sls__\": \"other\", \"fun\": \"running\", \"name\": \"o2\", \"order\": 10002, \"state\": \"service\"}, {\"__env__\": \"base\", \"__id__\": \"o3\", \"__sls__\": \"other\", \"fun\": \"run\", \"name\": \"byname\", \"order\": 10003, \"state\": \"cmd\"}, {\"__env__\": \"base\", \"__id__\": \"x\", \"__sls__\": \"other\", \"fun\": \"run\", \"name\": \"x\", \"order\": 10004, \"state\": \"cmd\"}, {\"__env__\": \"base\", \"__id__\": \"here\", \"__sls__\": \"main\", \"fun\": \"run\", \"name\": \"here\", \"order\": 10005, \"state\": \"cmd\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"o1\", \"__sls__\": \"other\", \"fun\": \"removed\", \"name\": \"new\", \"order\": 10001, \"require\": [{\"cmd\": \"x\"}, {\"cmd\": \"here\"}], \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"o2\", \"__sls__\": \"other\", \"fun\": \"running\", \"name\": \"svc\", \"order\": 10002, \"state\": \"service\"}, {\"__env__\": \"base\", \"__id__\": \"x\", \"__sls__\": \"other\", \"fun\": \"run\", \"name\": \"x\", \"order\": 10004, \"state\": \"cmd\"}, {\"__env__\": \"base\", \"__id__\": \"here\", \"__sls__\": \"main\", \"cwd\": \"/\", \"fun\": \"run\", \"name\": \"here\", \"order\": 10005, \"state\": \"cmd\"}, {\"__env__\": \"base\", \"__id__\": \"o2\", \"__sls__\": \"other\", \"fun\": \"managed\", \"name\": \"/f\", \"order\": 10105, \"state\": \"file\"}]"},
	{name: "extend_missing", files: map[string]string{"main.sls": "extend:\n  nope:\n    pkg:\n      - name: y\na:\n  pkg.installed:\n    - require_in:\n      - pkg: gone\n"},
		high:      "{\"__extend__\": [{\"nope\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"name\": \"y\"}]}}], \"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"require_in\": [{\"pkg\": \"gone\"}]}, \"installed\", {\"order\": 10000}]}}",
		low:       "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"require_in\": [{\"pkg\": \"gone\"}], \"state\": \"pkg\"}]",
		runErrors: []string{"Cannot extend ID 'nope' in 'base:main'. It is not part of the high state.\nThis is likely due to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an ID of 'nope' is available\nin environment 'base' and to SLS 'main'"}},
	{name: "extend_newmod_nofun", files: map[string]string{"main.sls": "extend:\n  a:\n    service:\n      - name: y\na:\n  pkg.installed\n"},
		high:      "{\"__extend__\": [{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"service\": [{\"name\": \"y\"}]}}], \"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [\"installed\", {\"order\": 10000}]}}",
		low:       "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]",
		runErrors: []string{"No function declared in state 'a' in SLS 'main'"}},
	{name: "trailing_colon_fun", files: map[string]string{"main.sls": "a:\n  pkg:\n    - installed:\n"},
		showErrors: []string{"No function declared in state 'a' in SLS 'main'"}},
	{name: "emptyargs", files: map[string]string{"main.sls": "a:\n  pkg.installed: []\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [\"installed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]"},
	{name: "names_dedupe", files: map[string]string{"main.sls": "a:\n  pkg.installed:\n    - names: [x, x, {y: [{fromrepo: z}]}, 5]\n    - name: 7\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"names\": [\"x\", \"x\", {\"y\": [{\"fromrepo\": \"z\"}]}, 5]}, {\"name\": 7}, \"installed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"x\", \"order\": 10000.0001, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fromrepo\": \"z\", \"fun\": \"installed\", \"name\": \"y\", \"order\": 10000.0002, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": 5, \"order\": 10000.0003, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"x\", \"order\": 10000.0001, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fromrepo\": \"z\", \"fun\": \"installed\", \"name\": \"y\", \"order\": 10000.0002, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": 5, \"order\": 10000.0003, \"state\": \"pkg\"}]"},
	{name: "order_ties", files: map[string]string{"main.sls": "b:\n  pkg.installed:\n    - order: 1\na:\n  pkg.installed:\n    - order: 1\nc:\n  file.managed:\n    - order: 1\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"order\": 1}, \"installed\"]}, \"b\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [{\"order\": 1}, \"installed\"]}, \"c\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"file\": [{\"order\": 1}, \"managed\"]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"c\", \"__sls__\": \"main\", \"fun\": \"managed\", \"name\": \"c\", \"order\": 1, \"state\": \"file\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 1, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"b\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"b\", \"order\": 1, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"c\", \"__sls__\": \"main\", \"fun\": \"managed\", \"name\": \"c\", \"order\": 1, \"state\": \"file\"}, {\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 1, \"state\": \"pkg\"}, {\"__env__\": \"base\", \"__id__\": \"b\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"b\", \"order\": 1, \"state\": \"pkg\"}]"},
	{name: "shortstr3", files: map[string]string{"main.sls": "a: pkg.installed.more\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"pkg\": [\"installed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"fun\": \"installed\", \"name\": \"a\", \"order\": 10000, \"state\": \"pkg\"}]"},
	{name: "multikey", files: map[string]string{"main.sls": "a:\n  file.managed:\n    - context:\n      config: {x: 1}\n    - name: /x\n"},
		high:   "{\"a\": {\"__env__\": \"base\", \"__sls__\": \"main\", \"file\": [{\"config\": {\"x\": 1}, \"context\": null}, {\"name\": \"/x\"}, \"managed\", {\"order\": 10000}]}}",
		low:    "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"config\": {\"x\": 1}, \"context\": null, \"fun\": \"managed\", \"name\": \"/x\", \"order\": 10000, \"state\": \"file\"}]",
		runLow: "[{\"__env__\": \"base\", \"__id__\": \"a\", \"__sls__\": \"main\", \"config\": {\"x\": 1}, \"context\": null, \"fun\": \"managed\", \"name\": \"/x\", \"order\": 10000, \"state\": \"file\"}]"},
	{name: "reqmap", files: map[string]string{"main.sls": "a:\n  file.managed:\n    - require:\n        file: b\nb:\n  file.managed\n"},
		showErrors: []string{"The require statement in state 'a' in SLS 'main' needs to be formed as a list"}},
}

// TestChunkEnvArgument: a string __env__ argument is the saltenv a
// chunk's functions see, as Salt's State.call injects str(low['__env__'])
// as their __env__; another value leaves the id's.
func TestChunkEnvArgument(t *testing.T) {
	c := &state.Compiler{Renderer: state.NewRenderer(), Source: memSource(map[string]string{
		"main.sls": "a:\n  file.managed:\n    - __env__: dev\nb:\n  pkgrepo.managed:\n    - __env__: [{LC_ALL: C.UTF-8}]\nc:\n  file.managed\n"}), Vars: func(string) map[string]any {
		return map[string]any{"grains": map[string]any{"id": "web1"}, "pillar": map[string]any{}}
	}}
	h := c.Compile(context.Background(), "base", []string{"main"})
	got := map[string]string{}
	for _, ch := range h.Chunks() {
		got[ch.ID] = ch.Env
	}
	if want := map[string]string{"a": "dev", "b": "base", "c": "base"}; !reflect.DeepEqual(got, want) {
		t.Errorf("saltenv per id: %v, want %v", got, want)
	}
}
