// Package git is Salt's git state module's git.latest: a clone of a
// repository kept at a revision (a branch's tip, a tag or a commit), with
// Salt's changes ({"new": "<url> => <target>", "revision": {"old", "new"}})
// and comments.
//
// brine has no git execution module, so the state runs the git command
// itself (git here), as the user given when there is one; what it runs is
// what Salt's git module runs for the same state: ls-remote to learn the
// remote revision, clone, fetch, checkout, reset and submodule update.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/internal/sysuser"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// Module declares the git states.
func Module(*modules.Env) []function.Func {
	flag := func(n string, def bool) function.Param {
		return function.Param{Name: n, Kind: function.Bool, Default: def}
	}
	return []function.Func{
		{Name: "git.latest",
			Doc: "Ensure target is a clone of the repository name at rev (a branch's tip, a tag or a commit; " +
				"HEAD: the remote's default branch), fetching and checking it out as needed.",
			Params: []function.Param{
				{Name: "name", Kind: function.String, Required: true},
				{Name: "rev", Kind: function.String, Default: "HEAD"},
				{Name: "target", Kind: function.String},
				{Name: "branch", Kind: function.String},
				{Name: "user", Kind: function.String},
				{Name: "password", Kind: function.String},
				flag("update_head", true),
				flag("force_checkout", false),
				flag("force_clone", false),
				flag("force_fetch", false),
				{Name: "force_reset", Kind: function.Any, Default: false},
				flag("submodules", false),
				flag("bare", false),
				flag("mirror", false),
				{Name: "remote", Kind: function.String, Default: "origin"},
				flag("fetch_tags", true),
				flag("sync_tags", true),
				{Name: "depth", Kind: function.Int},
				{Name: "identity", Kind: function.Any},
				{Name: "https_user", Kind: function.String},
				{Name: "https_pass", Kind: function.String},
				{Name: "output_encoding", Kind: function.String},
			},
			VarKwargs: true, Run: latest},
	}
}

// runner runs git, as a user when one is given.
type runner struct {
	attr *syscall.SysProcAttr // the user git runs as; nil for the agent's
	env  []string
}

// newRunner prepares git runs as account ("" for the agent's own) with
// identity (an SSH key, or a list of them) for SSH remotes.
func newRunner(account string, identity any) (*runner, error) {
	r := &runner{env: []string{"GIT_TERMINAL_PROMPT=0"}}
	if account != "" {
		u, err := user.Lookup(account)
		if err != nil {
			return nil, fmt.Errorf("user %s: %w", account, err)
		}
		if r.attr, err = sysuser.ProcAttr(u); err != nil {
			return nil, err
		}
		r.env = append(r.env, "HOME="+u.HomeDir, "USER="+u.Username, "LOGNAME="+u.Username)
	}
	var keys []string
	switch t := identity.(type) {
	case nil:
	case string:
		keys = []string{t}
	case []any:
		for _, k := range t {
			keys = append(keys, fmt.Sprint(k))
		}
	default:
		return nil, fmt.Errorf("identity: want a key file or a list of them, got %T", identity)
	}
	if len(keys) > 0 {
		ssh := "ssh -o IdentitiesOnly=yes"
		for _, k := range keys {
			if strings.HasPrefix(k, "salt://") {
				return nil, fmt.Errorf("identity %s: salt:// keys are not supported, give a local path", k)
			}
			ssh += " -i " + strconv.Quote(k)
		}
		r.env = append(r.env, "GIT_SSH_COMMAND="+ssh)
	}
	return r, nil
}

// waitDelay bounds the wait for output after git exits (a credential
// helper or ssh master left behind must not hold the state).
const waitDelay = 5 * time.Second

// git runs git with args in dir ("" for none) and returns its trimmed
// standard output; a failure is an error with what git said.
func (r *runner) git(ctx context.Context, dir string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, "git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), r.env...)
	c.SysProcAttr = r.attr
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.WaitDelay = waitDelay
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// remoteRev is what rev names in the remote repository.
type remoteRev struct {
	sha    string // the commit ("" when rev is a commit id not advertised)
	branch string // the remote branch rev is (HEAD: the default branch)
	tag    bool
}

var hexID = regexp.MustCompile(`^[0-9a-f]{4,40}$`)

// resolve asks the remote what rev is, as Salt does with ls-remote.
func (r *runner) resolve(ctx context.Context, url, rev string) (remoteRev, bool, error) {
	out, err := r.git(ctx, "", "ls-remote", "--symref", url)
	if err != nil {
		return remoteRev{}, false, err
	}
	refs := map[string]string{}
	headBranch := ""
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "ref:" && f[2] == "HEAD":
			headBranch = strings.TrimPrefix(f[1], "refs/heads/")
		case len(f) == 2:
			refs[f[1]] = f[0]
		}
	}
	switch {
	case rev == "HEAD":
		if sha, ok := refs["HEAD"]; ok {
			return remoteRev{sha: sha, branch: headBranch}, true, nil
		}
	case refs["refs/heads/"+rev] != "":
		return remoteRev{sha: refs["refs/heads/"+rev], branch: rev}, true, nil
	case refs["refs/tags/"+rev+"^{}"] != "":
		return remoteRev{sha: refs["refs/tags/"+rev+"^{}"], tag: true}, true, nil
	case refs["refs/tags/"+rev] != "":
		return remoteRev{sha: refs["refs/tags/"+rev], tag: true}, true, nil
	case hexID.MatchString(rev):
		for _, sha := range refs {
			if strings.HasPrefix(sha, rev) {
				return remoteRev{sha: sha}, true, nil
			}
		}
		// A commit no ref points at: known once fetched.
		return remoteRev{}, true, nil
	}
	return remoteRev{}, false, nil
}

func isRepo(target string) bool {
	fi, err := os.Stat(filepath.Join(target, ".git"))
	return err == nil && (fi.IsDir() || fi.Mode().IsRegular())
}

func latest(ctx context.Context, in *function.Input) (any, error) {
	name, target, rev := in.String("name"), in.String("target"), in.String("rev")
	branch, remote := in.String("branch"), in.String("remote")
	switch {
	case target == "":
		return state.Failed(name, `"target" option is required`), nil
	case !filepath.IsAbs(target):
		return state.Failed(name, "target '%s' is not an absolute path", target), nil
	case rev == "":
		return state.Failed(name, "'%s' is not a valid value for the 'rev' argument", rev), nil
	case in.Bool("bare") || in.Bool("mirror"):
		return state.Failed(name, "bare and mirror clones are not supported"), nil
	case in.String("https_user") != "" || in.String("https_pass") != "":
		return state.Failed(name, "https_user and https_pass are not supported: give the credentials in the URL or a credential helper"), nil
	case remote == "" || strings.HasPrefix(remote, "-"):
		return state.Failed(name, "'%s' is not a valid remote name", remote), nil
	}
	target = filepath.Clean(target)
	r, err := newRunner(in.String("user"), in.Value("identity"))
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	want, found, err := r.resolve(ctx, name, rev)
	if err != nil {
		return state.Failed(name, "Failed to check remote refs: %v", err), nil
	}
	if !found {
		return state.Failed(name, "No revision matching '%s' exists in the remote repository", rev), nil
	}
	// The local branch to keep at the revision: branch, else the remote
	// branch rev names; none (a detached HEAD) for a tag or a commit.
	local := branch
	if local == "" {
		local = want.branch
	}
	if !isRepo(target) {
		return clone(ctx, r, in, name, target, rev, local, want)
	}
	return update(ctx, r, in, name, target, rev, local, want)
}

func clone(ctx context.Context, r *runner, in *function.Input, name, target, rev, local string, want remoteRev) (any, error) {
	ents, err := os.ReadDir(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return state.Failed(name, "%v", err), nil
	case len(ents) > 0 && !in.Bool("force_clone"):
		return state.Failed(name, "Target '%s' exists, is non-empty and is not a git repository. Set the 'force_clone' option "+
			"to True to remove this directory's contents and proceed with cloning the remote repository", target), nil
	}
	changes := map[string]any{"new": name + " => " + target}
	if len(ents) > 0 {
		changes["forced clone"] = true
	}
	if state.From(ctx).Test {
		// Salt's test mode names the clone, not the revision it would
		// check out.
		if len(ents) > 0 {
			return state.Pending(name, fmt.Sprintf("Target directory %[1]s exists. Since force_clone=True, the contents of %[1]s would be deleted, "+
				"and %[2]s would be cloned into this directory.", target, name), changes), nil
		}
		return state.Pending(name, fmt.Sprintf("Repository %s would be cloned to %s", name, target), changes), nil
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(target, e.Name())); err != nil {
			return state.Failed(name, "Unable to remove %s: %v", target, err), nil
		}
	}
	args := []string{"clone", "--origin", in.String("remote")}
	if d := in.Int("depth"); d > 0 {
		args = append(args, "--depth", strconv.FormatInt(d, 10))
	}
	if want.branch != "" && want.branch != "HEAD" {
		args = append(args, "--branch", want.branch)
	} else if want.tag {
		args = append(args, "--branch", rev)
	}
	if !in.Bool("fetch_tags") {
		args = append(args, "--no-tags")
	}
	// Salt's git.clone runs in /tmp, which exists: git creates the
	// target's missing parents itself.
	if _, err := r.git(ctx, os.TempDir(), append(args, "--", name, target)...); err != nil {
		return state.Failed(name, "Clone failed: %v", err), nil
	}
	if err := checkout(ctx, r, in, target, rev, local, want, true); err != nil {
		return state.Failed(name, "%s cloned to %s, but checking out %s failed: %v", name, target, rev, err), nil
	}
	sha, err := r.git(ctx, target, "rev-parse", "HEAD")
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	changes["revision"] = map[string]any{"old": nil, "new": sha}
	return state.Succeeded(name, fmt.Sprintf("%s cloned to %s", name, target), changes), nil
}

// checkout moves target's HEAD to the wanted revision: local's branch
// set to it, or a detached HEAD; force discards local changes.
func checkout(ctx context.Context, r *runner, in *function.Input, target, rev, local string, want remoteRev, force bool) error {
	sha := want.sha
	if sha == "" {
		// A commit id the remote does not advertise: fetched already.
		out, err := r.git(ctx, target, "rev-parse", "--verify", rev+"^{commit}")
		if err != nil {
			return err
		}
		sha = out
	}
	force = force || in.Bool("force_checkout")
	args := []string{"checkout"}
	if force {
		args = append(args, "--force")
	}
	if local != "" {
		args = append(args, "-B", local, sha)
	} else {
		args = append(args, "--detach", sha)
	}
	if _, err := r.git(ctx, target, args...); err != nil {
		return err
	}
	if local != "" && want.branch != "" {
		// The branch follows its remote one, as a clone's does.
		_, _ = r.git(ctx, target, "branch", "--set-upstream-to", in.String("remote")+"/"+want.branch, local)
	}
	if in.Bool("submodules") {
		if _, err := r.git(ctx, target, "submodule", "update", "--init", "--recursive"); err != nil {
			return err
		}
	}
	return nil
}

func update(ctx context.Context, r *runner, in *function.Input, name, target, rev, local string, want remoteRev) (any, error) {
	remote := in.String("remote")
	test := state.From(ctx).Test
	force, forceRemote := resetMode(in.Value("force_reset"))
	head, _ := r.git(ctx, target, "rev-parse", "--verify", "-q", "HEAD")
	branchNow, _ := r.git(ctx, target, "symbolic-ref", "-q", "--short", "HEAD")
	changes := map[string]any{}
	url, _ := r.git(ctx, target, "config", "--get", "remote."+remote+".url")
	if url != name {
		changes["remote"] = map[string]any{"old": url, "new": name}
	}
	wantSHA := want.sha
	if wantSHA == "" {
		// A commit id: is it here already?
		if sha, err := r.git(ctx, target, "rev-parse", "--verify", "-q", rev+"^{commit}"); err == nil {
			wantSHA = sha
		}
	}
	dirty, err := r.git(ctx, target, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	move := wantSHA == "" || head != wantSHA || (local != "" && branchNow != local)
	if !in.Bool("update_head") {
		move = false
	}

	if !move {
		switch {
		case len(changes) > 0 || !in.Bool("update_head"):
		case dirty == "":
			return state.Succeeded(name, fmt.Sprintf("Repository %s is up-to-date", target), nil), nil
		case !force:
			return state.Succeeded(name, fmt.Sprintf("Repository %s is up-to-date, but with uncommitted changes. "+
				"Set 'force_reset' to True to purge uncommitted changes.", target), nil), nil
		case test:
			return state.Pending(name, "Uncommitted changes would be discarded", map[string]any{"forced update": true}), nil
		default:
			if _, err := r.git(ctx, target, "reset", "--hard", "HEAD"); err != nil {
				return state.Failed(name, "%v", err), nil
			}
			return state.Succeeded(name, "Uncommitted changes were discarded", map[string]any{"forced update": true}), nil
		}
	}

	// Fetch what is missing (not in test mode, which changes nothing).
	fetched := wantSHA != "" && hasCommit(ctx, r, target, wantSHA)
	if !test && (!fetched || !in.Bool("update_head")) {
		if _, ok := changes["remote"]; ok {
			if url == "" {
				_, err = r.git(ctx, target, "remote", "add", remote, name)
			} else {
				_, err = r.git(ctx, target, "remote", "set-url", remote, name)
			}
			if err != nil {
				return state.Failed(name, "%v", err), nil
			}
		}
		fetch := []string{"fetch"}
		if d := in.Int("depth"); d > 0 {
			fetch = append(fetch, "--depth", strconv.FormatInt(d, 10))
		}
		if in.Bool("fetch_tags") {
			fetch = append(fetch, "--tags")
		}
		if in.Bool("force_fetch") {
			fetch = append(fetch, "--force")
		}
		if _, err := r.git(ctx, target, append(fetch, remote)...); err != nil {
			return state.Failed(name, "Fetch failed: %v", err), nil
		}
		if wantSHA == "" {
			wantSHA, _ = r.git(ctx, target, "rev-parse", "--verify", "-q", rev+"^{commit}")
		}
		if wantSHA != "" && !hasCommit(ctx, r, target, wantSHA) {
			// A commit outside the fetched refs.
			if _, err := r.git(ctx, target, append(fetch, remote, wantSHA)...); err != nil {
				return state.Failed(name, "Fetch failed: %v", err), nil
			}
		}
		fetched = wantSHA != ""
	}
	if !in.Bool("update_head") {
		comment := fmt.Sprintf("Repository %s was fetched; update_head is False, so its HEAD was not updated", target)
		if test {
			return state.Pending(name, fmt.Sprintf("Repository %s would be fetched; update_head is False, so its HEAD would not be updated", target), changes), nil
		}
		return state.Succeeded(name, comment, changes), nil
	}

	var old any = head
	if head == "" {
		old = nil
	}
	newRev := wantSHA
	if newRev == "" {
		newRev = rev
	}
	// A branch that has a commit of its own is not moved off it unless
	// force_reset says so: its history would be lost.
	ff := true
	onBranch := local != "" && branchNow != "" && head != ""
	if onBranch && fetched {
		_, err := r.git(ctx, target, "merge-base", "--is-ancestor", head, wantSHA)
		ff = err == nil
	}
	if !ff && !force {
		msg := fmt.Sprintf("Repository %s cannot be updated from %s to %s: this is not a fast-forward merge. "+
			"Set 'force_reset' to True to force this update", target, short(head), short(newRev))
		switch {
		case branchNow != local && rev == "HEAD":
			msg += fmt.Sprintf(". The default remote branch (%s) differs from the local branch (%s)", want.branch, branchNow)
		case branchNow != local:
			msg += fmt.Sprintf(". The desired rev (%s) differs from the name of the local branch (%s)", rev, branchNow)
		}
		return state.Failed(name, "%s.", msg), nil
	}
	discard := dirty != "" && (force || forceRemote)
	if dirty != "" && !discard {
		return state.Failed(name, "Repository %s would be updated from %s to %s, but there are uncommitted changes. "+
			"Set 'force_reset' to True (or 'remote-changes') to force this update and discard these changes.", target, short(head), short(newRev)), nil
	}
	if head != wantSHA {
		changes["revision"] = map[string]any{"old": old, "new": newRev}
	}
	var actions []string
	if discard {
		actions = append(actions, "Uncommitted changes were discarded")
	}
	switch {
	case !ff:
		changes["forced update"] = true
		actions = append(actions, "Repository was hard-reset")
	case onBranch && head != wantSHA:
		actions = append(actions, "Repository was fast-forwarded")
	default:
		actions = append(actions, fmt.Sprintf("Repository %s updated", target))
	}
	if test {
		return state.Pending(name, fmt.Sprintf("Repository %s would be updated", target), changes), nil
	}
	if err := checkout(ctx, r, in, target, rev, local, want, discard || !ff); err != nil {
		return state.Failed(name, "Checking out %s in %s failed: %v", rev, target, err), nil
	}
	now, err := r.git(ctx, target, "rev-parse", "HEAD")
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	if now != head {
		changes["revision"] = map[string]any{"old": old, "new": now}
	} else {
		delete(changes, "revision")
	}
	if len(changes) == 0 {
		return state.Succeeded(name, fmt.Sprintf("Repository %s is up-to-date", target), nil), nil
	}
	comment := strings.Join(actions, ". ")
	if len(actions) > 1 {
		comment += "."
	}
	return state.Succeeded(name, comment, changes), nil
}

// resetMode reads force_reset: True, or "remote-changes" (discard local
// changes only when the remote has changes to bring).
func resetMode(v any) (force, remoteChanges bool) {
	switch t := v.(type) {
	case bool:
		return t, false
	case string:
		if t == "remote-changes" {
			return false, true
		}
		b, _ := strconv.ParseBool(t)
		return b, false
	}
	return false, false
}

// short is a commit id as git abbreviates it.
func short(sha string) string {
	if len(sha) > 7 && hexID.MatchString(sha) {
		return sha[:7]
	}
	return sha
}

// hasCommit reports whether target has the commit sha.
func hasCommit(ctx context.Context, r *runner, target, sha string) bool {
	_, err := r.git(ctx, target, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}
