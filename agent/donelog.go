package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brinehq/brine/internal/atomicfile"
)

// doneLogFile is the journal of finished jids in the cache directory.
const doneLogFile = "done.log"

// compactAfter is the fewest lines appended to the journal before it is
// rewritten without the jids older than keepDone.
const compactAfter = 1024

// doneLog is the set of jids the agent finished in the last keepDone: a
// map in memory and a journal on disk, a line "<jid> <unix seconds>"
// appended per job. A file per jid (done/<jid>, as before) cost the busy
// agent an inode per job and was only pruned when the agent started, so
// an agent that ran for months kept every jid it ever ran; the journal is
// rewritten without the old jids once as many lines were appended as it
// held after its last rewrite (and at least compactAfter), and at every
// start: it holds at most twice the jids of the last keepDone, plus
// compactAfter.
//
// Lines are appended without a sync, as the marker files were made: the
// return, queued and synced before the jid is added, is what survives a
// crash, and a jid whose line was lost is recognised at the next start by
// its proc/<jid> and its queued return. A line torn by a crash is
// skipped when the journal is read.
type doneLog struct {
	path   string
	legacy string // the done/ directory of earlier versions

	mu       sync.Mutex
	at       map[string]int64
	f        *os.File // the append handle, opened by the first add
	appended int      // lines appended since the journal was rewritten
	kept     int      // lines the rewrite wrote
}

// loadDoneLog reads the journal in cacheDir, and the marker files an
// earlier version left in done/. It writes nothing: `brine call` makes an
// agent beside the running daemon, and only the daemon rewrites.
func loadDoneLog(cacheDir string) (*doneLog, error) {
	d := &doneLog{path: filepath.Join(cacheDir, doneLogFile), legacy: filepath.Join(cacheDir, "done"), at: map[string]int64{}}
	f, err := os.Open(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("jobs: %w", err)
	default:
		defer f.Close()
		if err := d.read(f); err != nil {
			return nil, fmt.Errorf("jobs: %s: %w", d.path, err)
		}
	}
	ents, err := os.ReadDir(d.legacy)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && validJID(e.Name()) == nil {
			d.at[e.Name()] = max(d.at[e.Name()], info.ModTime().Unix())
		}
	}
	return d, nil
}

func (d *doneLog) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		jid, secs, ok := strings.Cut(sc.Text(), " ")
		t, err := strconv.ParseInt(secs, 10, 64)
		if !ok || err != nil || validJID(jid) != nil {
			continue // torn by a crash
		}
		d.at[jid] = max(d.at[jid], t)
	}
	return sc.Err()
}

// has reports whether jid finished within keepDone.
func (d *doneLog) has(jid string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.at[jid]
	return ok
}

// add records that jid finished at now.
func (d *doneLog) add(jid string, now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at[jid] = now.Unix()
	if d.appended >= max(compactAfter, d.kept) {
		return d.rewrite(now)
	}
	if d.f == nil {
		f, err := os.OpenFile(d.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("jobs: %w", err)
		}
		d.f = f
	}
	d.appended++
	if _, err := fmt.Fprintf(d.f, "%s %d\n", jid, now.Unix()); err != nil {
		return fmt.Errorf("jobs: %s: %w", d.path, err)
	}
	return nil
}

// compact rewrites the journal without the jids finished before
// now-keepDone, and removes an earlier version's done/ once its jids are
// in the journal.
func (d *doneLog) compact(now time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.rewrite(now); err != nil {
		return err
	}
	if err := os.RemoveAll(d.legacy); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}

func (d *doneLog) rewrite(now time.Time) error {
	d.closeFile()
	oldest := now.Add(-keepDone).Unix()
	var b strings.Builder
	for _, jid := range slices.Sorted(maps.Keys(d.at)) {
		if d.at[jid] < oldest {
			delete(d.at, jid)
			continue
		}
		fmt.Fprintf(&b, "%s %d\n", jid, d.at[jid])
	}
	d.appended, d.kept = 0, len(d.at)
	if err := atomicfile.WriteBytes(d.path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}

// close releases the append handle.
func (d *doneLog) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closeFile()
}

// closeFile closes the append handle before the journal is replaced:
// Windows refuses to rename over an open file.
func (d *doneLog) closeFile() {
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
}
