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
// before a sync round began is covered by that round, so one fsync serves
// all the events acknowledged in the meantime.
type syncer struct {
	dir string

	mu      sync.Mutex
	cond    *sync.Cond
	running bool
	// durableBefore is when the last successful round began: whatever was
	// written before it is on disk.
	durableBefore time.Time
	// Stream sequences: messages through acked were written (the server
	// acknowledged them to a publisher), those through durable are on disk.
	acked, durable uint64
	rounds         uint64 // successful rounds so far

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

// sync returns once a round that began after the call has finished. A
// publisher calls it once the server acknowledged its message at stream
// sequence seq (0 when there is none, as for key-value writes).
func (s *syncer) sync(ctx context.Context, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = max(s.acked, seq)
	return s.await(ctx, time.Now(), 0)
}

// stored returns once the message at seq, which a reader received at got,
// is on disk: at once if a round covered it already, after the round under
// way if that one covers it, else after a round of its own. Readers call it
// before handing an event on, so nobody acts on an event that a power loss
// could still take back.
func (s *syncer) stored(ctx context.Context, seq uint64, got time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.await(ctx, got, seq)
}

// await, with mu held, returns once a round that began no earlier than t
// has finished, or once seq (when not 0) is known to be on disk.
func (s *syncer) await(ctx context.Context, t time.Time, seq uint64) error {
	for {
		if seq != 0 && seq <= s.durable || !s.durableBefore.Before(t) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.running {
			s.cond.Wait()
			continue
		}
		s.running = true
		begun, covers := time.Now(), s.acked
		s.mu.Unlock()
		err := s.syncFiles()
		s.mu.Lock()
		s.running = false
		s.cond.Broadcast()
		if err != nil {
			return err
		}
		s.durableBefore = begun
		s.durable = max(s.durable, covers)
		s.rounds++
	}
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
