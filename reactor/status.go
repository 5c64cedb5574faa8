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
	last := r.fingerprint()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		fp := r.fingerprint()
		if slices.Equal(fp, last) {
			continue
		}
		last = fp
		if err := r.Reload(r.Config()); err != nil {
			r.log.Error("reactor: mapping reload failed; keeping the last good mapping", "err", err)
			continue
		}
		r.log.Info("reactor: mapping reloaded after a file change")
	}
}

// fingerprint summarises what a reload would see.
func (r *Reactor) fingerprint() []string {
	cfg := r.cfg.Load()
	var fp []string
	if cfg.MappingFile != "" {
		if fi, err := os.Stat(cfg.MappingFile); err == nil {
			fp = append(fp, fi.ModTime().String(), strconv.FormatInt(fi.Size(), 10))
		} else {
			fp = append(fp, err.Error())
		}
	}
	m := compileMapping(cfg.Mapping, cfg.FileRoots)
	for _, e := range m.entries {
		for _, f := range e.files {
			fp = append(fp, f.Spec, f.Path)
		}
	}
	return fp
}
