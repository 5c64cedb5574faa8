package user

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	groupmod "github.com/brinehq/brine/modules/group"
	usermod "github.com/brinehq/brine/modules/user"
	"github.com/brinehq/brine/state"
)

// freeUID returns a uid no user has.
func freeUID(t *testing.T) int64 {
	t.Helper()
	us, err := usermod.Users("")
	if err != nil {
		t.Fatal(err)
	}
	for {
		uid := int64(40000 + rand.IntN(20000))
		if !slices.ContainsFunc(us, func(u usermod.User) bool { return int64(u.UID) == uid }) {
			return uid
		}
	}
}

// TestStates creates, changes and removes a real user with the states,
// in test mode and for real.
func TestStates(t *testing.T) {
	testenv.NeedRoot(t, "TestStates adds users and groups: run the tests as root (CI does)")
	for _, tool := range []string{"useradd", "usermod", "userdel", "groupadd", "groupdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestStates needs %s (Debian's passwd package): %v", tool, err)
		}
	}
	env := &modules.Env{ID: "test"}
	funcs, err := modules.Registry(env, usermod.Module, groupmod.Module)
	if err != nil {
		t.Fatal(err)
	}
	// The agent keeps states apart from execution functions.
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	name := "brine-tu-" + id
	g1, g2 := "brine-tg1-"+id, "brine-tg2-"+id
	for _, g := range []string{g1, g2} {
		if out, err := exec.Command("groupadd", g).CombinedOutput(); err != nil {
			t.Fatalf("groupadd %s: %v: %s", g, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("groupdel", g).Run() })
	}
	t.Cleanup(func() {
		_ = exec.Command("userdel", "-r", name).Run()
		_ = exec.Command("groupdel", name).Run()
	})
	home := filepath.Join(t.TempDir(), "home")
	uid := freeUID(t)
	const hash1, hash2 = "$6$brine$abcdefgh", "$6$brine$ijklmnop"
	info := func() map[string]any {
		out, err := funcs.Call(context.Background(), "user.info", []any{name}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(map[string]any)
	}
	shadow := func() string {
		h, err := (&states{shadow: "/etc/shadow"}).hash(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	gidOf := func(g string) int {
		out, err := funcs.Call(context.Background(), "group.info", []any{g}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(map[string]any)["gid"].(int)
	}
	changing := "The following user attributes are set to be changed:\n"
	base := map[string]any{"uid": uid, "groups": []any{g1}, "home": home, "shell": "/bin/sh",
		"fullname": "Brine Test", "password": hash1, "usergroup": true}
	with := func(kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}

	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string
		changes []string // the keys of the changes
		check   func(t *testing.T, got state.Result)
	}{
		// Salt's test mode names the changes in its comment alone.
		{"add, test mode", "user.present", true, base, "None", "User " + name + " set to be added", nil,
			func(t *testing.T, _ state.Result) {
				if len(info()) != 0 {
					t.Error("the user was added in test mode")
				}
			}},
		{"add", "user.present", false, base, "True", "New user " + name + " created",
			[]string{"name", "passwd", "uid", "gid", "home", "shell", "fullname", "roomnumber", "workphone", "homephone", "other", "groups", "password"},
			func(t *testing.T, got state.Result) {
				if got.Changes["password"] != redacted || shadow() != hash1 {
					t.Errorf("password change %v, shadow %q", got.Changes["password"], shadow())
				}
				if !reflect.DeepEqual(got.Changes["groups"], []any{g1, name}) || got.Changes["uid"] != int(uid) || got.Changes["fullname"] != "Brine Test" {
					t.Errorf("changes %v", got.Changes)
				}
				if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
					t.Errorf("home: %v", err)
				}
			}},
		{"present", "user.present", false, base, "True", "User " + name + " is present and up to date", nil, nil},
		{"present, test mode", "user.present", true, base, "True", "User " + name + " is present and up to date", nil, nil},
		{"change, test mode", "user.present", true, with("groups", []any{g1, g2}, "shell", "/bin/bash", "password", hash2), "None",
			changing + "groups: ['" + g1 + "', '" + g2 + "']\nshell: /bin/bash\npasswd: XXX-REDACTED-XXX\n",
			nil, func(t *testing.T, got state.Result) {
				if shadow() != hash1 || info()["shell"] != "/bin/sh" {
					t.Errorf("test mode: changes %v, shadow %q, shell %v", got.Changes, shadow(), info()["shell"])
				}
			}},
		{"change", "user.present", false, with("groups", []any{g1, g2}, "shell", "/bin/bash", "password", hash2), "True",
			"Updated user " + name, []string{"groups", "shell", "passwd"}, func(t *testing.T, got state.Result) {
				if got.Changes["passwd"] != redacted || shadow() != hash2 || got.Changes["shell"] != "/bin/bash" ||
					!reflect.DeepEqual(got.Changes["groups"], []any{g1, g2, name}) {
					t.Errorf("changes %v, shadow %q", got.Changes, shadow())
				}
			}},
		{"password not enforced", "user.present", false, with("groups", []any{g1, g2}, "shell", "/bin/bash", "enforce_password", false), "True",
			"User " + name + " is present and up to date", nil, nil},
		{"keep other groups", "user.present", false, with("groups", []any{g1}, "shell", "/bin/bash", "password", hash2, "remove_groups", false), "True",
			"User " + name + " is present and up to date", nil, nil},
		{"no groups", "user.present", false, with("groups", []any{}, "shell", "/bin/bash", "password", hash2), "True",
			"Updated user " + name, []string{"groups"}, func(t *testing.T, got state.Result) {
				if !reflect.DeepEqual(got.Changes["groups"], []any{name}) {
					t.Errorf("groups %v", got.Changes["groups"])
				}
			}},
		{"optional groups", "user.present", false, with("groups", nil, "optional_groups", []any{g2, "brine-no-such-group"}, "shell", "/bin/bash", "password", hash2), "True",
			"Updated user " + name, []string{"groups"}, nil},
		{"uid change refused", "user.present", false, with("uid", uid+1, "groups", nil, "shell", "/bin/bash", "password", hash2), "False",
			fmt.Sprintf("Encountered error checking for needed changes. Additional info follows:\n\n- Changing uid (%d -> %d) not permitted, "+
				"set allow_uid_change to True to force this change. Note that this will not change file ownership.", uid, uid+1), nil, nil},
		{"gid by name", "user.present", false, with("gid", g1, "allow_gid_change", true, "groups", nil, "shell", "/bin/bash", "password", hash2), "True",
			"Updated user " + name, []string{"gid", "groups"}, func(t *testing.T, got state.Result) {
				if info()["gid"] != gidOf(g1) {
					t.Errorf("gid %v, want %d", info()["gid"], gidOf(g1))
				}
			}},
		{"fullname, home", "user.present", false, with("gid", g1, "groups", nil, "shell", "/bin/bash", "password", hash2, "fullname", "Brine", "home", home+"2"), "True",
			"Updated user " + name, []string{"fullname", "home"}, func(t *testing.T, _ state.Result) {
				if fi, err := os.Stat(home + "2"); err != nil || !fi.IsDir() {
					t.Errorf("new home: %v", err)
				}
			}},
		{"missing group", "user.present", false, with("groups", []any{g1, "brine-no-such-group"}), "False",
			"The following group(s) are not present: brine-no-such-group", nil, nil},
		{"comma in fullname", "user.present", false, with("fullname", "a,b"), "False", "Unsupported char ',' in a,b", nil, nil},
		{"empty password, test mode", "user.present", true, with("gid", g1, "groups", nil, "shell", "/bin/bash", "password", nil, "empty_password", true,
			"fullname", "Brine", "home", home+"2"), "None", changing + "empty_password: True\n", nil, func(t *testing.T, _ state.Result) {
			if shadow() != hash2 {
				t.Errorf("test mode emptied the password: %q", shadow())
			}
		}},
		{"empty password", "user.present", false, with("gid", g1, "groups", nil, "shell", "/bin/bash", "password", nil, "empty_password", true,
			"fullname", "Brine", "home", home+"2"), "True", "Updated user " + name, []string{"passwd"}, func(t *testing.T, got state.Result) {
			if shadow() != "" || got.Changes["passwd"] != redacted {
				t.Errorf("changes %v, shadow %q", got.Changes, shadow())
			}
		}},
		{"remove, test mode", "user.absent", true, nil, "None", "User " + name + " set for removal", nil, func(t *testing.T, _ state.Result) {
			if len(info()) == 0 {
				t.Error("the user was removed in test mode")
			}
		}},
		{"remove", "user.absent", false, map[string]any{"purge": true}, "True", "Removed user " + name, []string{name}, func(t *testing.T, got state.Result) {
			if len(info()) != 0 || got.Changes[name] != "removed" {
				t.Errorf("user.info %v, changes %v", info(), got.Changes)
			}
		}},
		{"absent", "user.absent", false, nil, "True", "User " + name + " is not present", nil, nil},
		{"absent, test mode", "user.absent", true, nil, "True", "User " + name + " is not present", nil, nil},
	} {
		kwargs := map[string]any{"name": name}
		for k, v := range step.kwargs {
			if v != nil {
				kwargs[k] = v
			}
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
		var keys []string
		for k := range got.Changes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := slices.Sorted(slices.Values(step.changes))
		if !slices.Equal(keys, want) {
			t.Errorf("%s: %s: changes %v, want the keys %v", step.what, step.fun, got.Changes, want)
		}
		if step.check != nil {
			step.check(t, got)
		}
	}
}
