package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/config"
)

func TestKeep(t *testing.T) {
	tests := []struct {
		conf string
		want time.Duration
		err  string
	}{
		{"", DefaultKeep, ""},
		{"keep_jobs: 2\n", 2 * time.Hour, ""},
		{"keep_jobs_seconds: 90\nkeep_jobs: 2\n", 90 * time.Second, ""},
		{"keep_jobs_seconds: -1\n", 0, "keep_jobs_seconds -1"},
		{"keep_jobs: soon\n", 0, "keep_jobs"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "master"), []byte("id: t\n"+tt.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Keep(cfg)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "master")):
			t.Errorf("%q: err %v, want one naming the file and %q", tt.conf, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%q: %v, %v; want %v", tt.conf, got, err, tt.want)
		}
	}
}
