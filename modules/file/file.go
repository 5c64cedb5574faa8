// Package file is Salt's file execution module, as far as agents need it
// to look at and change files: file_exists, directory_exists, read, write,
// append, remove, mkdir, touch, chown, chgrp, get_mode, set_mode, stats,
// get_hash, the owner getters and the user/group id conversions, and the
// text editors replace, search, sed and blockreplace, with Salt's
// arguments and return shapes.
//
// Unlike Salt, every path must be absolute (after ~ expansion): an agent's
// working directory is wherever its service manager started it, so a
// relative path would name a different file on each machine. Where Salt
// returns an error text as a successful return (chown's "User does not
// exist", set_mode's "Invalid Mode"), the call fails with that text, so
// that the job's retcode says so.
package file

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
)

// Module declares the file functions.
func Module(*modules.Env) []function.Func {
	path := function.Param{Name: "path", Kind: function.String, Required: true}
	follow := function.Param{Name: "follow_symlinks", Kind: function.Bool, Default: true}
	owner := func(key string) function.Handler {
		return func(_ context.Context, in *function.Input) (any, error) {
			p, err := absolute(in.Func, in.String("path"))
			if err != nil {
				return nil, err
			}
			st, err := Stats(p, "", in.Bool("follow_symlinks"))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", in.Func, err)
			}
			return st[key], nil
		}
	}
	return append([]function.Func{
		{
			Name: "file.basename", ReadOnly: true, Doc: "The final component of path (Python's os.path.basename: \"\" after a trailing slash).",
			Params: []function.Param{path},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				p := in.String("path")
				return p[strings.LastIndex(p, "/")+1:], nil
			},
		},
		{
			Name: "file.dirname", ReadOnly: true, Doc: "The directory of path (Python's os.path.dirname: \"\" for a bare name).",
			Params: []function.Param{path},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				p := in.String("path")
				head := p[:strings.LastIndex(p, "/")+1]
				if t := strings.TrimRight(head, "/"); t != "" {
					head = t
				}
				return head, nil
			},
		},
		{
			Name: "file.join", ReadOnly: true, VarArgs: true, Doc: "The arguments joined into a path (Python's os.path.join: an absolute part starts over).",
			Run: func(_ context.Context, in *function.Input) (any, error) {
				parts := make([]string, len(in.Extra))
				for i, a := range in.Extra {
					parts[i] = fmt.Sprint(a)
				}
				return py.PathJoin(parts...), nil
			},
		},
		{
			Name: "file.file_exists", Doc: "Whether path is a file (symlinks followed).",
			Params: []function.Param{path}, ReadOnly: true,
			Run: withPath(func(p string, _ *function.Input) (any, error) {
				fi, err := os.Stat(p)
				return err == nil && fi.Mode().IsRegular(), nil
			}),
		},
		{
			Name: "file.directory_exists", Doc: "Whether path is a directory (symlinks followed).",
			Params: []function.Param{path}, ReadOnly: true,
			Run: withPath(func(p string, _ *function.Input) (any, error) {
				fi, err := os.Stat(p)
				return err == nil && fi.IsDir(), nil
			}),
		},
		{
			Name: "file.read", Doc: "The contents of the file at path, as text (binary=True reads it the same way: " +
				"the return is text either way, and a file that is not UTF-8 is an error).",
			Params:   []function.Param{path, {Name: "binary", Kind: function.Bool, Default: false}},
			ReadOnly: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				if !utf8.Valid(b) {
					return nil, fmt.Errorf("%s: %s is not UTF-8 text", in.Func, p)
				}
				return string(b), nil
			}),
		},
		{
			Name: "file.write", Doc: "Write the given lines (positional arguments, or args=[…]) to path, each ending " +
				"with a newline, replacing what it held; returns 'Wrote N lines to \"path\"'.",
			Params: []function.Param{path}, VarArgs: true, VarKwargs: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				lines := lineArgs(in)
				if err := os.WriteFile(p, []byte(joinLines(lines)), 0o666); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return fmt.Sprintf("Wrote %d lines to %q", len(lines), p), nil
			}),
		},
		{
			Name: "file.append", Doc: "Append the given lines (positional arguments, or args=[…]) to the existing file " +
				"at path, starting on a new line; returns 'Wrote N lines to \"path\"'.",
			Params: []function.Param{path}, VarArgs: true, VarKwargs: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				lines := lineArgs(in)
				if err := appendLines(p, lines); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return fmt.Sprintf("Wrote %d lines to %q", len(lines), p), nil
			}),
		},
		{
			Name: "file.remove", Doc: "Remove the file, symlink or directory (recursively) at path: True, or False when nothing is there.",
			Params: []function.Param{path}, VarKwargs: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				fi, err := os.Lstat(p)
				if errors.Is(err, fs.ErrNotExist) {
					return false, nil
				}
				if err == nil {
					if fi.IsDir() {
						err = os.RemoveAll(p)
					} else {
						err = os.Remove(p)
					}
				}
				if err != nil {
					return nil, fmt.Errorf("%s: Could not remove '%s': %w", in.Func, p, err)
				}
				return true, nil
			}),
		},
		{
			Name: "file.mkdir", Doc: "Create dir_path and its missing parents, each owned by user and group and with " +
				"mode (octal) when given; True.",
			Params: []function.Param{
				{Name: "dir_path", Kind: function.String, Required: true},
				{Name: "user", Kind: function.Any},
				{Name: "group", Kind: function.Any},
				{Name: "mode", Kind: function.String},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				p, err := absolute(in.Func, in.String("dir_path"))
				if err != nil {
					return nil, err
				}
				if err := mkdir(p, in.Value("user"), in.Value("group"), in.String("mode")); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return true, nil
			},
		},
		{
			Name: "file.touch", Doc: "Create name if absent and set its access and modification times (Unix seconds; " +
				"now when not given); True.",
			Params: []function.Param{
				{Name: "name", Kind: function.String, Required: true},
				{Name: "atime", Kind: function.Int},
				{Name: "mtime", Kind: function.Int},
			},
			Run: func(_ context.Context, in *function.Input) (any, error) {
				p, err := absolute(in.Func, in.String("name"))
				if err != nil {
					return nil, err
				}
				if err := touch(p, in.Int("atime"), in.Int("mtime")); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return true, nil
			},
		},
		{
			Name: "file.chown", Doc: "Set the owner and group of path (names or ids; \"\" leaves one as it is, " +
				"None for user is the agent's user); None.",
			Params: []function.Param{path,
				{Name: "user", Kind: function.Any, Required: true},
				{Name: "group", Kind: function.Any, Required: true}},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				return nil, chown(in.Func, p, in.Value("user"), in.Value("group"), true)
			}),
		},
		{
			Name: "file.chgrp", Doc: "Set the group of path (a name or an id); None.",
			Params: []function.Param{path, {Name: "group", Kind: function.Any, Required: true}},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				return nil, chown(in.Func, p, "", in.Value("group"), false)
			}),
		},
		{
			Name: "file.get_mode", Doc: "The permission bits of path as Salt writes them (\"0644\").",
			Params: []function.Param{path, follow}, ReadOnly: true, Run: owner("mode"),
		},
		{
			Name: "file.get_uid", Doc: "The id of the user owning path.",
			Params: []function.Param{path, follow}, ReadOnly: true, Run: owner("uid"),
		},
		{
			Name: "file.get_gid", Doc: "The id of the group owning path.",
			Params: []function.Param{path, follow}, ReadOnly: true, Run: owner("gid"),
		},
		{
			Name: "file.get_user", Doc: "The name of the user owning path (its id when it has no name).",
			Params: []function.Param{path, follow}, ReadOnly: true, Run: owner("user"),
		},
		{
			Name: "file.get_group", Doc: "The name of the group owning path (its id when it has no name).",
			Params: []function.Param{path, follow}, ReadOnly: true, Run: owner("group"),
		},
		{
			Name: "file.set_mode", Doc: "Set the permission bits of path to mode (octal, \"0644\" or \"644\"); returns the new mode.",
			Params: []function.Param{path, {Name: "mode", Kind: function.String, Required: true}},
			Run: withPath(func(p string, in *function.Input) (any, error) {
				if _, err := os.Stat(p); err != nil {
					return nil, fmt.Errorf("%s: %s: File not found", in.Func, p)
				}
				bits, ok := parseMode(in.String("mode"))
				if !ok {
					return nil, fmt.Errorf("%s: Invalid Mode %s", in.Func, strings.TrimLeft(in.String("mode"), "0Oo"))
				}
				if err := os.Chmod(p, bits); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				st, err := Stats(p, "", true)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return st["mode"], nil
			}),
		},
		{
			Name: "file.stats", Doc: "Salt's stats of path: inode, uid, gid, user, group, atime, mtime, ctime, size, " +
				"mode, type, target, and sum when hash_type (md5, sha1, sha224, sha256, sha384, sha512, sha3_*) is given.",
			Params:   []function.Param{path, {Name: "hash_type", Kind: function.String}, follow},
			ReadOnly: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				st, err := Stats(p, in.String("hash_type"), in.Bool("follow_symlinks"))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return st, nil
			}),
		},
		{
			Name: "file.get_hash", Doc: "The hex digest of the file at path with form (md5, sha1, sha224, sha256 — the " +
				"default —, sha384, sha512, sha3_224, sha3_256, sha3_384, sha3_512).",
			Params: []function.Param{path,
				{Name: "form", Kind: function.String, Default: "sha256"},
				{Name: "chunk_size", Kind: function.Int, Default: int64(65536)}},
			ReadOnly: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				if in.Int("chunk_size") <= 0 {
					return nil, fmt.Errorf("%s: chunk_size must be positive, got %d", in.Func, in.Int("chunk_size"))
				}
				sum, err := Hash(p, in.String("form"))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return sum, nil
			}),
		},
		{
			Name: "file.check_hash", Doc: "Whether the file at path has file_hash: <type>:<hex>, <type>=<hex>, or a hex digest " +
				"whose length says its type (md5, sha1, sha224, sha256, sha384, sha512).",
			Params:   []function.Param{path, {Name: "file_hash", Kind: function.Any, Required: true}},
			ReadOnly: true,
			Run: withPath(func(p string, in *function.Input) (any, error) {
				fh, ok := in.Value("file_hash").(string)
				if !ok {
					return nil, editErrorf("hash must be a string")
				}
				typ, value, found := "", fh, false
				for _, sep := range []string{":", "="} {
					if typ, value, found = strings.Cut(fh, sep); found {
						break
					}
				}
				if !found {
					value = fh
					if typ = hashTypeOf(len(fh)); typ == "" {
						return nil, editErrorf("Hash %s (length: %d) could not be matched to a supported hash type. "+
							"The supported hash types and lengths are: md5 (32), sha1 (40), sha224 (56), sha256 (64), sha384 (96), sha512 (128)", fh, len(fh))
					}
				}
				sum, err := Hash(p, typ)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", in.Func, err)
				}
				return sum == value, nil
			}),
		},
		{
			Name: "file.user_to_uid", Doc: "The uid of user (a name; an id is returned as it is; None is the agent's user), \"\" when unknown.",
			Params: []function.Param{{Name: "user", Kind: function.Any}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if in.Value("user") == nil {
					return os.Geteuid(), nil
				}
				if uid, ok := lookupUser(in.Value("user")); ok {
					return uid, nil
				}
				return "", nil
			},
		},
		{
			Name: "file.group_to_gid", Doc: "The gid of group (a name; an id is returned as it is), \"\" when unknown or None.",
			Params: []function.Param{{Name: "group", Kind: function.Any}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				if gid, ok := lookupGroup(in.Value("group")); ok && in.Value("group") != nil {
					return gid, nil
				}
				return "", nil
			},
		},
		{
			Name: "file.uid_to_user", Doc: "The name of the user with id uid, or the uid when it has none.",
			Params: []function.Param{{Name: "uid", Kind: function.Int, Required: true}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) { return userName(int(in.Int("uid"))), nil },
		},
		{
			Name: "file.gid_to_group", Doc: "The name of the group with id gid (or named gid), or the gid when it has none.",
			Params: []function.Param{{Name: "gid", Kind: function.Any, Required: true}}, ReadOnly: true,
			Run: func(_ context.Context, in *function.Input) (any, error) {
				gid, ok := lookupGroup(in.Value("gid"))
				if !ok {
					return "", nil
				}
				return groupName(gid), nil
			},
		},
	}, editFuncs()...)
}

// withPath runs fn with the function's path argument made absolute.
func withPath(fn func(string, *function.Input) (any, error)) function.Handler {
	return func(_ context.Context, in *function.Input) (any, error) {
		p, err := absolute(in.Func, in.String("path"))
		if err != nil {
			return nil, err
		}
		return fn(p, in)
	}
}

// absolute expands a leading ~ or ~user (Python's expanduser) and
// requires the result to be absolute.
func absolute(fun, p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "~"); ok {
		name, tail, _ := strings.Cut(rest, "/")
		var home string
		if name == "" {
			home, _ = os.UserHomeDir()
		} else if u, err := user.Lookup(name); err == nil {
			home = u.HomeDir
		}
		if home != "" {
			p = filepath.Join(home, tail)
		}
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: File path must be absolute: %s", fun, p)
	}
	return p, nil
}

// lineArgs returns the lines to write: args=[…] (or args=one) when given,
// else the positional arguments, as Python's str().
func lineArgs(in *function.Input) []string {
	args := in.Extra
	if v, ok := in.ExtraKwargs["args"]; ok {
		if l, isList := v.([]any); isList {
			args = l
		} else {
			args = []any{v}
		}
	}
	return py.Strs(args)
}

func joinLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// appendLines appends lines to the existing file p, first ending its last
// line if it is not ended.
func appendLines(p string, lines []string) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	text := joinLines(lines)
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			text = "\n" + text
		}
	}
	if _, err := f.WriteString(text); err != nil {
		return err
	}
	return f.Close()
}

// mkdir creates p and its missing parents, top down, giving each one it
// creates user, group and mode (Salt's makedirs_perms).
func mkdir(p string, owner, group any, mode string) error {
	var missing []string
	for d := filepath.Clean(p); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s exists and is not a directory", d)
			}
			break
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	var perm os.FileMode
	if mode != "" {
		bits, ok := parseMode(mode)
		if !ok {
			return fmt.Errorf("invalid mode %q", mode)
		}
		perm = bits
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if owner != nil || group != nil {
			if err := chown("", d, orEmpty(owner), orEmpty(group), false); err != nil {
				return err
			}
		}
		if mode != "" {
			if err := os.Chmod(d, perm); err != nil {
				return err
			}
		}
	}
	return nil
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// parseMode reads an octal mode as Salt does ("0644", "644", "0o644"),
// as the os.FileMode chmod takes.
func parseMode(s string) (os.FileMode, bool) {
	digits := strings.TrimLeft(s, "0Oo")
	if digits == "" {
		digits = "0"
	}
	bits, err := strconv.ParseUint(digits, 8, 32)
	if err != nil || bits > 0o7777 {
		return 0, false
	}
	return unixMode(uint32(bits)), true
}

// unixMode converts permission bits as chmod(2) takes them (setuid 04000,
// setgid 02000, sticky 01000) to an os.FileMode.
func unixMode(bits uint32) os.FileMode {
	m := os.FileMode(bits & 0o777)
	if bits&syscall.S_ISUID != 0 {
		m |= os.ModeSetuid
	}
	if bits&syscall.S_ISGID != 0 {
		m |= os.ModeSetgid
	}
	if bits&syscall.S_ISVTX != 0 {
		m |= os.ModeSticky
	}
	return m
}

// touch creates p if absent and sets its times: atime and mtime in Unix
// seconds, 0 meaning now (as Salt, which treats a zero time as absent);
// both absent leaves the times a new file got, or sets them to now.
func touch(p string, atime, mtime int64) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	now := time.Now()
	at, mt := now, now
	if atime != 0 {
		at = time.Unix(atime, 0)
	}
	if mtime != 0 {
		mt = time.Unix(mtime, 0)
	}
	return os.Chtimes(p, at, mt)
}

// lookupUser resolves a user given by name or id (an integer, or digits
// that name no user).
func lookupUser(v any) (int, bool) {
	switch t := v.(type) {
	case int64:
		return int(t), true
	case string:
		if u, err := user.Lookup(t); err == nil {
			id, err := strconv.Atoi(u.Uid)
			return id, err == nil
		}
		if id, err := strconv.Atoi(t); err == nil && id >= 0 {
			return id, true
		}
	}
	return 0, false
}

// lookupGroup resolves a group given by name or id.
func lookupGroup(v any) (int, bool) {
	switch t := v.(type) {
	case int64:
		return int(t), true
	case string:
		if g, err := user.LookupGroup(t); err == nil {
			id, err := strconv.Atoi(g.Gid)
			return id, err == nil
		}
		if id, err := strconv.Atoi(t); err == nil && id >= 0 {
			return id, true
		}
	}
	return 0, false
}

// userName is the name of uid, or uid itself when it has none (Salt's
// uid_to_user).
func userName(uid int) any {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return uid
}

// groupName is the name of gid, or gid itself when it has none.
func groupName(gid int) any {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return gid
}

// Stats returns Salt's file.stats of p: the symlink itself when it is
// broken or follow is false. hashType adds "sum".
func Stats(p, hashType string, follow bool) (map[string]any, error) {
	var fi os.FileInfo
	var err error
	if follow {
		fi, err = os.Stat(p)
	}
	if !follow || err != nil {
		// A broken symlink has an owner too.
		fi, err = os.Lstat(p)
	}
	if err != nil {
		return nil, fmt.Errorf("path not found: %s", p)
	}
	out, err := statInfo(p, fi)
	if err != nil {
		return nil, err
	}
	out["type"] = fileType(fi.Mode())
	out["target"] = realpath(p)
	if hashType != "" {
		sum, err := Hash(p, hashType)
		if err != nil {
			return nil, err
		}
		out["sum"] = sum
	}
	return out, nil
}

// NormalizeMode writes permission bits as Salt does: octal, at least four
// digits ("0644", "4755").
func NormalizeMode(bits uint32) string {
	return fmt.Sprintf("%04o", bits)
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "link"
	case m&fs.ModeNamedPipe != 0:
		return "pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "char"
	case m&fs.ModeDevice != 0:
		return "block"
	}
	return "file"
}

// realpath resolves p as Python's os.path.realpath: symlinks followed as
// far as they exist, the rest kept.
func realpath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(p))
	if dir == "" || dir == p {
		return filepath.Clean(p)
	}
	parent := realpath(filepath.Clean(dir))
	full := filepath.Join(parent, base)
	for range 40 {
		target, err := os.Readlink(full)
		if err != nil {
			return full
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(full), target)
		}
		full = filepath.Clean(target)
	}
	return full
}

// hashes are the digests get_hash and stats know, by Salt's (hashlib's) names.
var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
	"sha384": sha512.New384, "sha512": sha512.New,
	"sha3_224": func() hash.Hash { return sha3.New224() }, "sha3_256": func() hash.Hash { return sha3.New256() },
	"sha3_384": func() hash.Hash { return sha3.New384() }, "sha3_512": func() hash.Hash { return sha3.New512() },
}

// Hash returns the hex digest of the file at p with the digest named form.
func Hash(p, form string) (string, error) {
	mk, ok := hashes[form]
	if !ok {
		return "", fmt.Errorf("invalid hash type: %s", form)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := mk()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
