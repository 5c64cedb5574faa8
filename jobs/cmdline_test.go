package jobs

import (
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	hide := func(name string, v any) any {
		if strings.Contains(name, "password") {
			return "***"
		}
		return v
	}
	tests := []struct {
		name string
		job  Job
		want string
	}{
		{"grain target, quoted arg", Job{Kind: KindJob, Fun: "cmd.run", Tgt: "roles:nginx", TgtType: "grain", Arg: []any{"nginx restart"}},
			`salt -G roles:nginx cmd.run 'nginx restart'`},
		{"glob", Job{Kind: KindJob, Fun: "test.ping", Tgt: "*", TgtType: "glob"}, `salt * test.ping`},
		{"glob with star in a word", Job{Kind: KindJob, Fun: "test.ping", Tgt: "web*", TgtType: "glob"}, `salt 'web*' test.ping`},
		{"list target", Job{Kind: KindJob, Fun: "test.ping", Tgt: []any{"web1", "web2"}, TgtType: "list"}, `salt -L web1,web2 test.ping`},
		{"compound with spaces", Job{Kind: KindJob, Fun: "state.apply", Tgt: "G@os:Debian and web*", TgtType: "compound", Arg: []any{"nginx"}},
			`salt -C 'G@os:Debian and web*' state.apply nginx`},
		{"pcre", Job{Kind: KindJob, Fun: "test.ping", Tgt: "web[0-9]+", TgtType: "pcre"}, `salt -E 'web[0-9]+' test.ping`},
		{"unknown type uses the long option", Job{Kind: KindJob, Fun: "test.ping", Tgt: "role:web", TgtType: "pillar_exact"},
			`salt --pillar-exact role:web test.ping`},
		{"kwargs of a targeted job, redacted", Job{Kind: KindJob, Fun: "user.add", Tgt: "db1", TgtType: "glob",
			Arg: []any{"bob", map[string]any{"__kwarg__": true, "password": "hunter2", "shell": "/bin/bash"}}},
			`salt db1 user.add bob password='***' shell=/bin/bash`},
		{"quote inside", Job{Kind: KindJob, Fun: "cmd.run", Tgt: "web1", TgtType: "glob", Arg: []any{"echo it's"}},
			`salt web1 cmd.run 'echo it'"'"'s'`},
		{"runner with kwargs", Job{Kind: KindRun, Fun: "runner.test.arg", Arg: []any{"hello", int64(42), true, map[string]any{"color": "red", "n": 1.5}}},
			`salt-run test.arg hello 42 true color=red n=1.5`},
		{"runner list arg", Job{Kind: KindRun, Fun: "runner.mine.get", Arg: []any{[]any{"a", "b"}, "x"}}, `salt-run mine.get '["a","b"]' x`},
		{"empty string", Job{Kind: KindRun, Fun: "runner.test.arg", Arg: []any{""}}, `salt-run test.arg ''`},
	}
	for _, tt := range tests {
		if got := CommandLine(&tt.job, hide); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
