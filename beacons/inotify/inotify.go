//go:build linux

// Package inotify is Salt's inotify beacon: it watches files and
// directories and fires salt/beacon/<id>/inotify/<watched path> with
// {"change": "IN_MODIFY", "path": "/etc/x", "id": …} for each change, as
// salt/beacons/inotify.py does through pyinotify.
//
// Configuration, Salt's:
//
//	files:
//	  /etc/ssh/sshd_config: {}                # create, delete, modify
//	  /srv/app:
//	    mask: [create, delete, modify, moved_to]
//	    recurse: true                         # the subdirectories too
//	    auto_add: true                        # and those created later
//	    exclude:
//	      - /srv/app/cache                    # a prefix
//	      - /srv/app/*.swp                    # a glob (fnmatch: * matches /)
//	      - '\.tmp$': {regex: true}           # a regular expression, searched
//
// mask takes Salt's names (access, attrib, close_nowrite, close_write,
// create, delete, delete_self, excl_unlink, ignored, modify, moved_from,
// moved_to, move_self, oneshot, onlydir, open, unmount); the default is
// create, delete and modify. The event's tag is the watch's path (the
// directory an entry changed in, or the watched file itself), its path the
// entry's full path, its change pyinotify's mask name: IN_CREATE, or
// IN_CREATE|IN_ISDIR for a directory. Exclude regular expressions are
// Go's (RE2), not Python's re: no backreferences or lookarounds.
//
// The beacon talks to Linux inotify through golang.org/x/sys/unix rather
// than a watcher library such as fsnotify: it needs no new dependency,
// each of Salt's mask names is one IN_* bit passed through unchanged
// (fsnotify folds them into five operations and hides the rest), and
// recursion, auto_add and following a replaced file are this beacon's to
// decide, which a library that adds one watch per call leaves to the
// caller anyway. The kernel's events are read as they come and queued:
// Ready fires at once, so a change reaches the runner in milliseconds
// rather than at the next interval.
//
// Where brine differs from Salt, and why:
//   - A watched file replaced by rename (how editors and Salt's own
//     file.managed save) or deleted and created again is watched again at
//     once, and the replacement is reported: IN_MOVED_TO or IN_CREATE when
//     the mask names it, otherwise IN_MODIFY when the mask has modify (the
//     content at the path changed). Salt's watch stays on the replaced
//     file, which is gone, until its next run adds one again, and reports
//     nothing: a save of sshd_config by vim fires no event with the
//     default mask.
//   - The same change (tag, change, path) is queued once between two
//     checks, and the queue holds at most 1024 changes: a file written
//     10,000 times between checks is one IN_MODIFY, and a flood of
//     distinct changes beyond the queue (or beyond the kernel's own queue)
//     is reported as one IN_Q_OVERFLOW per configured path ("something
//     changed here, which is lost"), never unbounded memory. Salt queues
//     every event, unless its coalesce option drops duplicates within one
//     read; brine's coalesce option is the runner's.
//   - ignored and unmount, which the kernel sends whatever the mask, are
//     reported only when the mask names them (pyinotify reports them
//     always).
//   - {pattern: {regex: false}} in exclude is a plain exclude (a prefix or
//     a glob); Salt ignores it. Paths must be absolute, a path's options
//     may be empty ({} or nothing, as Salt's documentation shows but its
//     validate refuses), unknown options are refused.
//   - When a new directory is added by auto_add, the entries already in
//     it are reported as IN_CREATE, as pyinotify does; brine also watches
//     its subdirectories (mkdir -p).
package inotify

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/brinehq/brine/beacons"
)

// Module is the inotify beacon.
var Module = beacons.Module{
	Name: "inotify",
	Doc:  "Fire an event when watched files or directories change (Linux inotify).",
	New:  New,
}

// maxQueue bounds the changes held between two checks.
const maxQueue = 1024

// watch is one inotify watch: a file or directory of a configured path,
// or a configured path's parent directory, or both.
type watch struct {
	path     string
	dev, ino uint64
	// root is the configured path whose events this watch reports (the
	// nearest, when several cover it); nil for a parent directory watched
	// only to see a configured path appear.
	root *root
	// children are the configured paths in this directory, by name, whose
	// creation or replacement this watch follows.
	children map[string]*root
}

type key struct{ tag, change, path string }

// Beacon is a running inotify beacon.
type Beacon struct {
	fd    int
	file  *os.File // fd, read through Go's poller
	ready chan struct{}
	done  chan struct{}

	mu       sync.Mutex
	closed   bool
	roots    []*root
	watches  map[int]*watch
	queue    []beacons.Event
	queued   map[key]bool
	overflow bool
	err      error // the reader's, reported by the next Check
}

// New checks cfg and starts watching.
func New(cfg beacons.Config) (beacons.Beacon, error) {
	roots, err := parse(cfg)
	if err != nil {
		return nil, err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	b := &Beacon{
		fd: fd, file: os.NewFile(uintptr(fd), "inotify"),
		ready: make(chan struct{}, 1), done: make(chan struct{}),
		roots: roots, watches: map[int]*watch{}, queued: map[key]bool{},
	}
	b.mu.Lock()
	for _, r := range roots {
		if _, err := b.addRoot(r); err != nil {
			b.mu.Unlock()
			_ = b.file.Close()
			return nil, fmt.Errorf("files: %s: %w", r.path, err)
		}
	}
	b.mu.Unlock()
	go b.read()
	return b, nil
}

// Ready fires when changes are queued.
func (b *Beacon) Ready() <-chan struct{} { return b.ready }

// Check returns the changes queued since the last call, and watches the
// configured paths that exist again (or at last), as Salt does at each
// run.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("inotify beacon closed")
	}
	var errs []error
	for _, r := range b.roots {
		if r.wd < 0 || r.parentWd < 0 {
			if _, err := b.addRoot(r); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.path, err))
			}
		}
	}
	if b.err != nil {
		errs = append(errs, b.err)
		b.err = nil
	}
	out := b.queue
	if b.overflow {
		for _, r := range b.roots {
			out = append(out, event(r.path, "IN_Q_OVERFLOW", r.path))
		}
	}
	b.queue, b.queued, b.overflow = nil, map[key]bool{}, false
	return out, errors.Join(errs...)
}

// Close removes the watches.
func (b *Beacon) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	err := b.file.Close()
	<-b.done
	return err
}

func event(tag, change, path string) beacons.Event {
	return beacons.Event{Tag: tag, Data: map[string]any{"change": change, "path": path}}
}

func (b *Beacon) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// enqueue queues a change once until the next Check.
func (b *Beacon) enqueue(tag, change, path string) {
	k := key{tag, change, path}
	if b.queued[k] {
		return
	}
	if len(b.queue) >= maxQueue {
		b.overflow = true
		b.signal()
		return
	}
	b.queued[k] = true
	b.queue = append(b.queue, event(tag, change, path))
	b.signal()
}

// report queues event bit of r's at path when r's mask names it.
func (b *Beacon) report(r *root, tag, path string, bit uint32, isDir bool) {
	if bit&r.report != 0 {
		b.enqueue(tag, changeName(bit&r.report, isDir), path)
	}
}

// add watches path for bits (added to what the file is watched for
// already: the same file may be a configured path, in a recursed tree
// and a configured path's parent).
func (b *Beacon) add(path string, bits uint32, follow bool) (int, *watch, error) {
	var st unix.Stat_t
	stat := unix.Lstat
	if follow {
		stat = unix.Stat
	} else {
		bits |= unix.IN_DONT_FOLLOW
	}
	if err := stat(path, &st); err != nil {
		return -1, nil, err
	}
	wd, err := unix.InotifyAddWatch(b.fd, path, bits|unix.IN_MASK_ADD)
	if err != nil {
		return -1, nil, err
	}
	w := b.watches[wd]
	if w == nil {
		w = &watch{children: map[string]*root{}}
		b.watches[wd] = w
	}
	w.path, w.dev, w.ino = path, st.Dev, st.Ino
	return wd, w, nil
}

// own makes r the root reported by w unless a nearer one is.
func own(w *watch, r *root) {
	if w.root == nil || len(r.path) > len(w.root.path) {
		w.root = r
	}
}

// missing is an error of a path that is not there (yet): the path is
// watched when it appears.
func missing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

// addRoot watches r's parent directory (to see r appear or be replaced)
// and r, the tree under it when r recurses. It reports whether r is now
// watched on another file than before.
func (b *Beacon) addRoot(r *root) (bool, error) {
	if r.parentWd < 0 && r.path != "/" {
		wd, w, err := b.add(filepath.Dir(r.path), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR, true)
		switch {
		case err == nil:
			w.children[filepath.Base(r.path)] = r
			r.parentWd = wd
		case !missing(err):
			return false, fmt.Errorf("watch its directory: %w", err)
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(r.path, &st); err != nil {
		if missing(err) {
			return false, nil
		}
		return false, err
	}
	if r.wd >= 0 && st.Dev == r.dev && st.Ino == r.ino {
		return false, nil
	}
	wd, w, err := b.add(r.path, r.kernelMask(), true)
	if err != nil {
		if missing(err) {
			return false, nil
		}
		return false, err
	}
	own(w, r)
	r.wd, r.dev, r.ino = wd, w.dev, w.ino
	r.isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
	if r.recurse && r.isDir {
		b.addTree(r, r.path, false)
	}
	return true, nil
}

// addTree watches the directories under dir for r, except the excluded;
// created reports the entries found as created (a directory auto_add
// follows, whose entries may have been made before its watch).
func (b *Beacon) addTree(r *root, dir string, created bool) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile: its deletion is an event of its own
		}
		if p != dir && r.excluded(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if created && p != dir {
			b.report(r, filepath.Dir(p), p, unix.IN_CREATE, d.IsDir())
		}
		if !d.IsDir() || (p == r.path && !created) {
			return nil // r itself is watched by addRoot
		}
		if _, w, err := b.add(p, r.kernelMask(), false); err == nil {
			own(w, r)
		}
		return nil
	})
}

// read reads the kernel's events until Close.
func (b *Beacon) read() {
	defer close(b.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := b.file.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				b.mu.Lock()
				b.err = fmt.Errorf("read inotify events: %w", err)
				b.mu.Unlock()
				b.signal()
			}
			return
		}
		b.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b.handle(int(ev.Wd), ev.Mask, string(name))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		b.mu.Unlock()
	}
}

// handle takes one kernel event.
func (b *Beacon) handle(wd int, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		b.overflow = true
		b.signal()
		return
	}
	w := b.watches[wd]
	if w == nil {
		return // removed meanwhile
	}
	isDir := mask&unix.IN_ISDIR != 0
	if mask&unix.IN_IGNORED != 0 {
		b.removed(wd, w)
		return
	}
	if name == "" {
		if w.root != nil {
			b.report(w.root, w.path, w.path, mask, isDir)
		}
		if mask&unix.IN_MOVE_SELF != 0 {
			// The watch follows the file wherever it went: drop it unless
			// it is still at its path (the kernel then sends IN_IGNORED).
			var st unix.Stat_t
			if err := unix.Lstat(w.path, &st); err != nil || st.Dev != w.dev || st.Ino != w.ino {
				_, _ = unix.InotifyRmWatch(b.fd, uint32(wd))
			}
		}
		return
	}
	full := filepath.Join(w.path, name)
	if r := w.children[name]; r != nil && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		// The name is there again (inode numbers are reused: the kernel's
		// event, not the file's identity, says it is new).
		if _, err := b.addRoot(r); err == nil {
			b.replaced(r, mask, isDir)
		}
	}
	r := w.root
	if r == nil || r.excluded(full) {
		return
	}
	b.report(r, w.path, full, mask, isDir)
	if isDir && r.autoAdd && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		b.addTree(r, full, true)
	}
}

// replaced reports a configured path created or replaced (bit is the
// directory's IN_CREATE or IN_MOVED_TO): as that event when the mask names
// it, else as IN_MODIFY of a file when it names modify.
func (b *Beacon) replaced(r *root, bit uint32, isDir bool) {
	bit &= unix.IN_CREATE | unix.IN_MOVED_TO
	switch {
	case bit&r.report != 0:
		b.report(r, r.path, r.path, bit, isDir)
	case !isDir:
		b.report(r, r.path, r.path, unix.IN_MODIFY, false)
	}
}

// removed forgets a watch the kernel removed (its file deleted, its file
// system unmounted, oneshot, or ours removed) and, for a configured path
// still there on another file, watches it again.
func (b *Beacon) removed(wd int, w *watch) {
	delete(b.watches, wd)
	for _, r := range b.roots {
		if r.parentWd == wd {
			r.parentWd = -1 // watched again by the next Check, if it is back
		}
	}
	r := w.root
	if r == nil {
		return
	}
	b.report(r, w.path, w.path, unix.IN_IGNORED, false)
	if r.wd != wd {
		return
	}
	r.wd = -1
	if r.flags&unix.IN_ONESHOT != 0 {
		return // one event per check, as Salt re-adds at each run
	}
	// Without a watch on its directory to say so, a file at the path
	// again is the replacement.
	if again, _ := b.addRoot(r); again && r.parentWd < 0 && (r.dev != w.dev || r.ino != w.ino) {
		b.replaced(r, unix.IN_CREATE, r.isDir)
	}
}
