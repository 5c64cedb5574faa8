package natsbus

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSyncerRounds checks when a round is needed: a writer always gets one
// that began after its call; a reader gets none when its message is known
// on disk or a round began after it received it, and one otherwise.
func TestSyncerRounds(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "1.blk"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newSyncer(dir)
	defer s.close()
	ctx := context.Background()
	early := time.Now()
	steps := []struct {
		name   string
		run    func() error
		rounds uint64
	}{
		{"writer of seq 7", func() error { return s.sync(ctx, 7) }, 1},
		{"reader of seq 7, covered", func() error { return s.stored(ctx, 7, time.Now()) }, 1},
		{"reader of seq 8 received before the round", func() error { return s.stored(ctx, 8, early) }, 1},
		{"reader of seq 8 received now", func() error { return s.stored(ctx, 8, time.Now()) }, 2},
		{"writer without a sequence", func() error { return s.sync(ctx, 0) }, 3},
		{"reader of seq 7 again", func() error { return s.stored(ctx, 7, time.Now()) }, 3},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if s.rounds != st.rounds {
			t.Fatalf("%s: %d rounds so far, want %d", st.name, s.rounds, st.rounds)
		}
	}
	if s.durable != 7 {
		t.Errorf("durable through %d, want 7 (8 was only read, never acknowledged to a writer)", s.durable)
	}
}
