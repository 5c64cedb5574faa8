package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Errors a Jobs or Mine source wraps so that the API answers 404 or 400.
var (
	ErrNotFound = errors.New("not found")
	ErrBadQuery = errors.New("bad query")
)

// Jobs is read-only access to the jobs the master keeps, for GET /jobs
// (query: fun, user, since, active, limit) and GET /jobs/<jid>; the master
// adapts its job store. GetJob wraps ErrNotFound for an unknown jid.
type Jobs interface {
	ListJobs(ctx context.Context, q url.Values) (any, error)
	GetJob(ctx context.Context, jid string) (any, error)
}

// Mine is read-only access to the host inventory, for GET /mine (query:
// tgt, tgt_type as Salt takes them; no tgt lists every host).
type Mine interface {
	MineHosts(ctx context.Context, tgt, tgtType string) (any, error)
}

// serveJobs answers GET /jobs and GET /jobs/<jid>.
func (s *Server) serveJobs(w http.ResponseWriter, r *http.Request) {
	if !s.readOnly(w, r) {
		return
	}
	if s.cfg.Jobs == nil {
		writeError(w, http.StatusNotFound, "GET %s: this master keeps no jobs", r.URL.Path)
		return
	}
	jid := strings.Trim(strings.TrimPrefix(r.URL.Path, "/jobs"), "/")
	var (
		v   any
		err error
	)
	if jid == "" {
		v, err = s.cfg.Jobs.ListJobs(r.Context(), r.URL.Query())
	} else {
		v, err = s.cfg.Jobs.GetJob(r.Context(), jid)
	}
	s.answer(w, r, v, err)
}

// serveMine answers GET /mine.
func (s *Server) serveMine(w http.ResponseWriter, r *http.Request) {
	if !s.readOnly(w, r) {
		return
	}
	if s.cfg.Mine == nil {
		writeError(w, http.StatusNotFound, "GET /mine: this master has no mine")
		return
	}
	q := r.URL.Query()
	v, err := s.cfg.Mine.MineHosts(r.Context(), q.Get("tgt"), q.Get("tgt_type"))
	s.answer(w, r, v, err)
}

// readOnly admits GET requests with a token.
func (s *Server) readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "%s %s: use GET", r.Method, r.URL.Path)
		return false
	}
	if err := s.checkToken(r, false); err != nil {
		writeError(w, authStatus(err), "GET %s: %v", r.URL.Path, err)
		return false
	}
	return true
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, v any, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, ErrBadQuery):
		writeError(w, http.StatusBadRequest, "%v", err)
	default:
		s.log.Error("api: query failed", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, "%v", err)
	}
}
