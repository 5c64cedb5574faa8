package cron

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/state"
)

// TestStates adds, updates and removes jobs of a real user's crontab with
// the crontab command, in test mode and for real, checking the crontab
// Salt would have written.
func TestStates(t *testing.T) {
	testenv.NeedRoot(t, "TestStates adds a user and edits its crontab: run the tests as root (CI does)")
	for _, tool := range []string{"crontab", "useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestStates needs %s (Debian's cron and passwd packages): %v", tool, err)
		}
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(nil)); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("brine-tc-%06x", rand.Uint32()&0xffffff)
	if out, err := exec.Command("useradd", "-M", "-N", user).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", user, err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("crontab", "-u", user, "-r").Run()
		_ = exec.Command("userdel", user).Run()
	})
	// What the user had before is kept above Salt's part.
	mine := "# mine\nMAILTO=\"\"\n0 1 * * * /usr/bin/unmanaged\n"
	install := exec.Command("crontab", "-u", user, "-")
	install.Stdin = strings.NewReader(mine)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("crontab: %v: %s", err, out)
	}
	crontab := func() string {
		out, err := exec.Command("crontab", "-u", user, "-l").Output()
		if err != nil {
			t.Fatalf("crontab -l: %v", err)
		}
		return string(out)
	}
	managed := mine + tag + "\n"
	changed := map[string]any{user: "/bin/true"}

	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string
		changes map[string]any
		tab     string // the crontab afterwards, "" for unchanged
	}{
		{"add, test mode", "cron.present", true, map[string]any{"name": "/bin/true"}, "None",
			"Cron /bin/true is set to be added", nil, mine},
		{"add", "cron.present", false, map[string]any{"name": " /bin/true "}, "True",
			"Cron /bin/true added to " + user + "'s crontab", changed,
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n* * * * * /bin/true\n"},
		{"present", "cron.present", false, map[string]any{"name": "/bin/true"}, "True", "Cron /bin/true already present", nil, ""},
		{"present, test mode", "cron.present", true, map[string]any{"name": "/bin/true"}, "True", "Cron /bin/true already present", nil, ""},
		{"update, test mode", "cron.present", true, map[string]any{"name": "/bin/true", "minute": 5}, "None",
			"Cron /bin/true is set to be updated", nil, ""},
		{"update", "cron.present", false, map[string]any{"name": "/bin/true", "minute": 5}, "True", "Cron /bin/true updated", changed,
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n5 * * * * /bin/true\n"},
		{"an identifier and a comment", "cron.present", false,
			map[string]any{"name": "/usr/bin/backup --all", "identifier": "backup", "hour": "3", "minute": "0", "comment": "nightly"}, "True",
			"Cron /usr/bin/backup --all added to " + user + "'s crontab", map[string]any{user: "/usr/bin/backup --all"},
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n5 * * * * /bin/true\n# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup --all\n"},
		{"a new command for the identifier", "cron.present", false,
			map[string]any{"name": "/usr/bin/backup  --full", "identifier": "backup", "hour": "3", "minute": "0"}, "True",
			"Cron /usr/bin/backup  --full updated", map[string]any{user: "/usr/bin/backup  --full"},
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n5 * * * * /bin/true\n# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup  --full\n"},
		{"a special", "cron.present", false, map[string]any{"name": "/bin/echo hi", "special": "@reboot"}, "True",
			"Cron /bin/echo hi added to " + user + "'s crontab", map[string]any{user: "/bin/echo hi"},
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n5 * * * * /bin/true\n# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup  --full\n" +
				"# SALT_CRON_IDENTIFIER:/bin/echo hi\n@reboot /bin/echo hi\n"},
		{"the special present", "cron.present", false, map[string]any{"name": "/bin/echo hi", "special": "@reboot"}, "True",
			"Cron /bin/echo hi already present", nil, ""},
		{"the special changed", "cron.present", false, map[string]any{"name": "/bin/echo hi", "special": "@hourly"}, "True",
			"Cron /bin/echo hi updated", map[string]any{user: "/bin/echo hi"},
			managed + "# SALT_CRON_IDENTIFIER:/bin/true\n5 * * * * /bin/true\n# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup  --full\n" +
				"# SALT_CRON_IDENTIFIER:/bin/echo hi\n@hourly /bin/echo hi\n"},
		{"commented", "cron.present", false, map[string]any{"name": "/bin/true", "minute": 5, "commented": true}, "True",
			"Cron /bin/true updated", changed,
			managed + "# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup  --full\n# SALT_CRON_IDENTIFIER:/bin/true\n#DISABLED#5 * * * * /bin/true\n" +
				"# SALT_CRON_IDENTIFIER:/bin/echo hi\n@hourly /bin/echo hi\n"},
		{"commented, present", "cron.present", false, map[string]any{"name": "/bin/true", "minute": 5, "commented": true}, "True",
			"Cron /bin/true already present", nil, ""},
		{"remove, test mode", "cron.absent", true, map[string]any{"name": "/bin/true"}, "None", "Cron /bin/true is set to be removed", nil, ""},
		{"remove", "cron.absent", false, map[string]any{"name": "/bin/true"}, "True", "Cron /bin/true removed from " + user + "'s crontab", changed,
			managed + "# nightly SALT_CRON_IDENTIFIER:backup\n0 3 * * * /usr/bin/backup  --full\n# SALT_CRON_IDENTIFIER:/bin/echo hi\n@hourly /bin/echo hi\n"},
		{"absent", "cron.absent", false, map[string]any{"name": "/bin/true"}, "True", "Cron /bin/true already absent", nil, ""},
		{"absent, test mode", "cron.absent", true, map[string]any{"name": "/bin/true"}, "True", "Cron /bin/true is absent", nil, ""},
		{"remove by identifier", "cron.absent", false, map[string]any{"name": "anything", "identifier": "backup"}, "True",
			"Cron anything removed from " + user + "'s crontab", map[string]any{user: "anything"},
			managed + "# SALT_CRON_IDENTIFIER:/bin/echo hi\n@hourly /bin/echo hi\n"},
		{"remove the special", "cron.absent", false, map[string]any{"name": "/bin/echo hi", "special": "@hourly"}, "True",
			"Cron /bin/echo hi removed from " + user + "'s crontab", map[string]any{user: "/bin/echo hi"}, managed},
		{"two lines", "cron.present", false, map[string]any{"name": "a\nb"}, "False", `the command "a\nb" is not one crontab line`, nil, ""},
	} {
		before := crontab()
		kwargs := map[string]any{"user": user}
		for k, v := range step.kwargs {
			kwargs[k] = v
		}
		ctx := state.With(context.Background(), &state.Running{Test: step.test})
		out, err := reg.Call(ctx, step.fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %s: %v", step.what, step.fun, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: %s: result %s, comment %q; want %s, %q", step.what, step.fun, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		// Salt's test mode reports no changes, only its comment.
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: %s: changes %#v, want %#v", step.what, step.fun, got.Changes, step.changes)
		}
		want := step.tab
		if want == "" {
			want = before
		}
		if tab := crontab(); tab != want {
			t.Errorf("%s: crontab\n%s\nwant\n%s", step.what, tab, want)
		}
	}

	// random picks a minute once, and keeps it.
	call := func(test bool, kwargs map[string]any) state.Result {
		t.Helper()
		out, err := reg.Call(state.With(context.Background(), &state.Running{Test: test}), "cron.present", nil, kwargs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(state.Result)
	}
	kwargs := map[string]any{"name": "/bin/random", "user": user, "minute": "random", "hour": "2:4"}
	if got := call(false, kwargs); py.Str(state.Value(got.Result)) != "True" {
		t.Fatalf("random: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	line := regexp.MustCompile(`(?m)^([0-9]+) ([2-4]) \* \* \* /bin/random$`).FindString(crontab())
	if line == "" {
		t.Fatalf("random: crontab\n%s", crontab())
	}
	if got := call(false, kwargs); got.Comment != "Cron /bin/random already present" || !strings.Contains(crontab(), line) {
		t.Errorf("random again: %q; crontab\n%s", got.Comment, crontab())
	}

	if got := call(false, map[string]any{"name": "/bin/true", "user": "brine-no-such-user"}); py.Str(state.Value(got.Result)) != "False" ||
		!strings.HasPrefix(got.Comment, "Cron /bin/true for user brine-no-such-user failed to commit with error \n") {
		t.Errorf("unknown user: %s %q", py.Str(state.Value(got.Result)), got.Comment)
	}
	// root is the default user; test mode leaves its crontab alone.
	if got := call(true, map[string]any{"name": "/bin/brine-test-only"}); py.Str(state.Value(got.Result)) != "None" || len(got.Changes) != 0 {
		t.Errorf("root, test mode: %s %q %v", py.Str(state.Value(got.Result)), got.Comment, got.Changes)
	}
}

// TestParse reads a crontab Salt wrote and writes it back unchanged.
func TestParse(t *testing.T) {
	for _, text := range []string{
		"",
		tag + "\n",
		"# theirs\n0 1 * * * /x\n" + tag + "\nPATH=/bin\nEMPTY=\"\"\n# two\n# lines SALT_CRON_IDENTIFIER:id\n#DISABLED#1 2 3 4 5 /y  z\n" +
			"# SALT_CRON_IDENTIFIER:NO ID SET\n@daily /z\n",
	} {
		got := parse(text).render()
		want := text
		if !strings.Contains(want, tag) {
			want += tag + "\n"
		}
		if got != want {
			t.Errorf("parse(%q).render() = %q", text, got)
		}
	}
	tab := parse("# a\n" + tag + "\n# note SALT_CRON_IDENTIFIER:x\n*/5 * * * * cmd arg\n")
	if len(tab.crons) != 1 || *tab.crons[0].identifier != "x" || *tab.crons[0].comment != "note" || tab.crons[0].minute != "*/5" || tab.crons[0].cmd != "cmd arg" {
		t.Errorf("parsed %+v", tab.crons)
	}
}

// TestEnv sets, changes and removes crontab variables of a real user's
// crontab; each answer and the crontab written are what Salt 3006.6's
// cron.env_present and cron.env_absent gave for the same steps.
func TestEnv(t *testing.T) {
	testenv.NeedRoot(t, "TestEnv adds a user and edits its crontab: run the tests as root (CI does)")
	reg := function.New()
	if err := reg.RegisterAll(Module(nil)); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("brine-te-%06x", rand.Uint32()&0xffffff)
	if out, err := exec.Command("useradd", "-M", "-N", user).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", user, err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("crontab", "-u", user, "-r").Run()
		_ = exec.Command("userdel", user).Run()
	})
	crontab := func() string {
		out, _ := exec.Command("crontab", "-u", user, "-l").Output()
		return string(out)
	}
	for _, step := range []struct {
		what, fun string
		test      bool
		kwargs    map[string]any
		result    string
		comment   string
		changes   map[string]any
		tab       string
	}{
		{"add, test mode", "cron.env_present", true, map[string]any{"name": "MAILTO", "value": "root@example.com"}, "None",
			"Cron env MAILTO is set to be added", nil, ""},
		{"add", "cron.env_present", false, map[string]any{"name": "MAILTO", "value": "root@example.com"}, "True",
			"Cron env MAILTO added to " + user + "'s crontab", map[string]any{user: "MAILTO"}, tag + "\nMAILTO=root@example.com\n"},
		{"add another", "cron.env_present", false, map[string]any{"name": "PATH", "value": "/usr/bin:/bin"}, "True",
			"Cron env PATH added to " + user + "'s crontab", map[string]any{user: "PATH"}, tag + "\nMAILTO=root@example.com\nPATH=/usr/bin:/bin\n"},
		{"present, test mode", "cron.env_present", true, map[string]any{"name": "MAILTO", "value": "root@example.com"}, "True",
			"Cron env MAILTO already present", nil, tag + "\nMAILTO=root@example.com\nPATH=/usr/bin:/bin\n"},
		{"update, test mode", "cron.env_present", true, map[string]any{"name": "MAILTO", "value": "ops@example.com"}, "None",
			"Cron env MAILTO is set to be updated", nil, tag + "\nMAILTO=root@example.com\nPATH=/usr/bin:/bin\n"},
		{"update", "cron.env_present", false, map[string]any{"name": "MAILTO", "value": "ops@example.com"}, "True",
			"Cron env MAILTO updated", map[string]any{user: "MAILTO"}, tag + "\nPATH=/usr/bin:/bin\nMAILTO=ops@example.com\n"},
		{"remove, test mode", "cron.env_absent", true, map[string]any{"name": "PATH"}, "None",
			"Cron env PATH is set to be removed", nil, tag + "\nPATH=/usr/bin:/bin\nMAILTO=ops@example.com\n"},
		{"remove", "cron.env_absent", false, map[string]any{"name": "PATH"}, "True",
			"Cron env PATH removed from " + user + "'s crontab", map[string]any{user: "PATH"}, tag + "\nMAILTO=ops@example.com\n"},
		{"absent, test mode", "cron.env_absent", true, map[string]any{"name": "NOPE"}, "True", "Cron env NOPE is absent", nil, tag + "\nMAILTO=ops@example.com\n"},
		{"absent", "cron.env_absent", false, map[string]any{"name": "NOPE"}, "True", "Cron env NOPE already absent", nil, tag + "\nMAILTO=ops@example.com\n"},
		{"empty", "cron.env_present", false, map[string]any{"name": "MAILTO"}, "True", "Cron env MAILTO updated", map[string]any{user: "MAILTO"},
			tag + "\nMAILTO=\"\"\n"},
		{"empty again", "cron.env_present", false, map[string]any{"name": "MAILTO"}, "True", "Cron env MAILTO already present", nil,
			tag + "\nMAILTO=\"\"\n"},
	} {
		kwargs := map[string]any{"user": user}
		for k, v := range step.kwargs {
			kwargs[k] = v
		}
		out, err := reg.Call(state.With(context.Background(), &state.Running{Test: step.test}), step.fun, nil, kwargs, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		got := out.(state.Result)
		if py.Str(state.Value(got.Result)) != step.result || got.Comment != step.comment {
			t.Errorf("%s: result %s, comment %q; want %s, %q", step.what, py.Str(state.Value(got.Result)), got.Comment, step.result, step.comment)
		}
		if (len(got.Changes) != 0 || len(step.changes) != 0) && !reflect.DeepEqual(got.Changes, step.changes) {
			t.Errorf("%s: changes %v, want %v", step.what, got.Changes, step.changes)
		}
		if tab := crontab(); tab != step.tab {
			t.Errorf("%s: crontab %q, want %q", step.what, tab, step.tab)
		}
	}
}
