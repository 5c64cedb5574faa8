package natsbus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// syncer is a group commit for the embedded stream: every caller that wrote
// before a sync round started is covered by that round, so one fsync serves
// all the events acknowledged in the meantime.
type syncer struct {
	dir string

	mu      sync.Mutex
	cond    *sync.Cond
	started uint64 // rounds begun
	done    uint64 // rounds finished
	running bool
	err     error // result of the last finished round
	// durableBefore is the start of the last successful round: whatever the
	// server stored before it is on disk.
	durableBefore time.Time

	// The block JetStream appends to (JetStream only ever writes to the
	// newest one), and its index in the block file names <idx>.blk.
	cur *os.File
	idx int
}

func newSyncer(dir string) *syncer {
	s := &syncer{dir: dir}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// sync returns once a round that started after the call has finished.
func (s *syncer) sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := s.started + 1
	for s.done < want {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.running {
			s.cond.Wait()
			continue
		}
		s.running = true
		s.started++
		round := s.started
		s.mu.Unlock()
		begun := time.Now()
		err := s.syncFiles()
		s.mu.Lock()
		s.running = false
		s.done = round
		s.err = err
		if err == nil {
			s.durableBefore = begun
		}
		s.cond.Broadcast()
	}
	return s.err
}

// durable returns once what the server stored at time stored is on disk:
// at once if a finished round began after it, else after the next round.
// Readers call it before handing an event on, so nobody acts on an event
// that a power loss could still take back.
func (s *syncer) durable(ctx context.Context, stored time.Time) error {
	s.mu.Lock()
	ok := stored.Before(s.durableBefore)
	s.mu.Unlock()
	if ok {
		return nil
	}
	return s.sync(ctx)
}

// syncFiles fsyncs the message block JetStream is appending to. A round
// can straddle a roll-over to a new block: the old one is synced a last time
// and the directory too, so the new file's entry is durable.
func (s *syncer) syncFiles() error {
	if s.cur == nil {
		idx, err := newestBlock(s.dir)
		if err != nil {
			return err
		}
		if err := s.open(idx); err != nil {
			return err
		}
	}
	for {
		if err := s.cur.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", s.cur.Name(), err)
		}
		next := filepath.Join(s.dir, fmt.Sprintf("%d.blk", s.idx+1))
		if _, err := os.Stat(next); err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		s.cur.Close()
		if err := s.open(s.idx + 1); err != nil {
			return err
		}
	}
}

// open makes block idx the one synced each round, and syncs the directory
// so that the block's name survives a crash too.
func (s *syncer) open(idx int) error {
	f, err := os.Open(filepath.Join(s.dir, fmt.Sprintf("%d.blk", idx)))
	if err != nil {
		return fmt.Errorf("event store block: %w", err)
	}
	d, err := os.Open(s.dir)
	if err != nil {
		f.Close()
		return err
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", s.dir, err)
	}
	s.cur, s.idx = f, idx
	return nil
}

func newestBlock(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("event store: %w", err)
	}
	newest := -1
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".blk"); ok {
			if i, err := strconv.Atoi(n); err == nil && i > newest {
				newest = i
			}
		}
	}
	if newest < 0 {
		return 0, fmt.Errorf("event store: no message block in %s", dir)
	}
	return newest, nil
}

func (s *syncer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.Close()
		s.cur = nil
	}
}
