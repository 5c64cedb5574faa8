package natsbus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

	// Files written by the server since it started; fsync'ed each round.
	// Only the newest blocks can hold unsynced writes: JetStream appends.
	files   map[string]*os.File
	dirSync bool
}

func newSyncer(dir string) *syncer {
	s := &syncer{dir: dir, files: make(map[string]*os.File)}
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
		err := s.syncFiles()
		s.mu.Lock()
		s.running = false
		s.done = round
		s.err = err
		s.cond.Broadcast()
	}
	return s.err
}

// syncFiles fsyncs the two newest message blocks (a round can straddle a
// block roll-over) and, when a block was created, the directory.
func (s *syncer) syncFiles() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.dir, err)
	}
	var blocks []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".blk") {
			blocks = append(blocks, e.Name())
		}
	}
	slices.SortFunc(blocks, func(a, b string) int { return blockIndex(a) - blockIndex(b) })
	if len(blocks) > 2 {
		blocks = blocks[len(blocks)-2:]
	}
	newFile := false
	for name, f := range s.files {
		if !slices.Contains(blocks, name) {
			// Rolled over: sync once more, then forget it.
			_ = f.Sync()
			f.Close()
			delete(s.files, name)
		}
	}
	for _, name := range blocks {
		f, ok := s.files[name]
		if !ok {
			f, err = os.Open(filepath.Join(s.dir, name))
			if err != nil {
				if os.IsNotExist(err) {
					continue // compacted away between ReadDir and Open
				}
				return err
			}
			s.files[name] = f
			newFile = true
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", name, err)
		}
	}
	if newFile || !s.dirSync {
		d, err := os.Open(s.dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("fsync %s: %w", s.dir, err)
		}
		s.dirSync = true
	}
	return nil
}

func blockIndex(name string) int {
	n := 0
	for _, c := range strings.TrimSuffix(name, ".blk") {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (s *syncer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, f := range s.files {
		f.Close()
		delete(s.files, name)
	}
}
