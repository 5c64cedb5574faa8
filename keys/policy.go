package keys

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/internal/fnmatch"
)

// Policy is how the master treats keys it does not know yet: Salt's
// master options of the same names. Paths are absolute (the master resolves
// them against its configuration directory).
type Policy struct {
	// AutoAccept accepts every new key (auto_accept).
	AutoAccept bool
	// AutosignFile lists ids whose new keys are accepted: one id, glob or
	// regular expression a line, # comments (autosign_file).
	AutosignFile string
	// AutorejectFile lists ids whose new keys are rejected, in the same
	// format; it wins over every way of accepting (autoreject_file).
	AutorejectFile string
	// AutosignGrainsDir holds one file per grain name listing accepted
	// values, one a line, # comments; an agent whose autosign_grains have
	// one of them is accepted (autosign_grains_dir).
	AutosignGrainsDir string
	// AuthEvents fires salt/auth for each hello (auth_events).
	AuthEvents bool
	// MaxPending bounds the keys in pending (max_pending_keys; 0: no
	// bound): a new id's hello beyond it is turned away and stores
	// nothing (ErrTooManyPending).
	MaxPending int
}

// DefaultMaxPending is max_pending_keys' default: more than an autoscaling
// burst waiting for an operator, far fewer than a flood of made-up ids.
const DefaultMaxPending = 1000

// DefaultPolicy is Salt's (new keys wait for an operator, salt/auth is
// fired), with brine's bound on pending keys.
var DefaultPolicy = Policy{AuthEvents: true, MaxPending: DefaultMaxPending}

// recheckInterval is how often the policy's files are looked at for a
// change, at most: an autosign_file edited takes effect within it, without
// reading the files at every hello of an agent flood.
const recheckInterval = time.Second

// rules is a loaded policy.
type rules struct {
	Policy
	// sign and reject match ids with the lines of autosign_file and
	// autoreject_file (Salt's expr_match: the id, a glob or a regular
	// expression of the whole id).
	sign, reject []func(id string) bool
	// grains maps a grain name to the values that accept.
	grains map[string][]string
	// seen describes the files as read (names, sizes, times); checked is
	// when it was last compared with the disk.
	seen    string
	checked time.Time
}

// SetPolicy loads p's files and applies it to the hellos that follow. A
// file or directory that is missing, unreadable, or writable by others
// than its owner (Salt ignores such files) is an error naming it, and the
// policy in force stays. Files are read again when they change.
func (s *Store) SetPolicy(p Policy) error {
	r, err := loadRules(p, true, s.log)
	if err != nil {
		return err
	}
	r.checked = s.now()
	s.mu.Lock()
	s.policy = r
	s.mu.Unlock()
	return nil
}

// rules returns the policy in force, first reading its files again when
// they changed on disk. A file that went missing or became unsafe then
// matches nothing (as in Salt), which accepts and rejects nothing by
// itself: such keys wait in pending.
func (s *Store) rules() *rules {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.policy == nil {
		s.policy = &rules{Policy: DefaultPolicy}
	}
	r := s.policy
	now := s.now()
	if now.Sub(r.checked) < recheckInterval || (r.AutosignFile == "" && r.AutorejectFile == "" && r.AutosignGrainsDir == "") {
		return r
	}
	r.checked = now
	if describeFiles(r.Policy) == r.seen {
		return r
	}
	nr, err := loadRules(r.Policy, false, s.log)
	if err != nil {
		// Not reached: a lenient load reports problems in the log.
		s.log.Error("keys: reloading the key policy files", "err", err)
		return r
	}
	nr.checked = now
	s.policy = nr
	s.log.Info("keys: key policy files changed; reloaded")
	return nr
}

// PolicyError is a policy file that cannot be used; Key names the option
// (autosign_file…) so that the master can say where it was set.
type PolicyError struct {
	Key string
	Err error
}

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// loadRules reads p's files. strict makes a problem an error; otherwise
// the file is logged and matches nothing.
func loadRules(p Policy, strict bool, log *slog.Logger) (*rules, error) {
	r := &rules{Policy: p, seen: describeFiles(p)}
	problem := func(key string, err error) error {
		if strict {
			return &PolicyError{Key: key, Err: err}
		}
		log.Warn("keys: ignoring a key policy file", "err", err)
		return nil
	}
	for _, f := range []struct {
		key  string
		path string
		dst  *[]func(id string) bool
	}{{"autosign_file", p.AutosignFile, &r.sign}, {"autoreject_file", p.AutorejectFile, &r.reject}} {
		if f.path == "" {
			continue
		}
		lines, err := readPolicyFile(f.key, f.path)
		if err != nil {
			if err := problem(f.key, err); err != nil {
				return nil, err
			}
			continue
		}
		for _, l := range lines {
			*f.dst = append(*f.dst, fnmatch.ExprMatcher(l))
		}
	}
	if p.AutosignGrainsDir != "" {
		grains, err := readGrainsDir(p.AutosignGrainsDir)
		if err != nil {
			if err := problem("autosign_grains_dir", err); err != nil {
				return nil, err
			}
		}
		r.grains = grains
	}
	return r, nil
}

// checkSafe refuses a file others than its owner may write: anyone able to
// edit an autosign file can admit any agent (Salt's check_permissions).
func checkSafe(key, path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s is writable by its group or by everyone (mode %04o): refusing to trust it; chmod go-w it",
			key, path, fi.Mode().Perm())
	}
	return nil
}

// readPolicyFile returns the entries of a signing file: lines trimmed,
// without comments and blank lines.
func readPolicyFile(key, path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s %s is a directory, want a file of ids", key, path)
	}
	if err := checkSafe(key, path, fi); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return entries(b), nil
}

func entries(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// readGrainsDir reads autosign_grains_dir: each regular file is named after
// a grain and lists the values that accept.
func readGrainsDir(dir string) (map[string][]string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("autosign_grains_dir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("autosign_grains_dir %s is not a directory", dir)
	}
	if err := checkSafe("autosign_grains_dir", dir, fi); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("autosign_grains_dir: %w", err)
	}
	out := map[string][]string{}
	var errs []error
	for _, de := range des {
		if !de.Type().IsRegular() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		lines, err := readPolicyFile("autosign_grains_dir", filepath.Join(dir, de.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[de.Name()] = lines
	}
	return out, errors.Join(errs...)
}

// describeFiles names the policy's files with their sizes, modes and times,
// so that a change to any of them (or to the grains directory's files) is
// seen.
func describeFiles(p Policy) string {
	var b strings.Builder
	stat := func(path string) {
		fi, err := os.Stat(path)
		if err != nil {
			fmt.Fprintf(&b, "%s %v\n", path, err)
			return
		}
		fmt.Fprintf(&b, "%s %d %o %d\n", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
	}
	for _, path := range []string{p.AutosignFile, p.AutorejectFile, p.AutosignGrainsDir} {
		if path != "" {
			stat(path)
		}
	}
	if p.AutosignGrainsDir != "" {
		des, _ := os.ReadDir(p.AutosignGrainsDir)
		for _, de := range des {
			stat(filepath.Join(p.AutosignGrainsDir, de.Name()))
		}
	}
	return b.String()
}

// autoreject reports whether id's new key is rejected by autoreject_file.
func (r *rules) autoreject(id string) bool {
	return slices.ContainsFunc(r.reject, func(match func(string) bool) bool { return match(id) })
}

// autosign reports why id's new key is accepted without an operator ("" if
// it is not): auto_accept, autosign_file, or a grain of autosign_grains
// listed in autosign_grains_dir. Grain values are compared as Salt does,
// as strings, equal to a line.
func (r *rules) autosign(id string, grains map[string]any) string {
	switch {
	case r.AutoAccept:
		return "auto_accept"
	case slices.ContainsFunc(r.sign, func(match func(string) bool) bool { return match(id) }):
		return "autosign_file"
	}
	for _, name := range slices.Sorted(maps.Keys(grains)) {
		v, ok := grains[name].(string)
		if ok && slices.Contains(r.grains[name], v) {
			return "autosign_grains_dir (" + name + ")"
		}
	}
	return ""
}
