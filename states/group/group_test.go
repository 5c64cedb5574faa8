package group

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"reflect"
	"testing"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/internal/testenv"
	"github.com/brinehq/brine/modules"
	groupmod "github.com/brinehq/brine/modules/group"
	"github.com/brinehq/brine/state"
)

// freeGID returns a gid no group has.
func freeGID(t *testing.T) int64 {
	t.Helper()
	gs, err := groupmod.Groups("")
	if err != nil {
		t.Fatal(err)
	}
	for {
		gid := int64(40000 + rand.IntN(20000))
		taken := false
		for _, g := range gs {
			taken = taken || int64(g.GID) == gid || int64(g.GID) == gid+1
		}
		if !taken {
			return gid
		}
	}
}

// TestStates creates, changes and removes a real group (and the users it
// lists) with the states, in test mode and for real.
func TestStates(t *testing.T) {
	testenv.NeedRoot(t, "TestStates adds groups and users: run the tests as root (CI does)")
	for _, tool := range []string{"groupadd", "groupmod", "groupdel", "gpasswd", "useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestStates needs %s (Debian's passwd package): %v", tool, err)
		}
	}
	env := &modules.Env{ID: "test"}
	funcs, err := modules.Registry(env, groupmod.Module)
	if err != nil {
		t.Fatal(err)
	}
	reg := function.New()
	if err := reg.RegisterAll(Module(env)); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	name := "brine-tg-" + id
	u1, u2 := "brine-tu1-"+id, "brine-tu2-"+id
	for _, u := range []string{u1, u2} {
		if out, err := exec.Command("useradd", "-M", "-N", u).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v: %s", u, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("userdel", u).Run() })
	}
	t.Cleanup(func() { _ = exec.Command("groupdel", name).Run() })
	gid := freeGID(t)
	info := func() map[string]any {
		out, err := funcs.Call(context.Background(), "group.info", []any{name}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out.(map[string]any)
	}
	group := func(gid int64, members ...any) map[string]any {
		if members == nil {
			members = []any{}
		}
		return map[string]any{"name": name, "passwd": "x", "gid": int(gid), "members": members}
	}
	final := map[string]any{"Final": "All changes applied successfully"}
	changing := "The following group attributes are set to be changed:\n"

	for _, step := range []struct {
		what    string
		fun     string
		test    bool
		kwargs  map[string]any
		result  string
		comment string
		changes map[string]any
		after   map[string]any // group.info afterwards
	}{
		{"add, test mode", "group.present", true, map[string]any{"gid": gid, "members": []any{u1}}, "None",
			"Group " + name + " set to be added", nil, map[string]any{}},
		{"add", "group.present", false, map[string]any{"gid": gid, "members": []any{u1}}, "True",
			"New group " + name + " created", group(gid, u1), group(gid, u1)},
		{"present", "group.present", false, map[string]any{"gid": gid, "members": []any{u1}}, "True",
			"Group " + name + " is present and up to date", nil, group(gid, u1)},
		{"present, test mode", "group.present", true, map[string]any{"gid": fmt.Sprint(gid)}, "True",
			"Group " + name + " is present and up to date", nil, group(gid, u1)},
		{"add a user, test mode", "group.present", true, map[string]any{"addusers": []any{u2}}, "None",
			changing + "addusers: ['" + u2 + "']\n", nil, group(gid, u1)},
		{"add a user", "group.present", false, map[string]any{"addusers": []any{u2, u1}}, "True",
			changing + "addusers: ['" + u2 + "']\n", final, group(gid, u1, u2)},
		{"remove a user", "group.present", false, map[string]any{"delusers": []any{u1}}, "True",
			changing + "delusers: ['" + u1 + "']\n", final, group(gid, u2)},
		{"set the members", "group.present", false, map[string]any{"members": []any{u1}}, "True",
			changing + "members: ['" + u1 + "']\n", final, group(gid, u1)},
		{"no members", "group.present", false, map[string]any{"members": []any{}}, "True",
			changing + "delusers: ['" + u1 + "']\n", final, group(gid)},
		{"change the gid", "group.present", false, map[string]any{"gid": gid + 1}, "True",
			changing + fmt.Sprintf("gid: %d\n", gid+1), final, group(gid + 1)},
		{"unknown member", "group.present", false, map[string]any{"members": []any{"brine-no-such-user"}}, "False",
			changing + "members: ['brine-no-such-user']\nSome changes could not be applied",
			map[string]any{"Failed": map[string]any{"members": []any{"brine-no-such-user"}}}, group(gid + 1)},
		{"members and addusers", "group.present", false, map[string]any{"members": []any{u1}, "addusers": []any{u2}}, "None",
			`Error: Conflicting options "members" with "addusers" and/or "delusers" can not be used together. `, nil, group(gid + 1)},
		{"add and delete", "group.present", false, map[string]any{"addusers": []any{u1}, "delusers": []any{u1}}, "None",
			"Error. Same user(s) can not be added and deleted simultaneously", nil, group(gid + 1)},
		{"remove, test mode", "group.absent", true, nil, "None", "Group " + name + " is set for removal", nil, group(gid + 1)},
		{"remove", "group.absent", false, nil, "True", "Removed group " + name, map[string]any{name: ""}, map[string]any{}},
		{"absent", "group.absent", false, nil, "True", "Group not present", nil, map[string]any{}},
		{"absent, test mode", "group.absent", true, nil, "True", "Group not present", nil, map[string]any{}},
		{"gid taken", "group.present", false, map[string]any{"gid": 0}, "False",
			"Group " + name + " is not present but gid 0 is already taken by group root", nil, map[string]any{}},
	} {
		kwargs := map[string]any{"name": name}
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
		if now := info(); !reflect.DeepEqual(now, step.after) {
			t.Errorf("%s: group.info %#v, want %#v", step.what, now, step.after)
		}
	}

	if _, err := reg.Call(context.Background(), "group.present", nil, map[string]any{"name": name, "gid": "many"}, nil); err == nil {
		t.Error("gid: many was accepted")
	}
}
