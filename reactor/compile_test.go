package reactor

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
)

var fixtureData = map[string]any{
	"id": "web-asg-0042", "name": "web1", "act": "pend", "public_ips": []any{"192.0.2.10"},
	"data": map[string]any{"version": "3006.1", "n": int64(3)}, "ips": []any{"10.0.0.1", "10.0.0.2"},
	"grains": map[string]any{"os": "Debian"},
}

// want is the part of a compiled reaction a case checks.
type want struct {
	ID      string
	Line    int
	Kind    Kind
	Fun     string
	Args    []any
	Kwargs  map[string]any
	Tgt     any
	TgtType string
	Ret     string
	Extra   map[string]any
	Require []Ref
	Onfail  []Ref
}

func TestCompileFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []want
	}{
		{"legacy_kwargs.sls", []want{{ID: "add_dns", Line: 3, Kind: Runner, Fun: "ddns.add_host",
			Kwargs: map[string]any{"zone": "example.com", "name": "web1", "ttl": uint64(300), "ip": "192.0.2.10"}}}},
		{"legacy_name_default.sls", []want{{ID: "web1", Line: 3, Kind: Runner, Fun: "ddns.delete_host",
			Kwargs: map[string]any{"zone": "example.com", "name": "web1"}}}},
		{"arg_kwarg.sls", []want{{ID: "echo_args", Line: 2, Kind: Runner, Fun: "test.arg",
			Args:   []any{"web-asg-0042", uint64(42)},
			Kwargs: map[string]any{"act": "pend", "nested": map[string]any{"n": uint64(3), "version": "3006.1"}}}}},
		{"unified_args.sls", []want{{ID: "forward", Line: 3, Kind: Runner, Fun: "event.send",
			Kwargs: map[string]any{"tag": "myco/forwarded/web-asg-0042",
				"data": map[string]any{"orig_tag": "salt/test", "payload": map[string]any{"n": uint64(3), "version": "3006.1"}}}}}},
		{"cmd_alias.sls", []want{{ID: "highstate_new_minion", Line: 3, Kind: Local, Fun: "state.apply",
			Args: []any{"webserver"}, Tgt: "web-asg-0042", TgtType: "list"}}},
		{"local_target.sls", []want{{ID: "install_zsh", Line: 2, Kind: Local, Fun: "pkg.installed",
			Kwargs: map[string]any{"name": "zsh", "fromrepo": "updates"}, Tgt: "kernel:Linux", TgtType: "grain",
			Ret: "smtp", Extra: map[string]any{"timeout": uint64(30)}}}},
		{"bare_function.sls", []want{{ID: "uptime", Line: 3, Kind: Local, Fun: "cmd.run", Args: []any{"uptime -p"}, Tgt: "*"}}},
		{"caller.sls", []want{{ID: "touch_file", Line: 2, Kind: Caller, Fun: "file.touch", Args: []any{"/tmp/web-asg-0042"}}}},
		{"wheel_require.sls", []want{
			{ID: "accept_minion", Line: 4, Kind: Wheel, Fun: "key.accept", Kwargs: map[string]any{"match": "web-asg-0042"}},
			{ID: "highstate", Line: 8, Kind: Local, Fun: "state.highstate", Tgt: "web-asg-0042",
				Require: []Ref{{Kind: Wheel, ID: "accept_minion"}}},
		}},
		{"jinja_features.sls", []want{
			{ID: "announce_1", Line: 5, Kind: Runner, Fun: "test.arg", Args: []any{"10.0.0.1", "web", "web"},
				Kwargs: map[string]any{"index": uint64(1), "owner": "nobody", "team": "ops", "all": "10.0.0.1,10.0.0.2",
					"grains": map[string]any{"os": "Debian"}}},
			{ID: "announce_2", Line: 18, Kind: Runner, Fun: "test.arg", Args: []any{"10.0.0.2", "web", "web"},
				Kwargs: map[string]any{"index": uint64(2), "owner": "nobody", "team": "ops", "all": "10.0.0.1,10.0.0.2",
					"grains": map[string]any{"os": "Debian"}}},
			{ID: "grain_os", Line: 32, Kind: Runner, Fun: "test.arg", Args: []any{"os", "Debian"}},
		}},
		{"salt_lookup.sls", []want{{ID: "lookup", Line: 5, Kind: Runner, Fun: "test.arg",
			Kwargs: map[string]any{"echoed": "web-asg-0042"}}}},
		{"requisites.sls", []want{
			{ID: "first", Line: 2, Kind: Runner, Fun: "test.arg", Args: []any{"one"}},
			{ID: "broken", Line: 6, Kind: Runner, Fun: "test.exception", Kwargs: map[string]any{"message": "DNS server unreachable"}},
			{ID: "after_first", Line: 12, Kind: Runner, Fun: "test.arg", Args: []any{"two"}, Require: []Ref{{Kind: Runner, ID: "first"}}},
			{ID: "after_broken", Line: 18, Kind: Runner, Fun: "test.arg", Args: []any{"never"}, Require: []Ref{{ID: "broken"}}},
			{ID: "cleanup_on_failure", Line: 24, Kind: Runner, Fun: "test.arg", Args: []any{"cleanup"}, Onfail: []Ref{{Kind: Runner, ID: "broken"}}},
			{ID: "not_needed", Line: 30, Kind: Runner, Fun: "test.arg", Args: []any{"no"}, Onfail: []Ref{{Kind: Runner, ID: "first"}}},
		}},
		{"empty.sls", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := planOne(t, tt.file, "salt/test", fixtureData)
			if len(p.Errors) > 0 {
				t.Fatalf("errors: %v", p.Errors)
			}
			if len(p.Files) != 1 || len(p.Files[0].Rendered) == 0 && tt.want != nil {
				t.Fatalf("files: %+v", p.Files)
			}
			var got []want
			for _, r := range p.Reactions {
				if r.File != fixture(t, tt.file) {
					t.Errorf("reaction %s: file %q", r.ID, r.File)
				}
				got = append(got, want{ID: r.ID, Line: r.Line, Kind: r.Kind, Fun: r.Fun, Args: r.Args,
					Kwargs: nilIfEmpty(r.Kwargs), Tgt: r.Tgt, TgtType: r.TgtType, Ret: r.Ret, Extra: r.Extra,
					Require: r.Require, Onfail: r.Onfail})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reactions:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func nilIfEmpty(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		file      string
		stage     Stage
		line      int
		id        string
		is        error
		text      string
		reactions int  // good reactions of the same file still compile
		rendered  bool // the line is in the rendered text (a loop changed the count)
	}{
		{file: "broken_jinja.sls", stage: StageRender, line: 3, text: "'}}' expected"},
		{file: "broken_jinja_runtime.sls", stage: StageRender, line: 3, text: `'str object' has no attribute 'nosuchmethod'`},
		{file: "broken_yaml.sls", stage: StageYAML, line: 4, text: "not allowed"},
		{file: "duplicate_id.sls", stage: StageYAML, line: 3, text: `"same" already defined`},
		{file: "unknown_function.sls", stage: StageCompile, line: 5, id: "typo", is: function.ErrUnknownFunction,
			text: "tset.ping: unknown function", reactions: 1},
		{file: "missing_argument.sls", stage: StageCompile, line: 2, id: "send_without_tag", is: function.ErrMissingArgument,
			text: `event.send: argument "tag": missing argument`},
		{file: "bad_type.sls", stage: StageCompile, line: 2, id: "sleepy", is: function.ErrArgumentType,
			text: `test.sleep: argument "s_time": wrong argument type: want number, got string "forever"`},
		{file: "unknown_kind.sls", stage: StageCompile, line: 2, id: "oops", text: `unknown reaction type "runnr"`},
		{file: "args_not_dictlist.sls", stage: StageCompile, line: 2, id: "positional_runner", text: "incorrect argument format"},
		{file: "broken_in_loop.sls", stage: StageCompile, line: 7, id: "step2", is: function.ErrUnknownFunction,
			text: "broken_in_loop.sls (rendered line 7): compile: reaction step2: test.nope: unknown function", reactions: 1, rendered: true},
		{file: "orchestrate.sls", stage: StageCompile, line: 3, id: "invoke_orchestrate_file", is: function.ErrUnknownFunction,
			text: "orchestrate.sls:3: compile: reaction invoke_orchestrate_file: state.orchestrate: unknown function"},
		{file: "no_such_file.sls", stage: StageMapping, is: ErrFileMissing, text: "reaction file missing"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p := planOne(t, tt.file, "salt/test", fixtureData)
			if len(p.Errors) != 1 {
				t.Fatalf("got %d errors %v, want 1", len(p.Errors), p.Errors)
			}
			e := p.Errors[0]
			if e.Stage != tt.stage || e.Line != tt.line || e.ID != tt.id || e.File != fixture(t, tt.file) {
				t.Errorf("error at %s %s:%d id %q, want %s line %d id %q", e.Stage, e.File, e.Line, e.ID, tt.stage, tt.line, tt.id)
			}
			if tt.is != nil && !errors.Is(e, tt.is) {
				t.Errorf("%v is not %v", e, tt.is)
			}
			if !strings.Contains(e.Error(), tt.text) {
				t.Errorf("error %q does not say %q", e, tt.text)
			}
			if e.Rendered != tt.rendered {
				t.Errorf("Rendered = %v, want %v", e.Rendered, tt.rendered)
			}
			if tt.line > 0 && !tt.rendered && !strings.Contains(e.Error(), tt.file+":") {
				t.Errorf("error %q does not name file:line", e)
			}
			if len(p.Reactions) != tt.reactions {
				t.Errorf("%d reactions compiled, want %d", len(p.Reactions), tt.reactions)
			}
		})
	}
}

func TestCompileWarnsArgsWithArg(t *testing.T) {
	r, err := compileReaction("x", "runner.test.arg", []any{
		map[string]any{"arg": []any{"ignored"}},
		map[string]any{"args": []any{map[string]any{"k": "v"}}},
	}, testFuncs(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Args) != 0 || r.Kwargs["k"] != "v" || len(r.Warnings) != 1 {
		t.Fatalf("got args %v kwargs %v warnings %v", r.Args, r.Kwargs, r.Warnings)
	}
}
