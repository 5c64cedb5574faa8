package reactor

import (
	"context"
	"os"
	"slices"
	"strconv"
	"time"
)

// EntryStatus is one mapping entry with the state of its files, as
// `brine reactor list` shows it.
type EntryStatus struct {
	Glob  string       `json:"glob"`
	Files []FileStatus `json:"files"`
}

// FileStatus says whether a mapped file is there to be rendered.
type FileStatus struct {
	Spec    string    `json:"spec"`
	Path    string    `json:"path,omitempty"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"mtime,omitzero"`
	Error   string    `json:"error,omitempty"`
}

// Status describes the mapping in force. A file entry that is a glob
// matching nothing is listed with an error, since Salt would silently
// never react.
func (r *Reactor) Status() []EntryStatus {
	m := r.mapv.Load()
	out := make([]EntryStatus, 0, len(m.entries))
	for _, e := range m.entries {
		es := EntryStatus{Glob: e.Glob, Files: []FileStatus{}}
		for _, spec := range e.Files {
			found := false
			for _, f := range e.files {
				if f.Spec != spec {
					continue
				}
				found = true
				fs := FileStatus{Spec: spec, Path: f.Path}
				switch fi, err := os.Stat(f.Path); {
				case f.Err != nil:
					fs.Error = f.Err.Error()
				case err != nil:
					fs.Error = err.Error()
				default:
					fs.Size, fs.ModTime = fi.Size(), fi.ModTime().UTC()
				}
				es.Files = append(es.Files, fs)
			}
			if !found {
				es.Files = append(es.Files, FileStatus{Spec: spec, Error: "no file matches"})
			}
		}
		out = append(out, es)
	}
	return out
}

// Watch reloads the mapping when it changes on disk: the mapping file named
// by `reactor:`, new or removed files under path globs, salt:// paths that
// appear in file_roots. Reaction file contents need no watching: they are
// re-read when their size or mtime changes. Watch returns when ctx ends.
func (r *Reactor) Watch(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cfg := r.cfg.Load()
		if slices.Equal(fingerprint(cfg, compileMapping(cfg.Mapping, cfg.FileRoots)), *r.loaded.Load()) {
			continue
		}
		if err := r.Reload(*cfg); err != nil {
			r.log.Error("reactor: mapping reload failed; keeping the last good mapping", "err", err)
			continue
		}
		r.log.Info("reactor: mapping reloaded after a file change")
	}
}

// fingerprint summarises what a reload would see: the mapping file's stat
// and every resolved reaction file.
func fingerprint(cfg *Config, m *mapping) []string {
	var fp []string
	if cfg.MappingFile != "" {
		if fi, err := os.Stat(cfg.MappingFile); err == nil {
			fp = append(fp, fi.ModTime().String(), strconv.FormatInt(fi.Size(), 10))
		} else {
			fp = append(fp, err.Error())
		}
	}
	for _, e := range m.entries {
		for _, f := range e.files {
			fp = append(fp, f.Spec, f.Path)
		}
	}
	return fp
}
