// Package log is Salt's log beacon (salt/beacons/log_beacon.py): it
// follows a file and fires salt/beacon/<id>/log/<tag> with
// {"match": "yes", "raw": <the line>, "error": "", "id": …} for each new
// line a tag's regular expression matches.
//
// Configuration, Salt's:
//
//	file: /var/log/auth.log
//	tags:
//	  ssh/failed:                  # the event's sub-tag
//	    regex: '.*Failed password.*'
//
// As Salt's, a regular expression must match at the start of the line
// (Python's re.match): "error" matches "error: disk full" but not "disk
// error", ".*error" both. The expressions are Go's (RE2), not Python's
// re: no backreferences or lookarounds. A line matched by several tags
// fires one event for each, in the tags' alphabetical order.
//
// The file is followed as tail -F follows it: from its end when the
// beacon starts (lines already there are not reported), from its start
// when it appears later or is replaced (log rotation: the rest of the
// rotated file is read first), and from its start again when it is
// truncated (copytruncate; a truncated file that grows back past the
// position read before the next check is not told from an append: tail
// has the same limit). A line is reported once its newline is written.
//
// The beacon watches the file's directory with inotify and says it is
// Ready when the file is written, created or moved, so a line reaches the
// runner in milliseconds; without inotify it is read every interval.
//
// Where brine differs from Salt, and why: an unknown option, a missing
// tag, a tag without a regular expression or a bad one, a file whose
// directory does not exist is an error when the beacon starts, not an
// event {"error": "bad regex"} at each run or an exception (a missing
// file is waited for, as tail -F does: a service may create its log after
// the agent starts); Salt reads from its last position without noticing
// rotation or truncation, and splits a line still being written in two;
// a check reads at most 1 MiB (the rest at once after, Ready firing
// again), so a flood of lines never holds all of a big file in memory.
package log

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"syscall"

	"github.com/brinehq/brine/beacons"
)

// Module is the log beacon.
var Module = beacons.Module{
	Name: "log",
	Doc:  "Fire an event for each new line of a file that a tag's regular expression matches (tail -F).",
	New:  New,
}

const (
	// maxRead bounds what one check reads.
	maxRead = 1 << 20
	// maxLine bounds a line without its newline yet: beyond, what is
	// there is taken as a line.
	maxLine = 64 << 10
)

type tag struct {
	name string
	re   *regexp.Regexp
}

// Beacon is a running log beacon.
type Beacon struct {
	path string
	tags []tag

	mu      sync.Mutex
	closed  bool
	f       *os.File // the file followed; nil until it exists
	off     int64    // in f, read up to
	partial []byte   // the end of f without its newline yet

	ready  chan struct{}
	notify *os.File // an inotify descriptor on the directory; nil without
	done   chan struct{}
}

// New checks cfg and starts following the file from its end.
func New(cfg beacons.Config) (beacons.Beacon, error) {
	b := &Beacon{ready: make(chan struct{}, 1), done: make(chan struct{})}
	if err := b.parse(cfg); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Dir(b.path)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("file: %s: no directory %s: %w", b.path, filepath.Dir(b.path), errOr(err, syscall.ENOTDIR))
	}
	f, err := os.Open(b.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Followed from its start when it appears, as tail -F.
	case err != nil:
		return nil, fmt.Errorf("file: %w", err)
	default:
		end, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("file: %w", err)
		}
		b.f, b.off = f, end
	}
	b.watch()
	return b, nil
}

func errOr(err, or error) error {
	if err != nil {
		return err
	}
	return or
}

func (b *Beacon) parse(cfg beacons.Config) error {
	for k := range cfg {
		if k != "file" && k != "tags" {
			return fmt.Errorf("%s: unknown option (want file and tags)", k)
		}
	}
	file, ok := cfg["file"].(string)
	switch {
	case cfg["file"] == nil:
		return errors.New("file: missing: the log beacon needs the file to follow")
	case !ok:
		return fmt.Errorf("file: want a path, got %v", cfg["file"])
	case !filepath.IsAbs(file):
		return fmt.Errorf("file: %s: want an absolute path", file)
	}
	b.path = filepath.Clean(file)
	tags, ok := cfg["tags"].(map[string]any)
	switch {
	case cfg["tags"] == nil:
		return errors.New("tags: missing: the log beacon needs tags with their regex")
	case !ok:
		return fmt.Errorf("tags: want a mapping of tags to {regex: …}, got %v", cfg["tags"])
	case len(tags) == 0:
		return errors.New("tags: empty: the log beacon needs tags with their regex")
	}
	for name, v := range tags {
		if name == "" {
			return errors.New("tags: an empty tag")
		}
		opts, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("tags: %s: want {regex: …}, got %v", name, v)
		}
		for k := range opts {
			if k != "regex" {
				return fmt.Errorf("tags: %s: %s: unknown option (want regex)", name, k)
			}
		}
		pat, ok := opts["regex"].(string)
		if !ok || pat == "" {
			return fmt.Errorf("tags: %s: regex: want a regular expression, got %v", name, opts["regex"])
		}
		// Anchored at the start, as Python's re.match.
		re, err := regexp.Compile(`^(?:` + pat + `)`)
		if err != nil {
			return fmt.Errorf("tags: %s: regex: %w", name, err)
		}
		b.tags = append(b.tags, tag{name, re})
	}
	sort.Slice(b.tags, func(i, j int) bool { return b.tags[i].name < b.tags[j].name })
	return nil
}

// Ready fires when the file may have new lines.
func (b *Beacon) Ready() <-chan struct{} { return b.ready }

func (b *Beacon) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// Check reads the lines added since the last call and returns the
// matches.
func (b *Beacon) Check(context.Context) ([]beacons.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("log beacon closed")
	}
	var lines []string
	budget := int64(maxRead)
	cur, err := os.Stat(b.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", b.path, err)
	}
	if b.f != nil {
		old, err := b.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.path, err)
		}
		if cur != nil && !os.SameFile(old, cur) {
			// Rotated: the rest of the old file, then the new one.
			if lines, err = b.read(old.Size(), &budget, lines); err != nil {
				return nil, err
			}
			if budget == 0 {
				b.signal()
				return b.match(lines), nil
			}
			if len(b.partial) > 0 {
				lines = append(lines, string(b.partial))
			}
			_ = b.f.Close()
			b.f, b.off, b.partial = nil, 0, nil
		} else if old.Size() < b.off {
			// Truncated.
			b.off, b.partial = 0, nil
		}
	}
	if b.f == nil && cur != nil {
		if b.f, err = os.Open(b.path); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return b.match(lines), nil // gone again meanwhile
			}
			return b.match(lines), fmt.Errorf("%s: %w", b.path, err)
		}
		b.off = 0
	}
	if b.f != nil {
		st, err := b.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.path, err)
		}
		if lines, err = b.read(st.Size(), &budget, lines); err != nil {
			return nil, err
		}
		if budget == 0 {
			b.signal()
		}
	}
	return b.match(lines), nil
}

// read reads b.f from b.off to size (within budget) and appends its
// complete lines to lines.
func (b *Beacon) read(size int64, budget *int64, lines []string) ([]string, error) {
	n := min(size-b.off, *budget)
	if n <= 0 {
		return lines, nil
	}
	buf := make([]byte, n)
	got, err := b.f.ReadAt(buf, b.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return lines, fmt.Errorf("%s: %w", b.path, err)
	}
	buf = buf[:got]
	b.off += int64(got)
	*budget -= int64(got)
	data := append(b.partial, buf...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, strings.TrimSuffix(string(data[:i]), "\r"))
		data = data[i+1:]
	}
	if len(data) > maxLine {
		lines = append(lines, string(data))
		data = nil
	}
	b.partial = append([]byte(nil), data...)
	return lines, nil
}

// match is Salt's: an event for each line and tag that matches.
func (b *Beacon) match(lines []string) []beacons.Event {
	var out []beacons.Event
	for _, l := range lines {
		for _, t := range b.tags {
			if t.re.MatchString(l) {
				out = append(out, beacons.Event{Tag: t.name, Data: map[string]any{
					"match": "yes", "raw": strings.ToValidUTF8(l, "\uFFFD"), "error": "",
				}})
			}
		}
	}
	return out
}

// Close stops following the file.
func (b *Beacon) Close() error {
	if b.notify != nil {
		_ = b.notify.Close()
		<-b.done
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.f != nil {
		err := b.f.Close()
		b.f = nil
		return err
	}
	return nil
}
