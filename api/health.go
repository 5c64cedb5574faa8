package api

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// checkTimeout bounds one health check.
const checkTimeout = 3 * time.Second

// Health is the body of GET /healthz: "ok" when every component is, else
// "degraded" with each failing component's reason.
type Health struct {
	Status string                     `json:"status"`
	Checks map[string]ComponentHealth `json:"checks"`
}

// ComponentHealth is one component's state.
type ComponentHealth struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Detail any    `json:"detail,omitempty"`
}

// Health runs every check at once and reports.
func (s *Server) Health(ctx context.Context) Health {
	h := Health{Status: "ok", Checks: make(map[string]ComponentHealth, len(s.cfg.Checks))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.cfg.Checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			ch := ComponentHealth{Status: "ok"}
			if err := c.Func(cctx); err != nil {
				ch = ComponentHealth{Status: "degraded", Reason: err.Error()}
			}
			if c.Detail != nil {
				ch.Detail = c.Detail(cctx)
			}
			mu.Lock()
			defer mu.Unlock()
			h.Checks[c.Name] = ch
			if ch.Status != "ok" {
				h.Status = "degraded"
			}
		})
	}
	wg.Wait()
	return h
}

// serveHealth answers 200 when healthy and 503 when degraded, so that a
// load balancer needs only the status code.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "%s /healthz: use GET", r.Method)
		return
	}
	if !s.access.Load().publicHealth {
		if err := s.checkToken(r, false); err != nil {
			writeError(w, authStatus(err), "GET /healthz: %v", err)
			return
		}
	}
	h := s.Health(r.Context())
	status := http.StatusOK
	if h.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, h)
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if !s.access.Load().publicMetrics {
		if err := s.checkToken(r, false); err != nil {
			writeError(w, authStatus(err), "GET /metrics: %v (or list metrics in api.public)", err)
			return
		}
	}
	s.scrape.ServeHTTP(w, r)
}

// slogPrinter lets promhttp report collection errors through slog.
type slogPrinter struct{ s *Server }

func (p slogPrinter) Println(v ...any) { p.s.log.Warn("api: metrics", "err", v) }
