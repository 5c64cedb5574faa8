package archive

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinehq/brine/internal/sysuser"

	cmdmod "github.com/brinehq/brine/modules/cmd"
)

var syscallENOTDIR = syscall.ENOTDIR

// contents is Salt's archive.list(verbose=True): the archive's
// directories (ending in /), files and symlinks, sorted, and those at its
// top level.
type contents struct {
	dirs, files, links          []string
	topDirs, topFiles, topLinks []string
}

// tarReader opens a tar archive, compressed with gzip, bzip2 or xz (xz
// through the xz command, as Go has no xz reader) or not at all.
func tarReader(ctx context.Context, p string) (*tar.Reader, func(), error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReader(f)
	magic, _ := br.Peek(6)
	closeAll := func() { f.Close() }
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		r = gz
	case bytes.HasPrefix(magic, []byte("BZh")):
		r = bzip2.NewReader(br)
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		f.Close()
		if _, err := exec.LookPath("xz"); err != nil {
			return nil, nil, comment("Failed to read from tar archive. If it is XZ-compressed, install xz-utils to attempt extraction.")
		}
		cmd := exec.CommandContext(ctx, "xz", "--decompress", "--stdout", p)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		r = out
		closeAll = func() {
			_, _ = io.Copy(io.Discard, out)
			_ = cmd.Wait()
		}
	}
	return tar.NewReader(r), closeAll, nil
}

// pyTarName is the name Python's tarfile gives a member: a directory's
// without its trailing slashes.
func pyTarName(h *tar.Header) string {
	if h.Typeflag == tar.TypeDir {
		return strings.TrimRight(h.Name, "/")
	}
	return h.Name
}

// list reads an archive's contents as Salt's archive.list does.
func list(ctx context.Context, p, format string, strip int) (*contents, error) {
	c := &contents{}
	switch format {
	case "tar":
		tr, done, err := tarReader(ctx, p)
		if err != nil {
			return nil, listError(p, err)
		}
		defer done()
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, listError(p, err)
			}
			name := pyTarName(h)
			switch h.Typeflag {
			case tar.TypeSymlink:
				c.links = append(c.links, name)
			case tar.TypeDir:
				c.dirs = append(c.dirs, name+"/")
			default:
				c.files = append(c.files, name)
			}
		}
	case "zip":
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, fmt.Errorf("%s is not a ZIP file", p)
		}
		defer zr.Close()
		dirs := map[string]bool{}
		for _, f := range zr.File {
			switch m := f.Mode(); {
			case m&fs.ModeSymlink != 0:
				c.links = append(c.links, f.Name)
			case m.IsDir():
				dirs[f.Name] = true
			default:
				c.files = append(c.files, f.Name)
			}
		}
		// Salt adds the directory of every file, listed or not.
		var files []string
		for _, f := range c.files {
			if i := strings.LastIndex(f, "/"); i >= 0 {
				dirs[f[:i+1]] = true
			}
		}
		for _, f := range c.files {
			if !dirs[f] {
				files = append(files, f)
			}
		}
		c.files = files
		for d := range dirs {
			c.dirs = append(c.dirs, d)
		}
	}
	if strip > 0 {
		for _, l := range []*[]string{&c.dirs, &c.files, &c.links} {
			var out []string
			for _, x := range *l {
				if parts := strings.SplitN(x, "/", strip+1); len(parts) > strip && parts[strip] != "" {
					out = append(out, parts[strip])
				}
			}
			*l = out
		}
	}
	sort.Strings(c.dirs)
	sort.Strings(c.files)
	sort.Strings(c.links)
	for _, d := range c.dirs {
		if strings.Count(d, "/") == 1 {
			c.topDirs = append(c.topDirs, d)
		}
	}
	if prefix := commonPrefix(c.dirs); strings.Contains(prefix, "/") {
		prefix = prefix[:strings.Index(prefix, "/")+1]
		if !contains(c.topDirs, prefix) {
			c.topDirs = append(c.topDirs, prefix)
		}
	}
	for _, f := range c.files {
		if !strings.Contains(f, "/") {
			c.topFiles = append(c.topFiles, f)
		}
	}
	for _, l := range c.links {
		if !strings.Contains(l, "/") {
			c.topLinks = append(c.topLinks, l)
		}
	}
	return c, nil
}

func listError(p string, err error) error {
	return commentf("Unable to list contents of %s (%v). If this is an XZ-compressed tar archive, install XZ Utils "+
		"to enable listing its contents. If it is compressed using something other than XZ, it may be necessary to "+
		"specify CLI options to decompress the archive. See the documentation for details.", p, err)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// commonPrefix is Python's os.path.commonprefix: character-wise.
func commonPrefix(l []string) string {
	if len(l) == 0 {
		return ""
	}
	p := l[0]
	for _, s := range l[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// inside returns the path member names under dest, or an error when it
// would leave dest (an absolute path, or .. past the top).
func inside(dest, member string) (string, error) {
	clean := path.Clean("/" + member)
	if path.IsAbs(member) || strings.HasPrefix(path.Clean(member), "../") || path.Clean(member) == ".." {
		return "", commentf("Refusing to extract the archive: its entry %s would be written outside %s", member, dest)
	}
	return filepath.Join(dest, filepath.FromSlash(clean)), nil
}

// stillInside checks, before an entry is written, that the directory it
// goes in resolves (symlinks already on disk followed) under dest: a
// directory of the target replaced by a link to /etc must not take the
// archive's files there.
func stillInside(dest, target, member string) error {
	root, err := filepath.EvalSymlinks(dest)
	if err != nil {
		return err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return err
	}
	if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
		return commentf("Refusing to extract the archive: its entry %s would be written to %s, outside %s (through a symlink)",
			member, dir, dest)
	}
	return nil
}

// linkInside checks that a link named member pointing to target stays
// under dest: an absolute target, or one climbing out, is refused (a
// hard link's target is relative to the archive's top).
func linkInside(dest, member, target string, hard bool) error {
	base := path.Dir(path.Clean(member))
	if hard {
		base = "."
	}
	j := path.Clean(path.Join(base, target))
	if path.IsAbs(target) || j == ".." || strings.HasPrefix(j, "../") {
		return commentf("Refusing to extract the archive: its link %s -> %s would point outside %s", member, target, dest)
	}
	return nil
}

// extract unpacks the archive into dest and returns what Salt lists as
// extracted_files: tar's member names (the first trim of them), or
// zip's names (with Salt's "List trimmed after N files." note).
func extract(ctx context.Context, p, dest, format, options string, trim int, perms bool) ([]any, error) {
	switch {
	case format == "zip":
		return extractZip(p, dest, trim, perms)
	case options != "":
		return tarCommand(ctx, p, dest, options, trim)
	}
	// Check every entry before writing any.
	tr, done, err := tarReader(ctx, p)
	if err != nil {
		return nil, tarReadError(err)
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			done()
			return nil, tarReadError(err)
		}
		if _, err := inside(dest, h.Name); err != nil {
			done()
			return nil, err
		}
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
			if err := linkInside(dest, h.Name, h.Linkname, h.Typeflag == tar.TypeLink); err != nil {
				done()
				return nil, err
			}
		}
	}
	done()
	tr, done, err = tarReader(ctx, p)
	if err != nil {
		return nil, tarReadError(err)
	}
	defer done()
	root := os.Geteuid() == 0
	var names []any
	type dirMeta struct {
		path  string
		mode  fs.FileMode
		mtime time.Time
	}
	var dirs []dirMeta
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, tarReadError(err)
		}
		names = append(names, pyTarName(h))
		target, _ := inside(dest, h.Name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := stillInside(dest, target, h.Name); err != nil {
			return nil, err
		}
		mode := fs.FileMode(h.Mode).Perm()
		if h.Mode&0o4000 != 0 {
			mode |= fs.ModeSetuid
		}
		if h.Mode&0o2000 != 0 {
			mode |= fs.ModeSetgid
		}
		if h.Mode&0o1000 != 0 {
			mode |= fs.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return nil, err
			}
			dirs = append(dirs, dirMeta{target, mode, h.ModTime})
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return nil, err
			}
		case tar.TypeLink:
			_ = os.Remove(target)
			src, _ := inside(dest, h.Linkname)
			if err := os.Link(src, target); err != nil {
				return nil, err
			}
		case tar.TypeReg, '\x00': // '\x00' is the old TypeRegA
			_ = os.Remove(target)
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return nil, err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return nil, err
			}
			if err := f.Close(); err != nil {
				return nil, err
			}
		default:
			// Devices and FIFOs: Python's tarfile makes them as root;
			// brine does not, and says so rather than skip them.
			return nil, commentf("Refusing to extract the archive: its entry %s is a device or FIFO", h.Name)
		}
		if root {
			uid, gid := h.Uid, h.Gid
			if u, err := user.Lookup(h.Uname); h.Uname != "" && err == nil {
				uid, _ = strconv.Atoi(u.Uid)
			}
			if g, err := user.LookupGroup(h.Gname); h.Gname != "" && err == nil {
				gid, _ = strconv.Atoi(g.Gid)
			}
			_ = os.Lchown(target, uid, gid)
		}
		if h.Typeflag != tar.TypeSymlink && h.Typeflag != tar.TypeDir {
			if err := os.Chmod(target, mode); err != nil {
				return nil, err
			}
			_ = os.Chtimes(target, h.ModTime, h.ModTime)
		}
	}
	// Directories last, deepest first, as tarfile.extractall: their
	// modes may forbid writing into them.
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		_ = os.Chmod(d.path, d.mode)
		_ = os.Chtimes(d.path, d.mtime, d.mtime)
	}
	if trim > 0 && len(names) > trim {
		names = names[:trim]
	}
	return names, nil
}

func tarReadError(err error) error {
	return commentf("Failed to read from tar archive using Python's native tar file support (%v). If archive is "+
		"compressed using something other than gzip or bzip2, the 'options' argument may be required to pass the "+
		"correct options to the tar command in order to extract the archive.", err)
}

// extractZip is Salt's archive.unzip: each entry extracted (a symlink
// made from its contents), with its mode when extract_perms.
func extractZip(p, dest string, trim int, perms bool) ([]any, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, commentf("Exception encountered unpacking zipfile: %v", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if _, err := inside(dest, f.Name); err != nil {
			return nil, err
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			target, err := readZip(f)
			if err != nil {
				return nil, commentf("Exception encountered unpacking zipfile: %v", err)
			}
			if err := linkInside(dest, f.Name, string(target), false); err != nil {
				return nil, err
			}
		}
	}
	mask := umask()
	var names []any
	for _, f := range zr.File {
		names = append(names, f.Name)
		target, _ := inside(dest, f.Name)
		fail := func(err error) ([]any, error) {
			return nil, commentf("Exception encountered unpacking zipfile: %v", err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o777&^mask); err != nil {
			return fail(err)
		}
		if err := stillInside(dest, target, f.Name); err != nil {
			return nil, err
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			link, err := readZip(f)
			if err != nil {
				return fail(err)
			}
			if err := os.Symlink(string(link), target); err != nil {
				return fail(err)
			}
			continue
		}
		isDir := strings.HasSuffix(f.Name, "/")
		if isDir {
			if err := os.MkdirAll(target, 0o777&^mask); err != nil {
				return fail(err)
			}
		} else {
			data, err := readZip(f)
			if err != nil {
				return fail(err)
			}
			if err := os.WriteFile(target, data, 0o666&^mask); err != nil {
				return fail(err)
			}
		}
		if perms {
			perm := fs.FileMode(f.ExternalAttrs>>16) & (fs.ModePerm | 0o7000)
			mode := perm.Perm()
			if perm&0o4000 != 0 {
				mode |= fs.ModeSetuid
			}
			if perm&0o2000 != 0 {
				mode |= fs.ModeSetgid
			}
			if perm&0o1000 != 0 {
				mode |= fs.ModeSticky
			}
			if f.ExternalAttrs>>16 == 0 {
				mode = 0o666 &^ mask
				if isDir {
					mode = 0o777 &^ mask
				}
			}
			if err := os.Chmod(target, mode); err != nil {
				return fail(err)
			}
		}
	}
	count := 100
	if trim > 0 {
		count = trim
	}
	if trim > 0 && len(names) > count {
		names = append(names[:count], fmt.Sprintf("List trimmed after %d files.", count))
	}
	return names, nil
}

func readZip(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// umask is the process's file mode creation mask.
func umask() fs.FileMode {
	return sysuser.Umask()
}

// tarCommand is Salt's extraction with options: tar xv<options> -f
// archive, run in dest; the files are tar's verbose output.
func tarCommand(ctx context.Context, p, dest, options string, trim int) ([]any, error) {
	if _, err := exec.LookPath("tar"); err != nil {
		return nil, errors.New("tar command not available, it might not be installed on minion")
	}
	words, err := cmdmod.Split(options)
	if err != nil {
		return nil, fmt.Errorf("options: %v", err)
	}
	short := "xv"
	var long []string
	pos := 0
	for _, w := range words {
		if w == "v" || w == "-v" || w == "--verbose" {
			continue
		}
		switch {
		case strings.HasPrefix(w, "-"):
			long = append(long, w)
		case pos > 0:
			long = append(long, w)
		default:
			short += strings.NewReplacer("x", "", "f", "").Replace(w)
		}
		pos++
	}
	args := append(append([]string{short}, long...), "-f", p)
	cmd := exec.CommandContext(ctx, "tar", args...)
	cmd.Dir = dest
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("tar %s failed: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var files []any
	for _, l := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		if l != "" {
			files = append(files, l)
		}
	}
	if trim > 0 && len(files) > trim {
		files = files[:trim]
	}
	if len(files) == 0 {
		files = []any{"no tar output so far"}
	}
	return files, nil
}

// chownTree gives root and everything under it (symlinks themselves) the
// owner uid and group gid (-1: unchanged), as Salt's file.directory with
// recurse [user, group]; it reports whether anything was (or, in test
// mode, would be) changed.
func chownTree(root string, uid, gid int, test bool) (bool, error) {
	changed := false
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fuid, fgid, ok := sysuser.Owner(fi)
		if !ok {
			return nil
		}
		if (uid == -1 || fuid == uid) && (gid == -1 || fgid == gid) {
			return nil
		}
		changed = true
		if test {
			return nil
		}
		return os.Lchown(p, uid, gid)
	})
	return changed, err
}
