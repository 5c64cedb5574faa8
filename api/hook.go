package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/bus"
)

// HookTagPrefix is the tag prefix of webhook events, salt-api's.
const HookTagPrefix = "salt/netapi/hook/"

// hiddenHeaders never reach an event: they hold credentials.
var hiddenHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Auth-Token"}

// HookReply is the body of a successful hook or event post: salt-api's
// {"success": true}, and the id of the stored event.
type HookReply struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
}

// serveHook turns POST /hook/<path> into the event salt/netapi/hook/<path>
// with data {body, post, headers}, answering once the event is durable.
// Nothing is published unless the request is authenticated, within the size
// cap and parseable.
func (s *Server) serveHook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "%s %s: hooks take POST", r.Method, r.URL.Path)
		return
	}
	path := strings.Trim(strings.TrimPrefix(r.URL.Path, "/hook/"), "/")
	if path == "" {
		writeError(w, http.StatusNotFound, "POST /hook/<path>: the path names the hook and is required")
		return
	}
	acc := s.access.Load()
	hook := matchHook(acc.hooks, path)
	auth := AuthToken
	if hook != nil {
		auth = hook.Auth
	} else if len(acc.tokens) == 0 {
		writeError(w, http.StatusNotFound, "no hook is configured for %q (see api.hooks)", path)
		return
	}
	// Refuse what can be refused before reading a body.
	switch auth {
	case AuthToken:
		if err := s.checkToken(r, false); err != nil {
			writeError(w, authStatus(err), "hook %s: %v", path, err)
			return
		}
	case AuthHMAC:
		if err := hasSignature(r, &hook.Hook); err != nil {
			s.refuseSignature(w, r, path, err)
			return
		}
	}
	kind, err := contentKind(r.Header.Get("Content-Type"))
	if err != nil {
		writeError(w, http.StatusUnsupportedMediaType, "hook %s: %v", path, err)
		return
	}
	body, status, err := s.readBody(w, r)
	if err != nil {
		writeError(w, status, "hook %s: %v", path, err)
		return
	}
	var sig *signature
	if auth == AuthHMAC {
		if sig, err = verifySignature(r, &hook.Hook, path, body, s.cfg.Now(), s.notBefore()); err != nil {
			s.refuseSignature(w, r, path, err)
			return
		}
	}
	post, err := parseBody(kind, body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "hook %s: %v", path, err)
		return
	}
	if sig != nil {
		// Taken before the event is stored, so that a replay racing the
		// original is refused too; given back if it is not stored, so
		// that the sender may retry the very same request.
		if err := s.replays.add(sig, s.cfg.Now()); err != nil {
			s.refuseSignature(w, r, path, err)
			return
		}
	}
	data := map[string]any{"body": string(body), "post": post, "headers": eventHeaders(r, hook)}
	if !s.publish(w, r, HookTagPrefix+path, data, "") && sig != nil {
		s.replays.forget(sig)
	}
}

// refuseSignature answers a request whose hook signature was refused, and
// counts it by reason. Replays are also logged: they are the attacks the
// signature's time and memory exist to stop.
func (s *Server) refuseSignature(w http.ResponseWriter, r *http.Request, path string, err error) {
	var se *signatureError
	if errors.As(err, &se) {
		s.metrics.sigRefused.WithLabelValues(se.reason).Inc()
		if se.reason == refusedReplay || se.reason == refusedMemoryFull {
			s.log.Warn("api: signed hook request refused", "hook", path, "reason", se.reason, "remote", r.RemoteAddr)
		}
	}
	if errors.Is(err, errReplayMemoryFull) {
		w.Header().Set("Retry-After", "60")
	}
	writeError(w, authStatus(err), "hook %s: %v", path, err)
}

// readBody reads the whole body within the cap.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	limit := s.access.Load().maxBody
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body of %d bytes, the limit is %d", r.ContentLength, limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over the limit of %d bytes", limit)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err)
	}
	return body, 0, nil
}

// publish stores one event and answers with its id, or with the status
// that fits the failure; it reports whether the event was stored.
func (s *Server) publish(w http.ResponseWriter, r *http.Request, tag string, data map[string]any, id string) bool {
	ev, err := bus.NewEvent(tag, data, bus.Origin{Source: s.cfg.Source})
	if err == nil && id != "" {
		ev.ID = id
		if _, verr := ev.Validate(0); verr != nil && !errors.Is(verr, bus.ErrTooLarge) {
			writeError(w, http.StatusBadRequest, "%v", verr)
			return false
		}
	}
	if err == nil {
		err = s.bus.Publish(r.Context(), ev)
	}
	switch {
	case err == nil:
		s.metrics.accepted.WithLabelValues(route(r), s.metrics.prefix(tag)).Inc()
		writeJSON(w, http.StatusOK, HookReply{Success: true, ID: ev.ID})
		return true
	case errors.Is(err, bus.ErrTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "%v", err)
	case errors.Is(err, bus.ErrInvalidTag), errors.Is(err, bus.ErrInvalidData):
		writeError(w, http.StatusBadRequest, "%v", err)
	default:
		s.log.Error("api: publishing failed", "tag", tag, "err", err)
		writeError(w, http.StatusServiceUnavailable, "the event was not stored: %v", err)
	}
	return false
}

// Body kinds salt-api parses (its ct_in_map).
const (
	kindEmpty = "empty"
	kindJSON  = "json"
	kindForm  = "form"
	kindYAML  = "yaml"
	kindText  = "text"
)

// contentKind maps a Content-Type to how the body is parsed into post.
func contentKind(ct string) (string, error) {
	if ct == "" {
		return kindEmpty, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", fmt.Errorf("Content-Type %q: %v", ct, err)
	}
	switch mt {
	case "application/json":
		return kindJSON, nil
	case "application/x-www-form-urlencoded":
		return kindForm, nil
	case "application/x-yaml", "application/yaml", "text/yaml":
		return kindYAML, nil
	case "text/plain":
		return kindText, nil
	}
	return "", fmt.Errorf("Content-Type %s is not supported: use application/json, application/x-www-form-urlencoded, application/x-yaml or text/plain", mt)
}

// parseBody is salt-api's post: the body parsed per content type, {} when
// empty. text/plain is JSON when it parses as JSON, else the text.
func parseBody(kind string, body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	switch kind {
	case kindEmpty:
		return nil, errors.New("a body needs a Content-Type")
	case kindJSON:
		if json.Valid(body) {
			// Kept as written: the event carries it without a decode and
			// re-encode, with its numbers exactly as sent.
			return json.RawMessage(body), nil
		}
		_, err := decodeJSON(body)
		if err == nil {
			err = errors.New("not valid JSON")
		}
		return nil, fmt.Errorf("JSON body: %w", err)
	case kindText:
		if v, err := decodeJSON(body); err == nil {
			return v, nil
		}
		return string(body), nil
	case kindForm:
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("form body: %w", err)
		}
		out := make(map[string]any, len(q))
		for k, vs := range q {
			if len(vs) == 1 {
				out[k] = vs[0]
			} else {
				out[k] = vs
			}
		}
		return out, nil
	case kindYAML:
		var v any
		if err := yaml.Unmarshal(body, &v); err != nil {
			return nil, fmt.Errorf("YAML body: %s", strings.SplitN(yaml.FormatError(err, false, false), "\n", 2)[0])
		}
		v, err := jsonable(v)
		if err != nil {
			return nil, fmt.Errorf("YAML body: %w", err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown body kind %q", kind)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// jsonable turns decoded YAML into values JSON can hold: mapping keys
// become strings.
func jsonable(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			y, err := jsonable(x)
			if err != nil {
				return nil, err
			}
			t[k] = y
		}
		return t, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			y, err := jsonable(x)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = y
		}
		return out, nil
	case []any:
		for i, x := range t {
			y, err := jsonable(x)
			if err != nil {
				return nil, err
			}
			t[i] = y
		}
		return t, nil
	}
	if _, err := json.Marshal(v); err != nil {
		return nil, err
	}
	return v, nil
}

// eventHeaders is salt-api's headers: the request's headers (one value,
// multiple ones joined by ", ") with Host and Remote-Addr as CherryPy adds
// them, minus credentials and the hook's signature.
func eventHeaders(r *http.Request, hook *compiledHook) map[string]string {
	out := make(map[string]string, len(r.Header)+2)
	for k, vs := range r.Header {
		out[k] = strings.Join(vs, ", ")
	}
	for _, k := range hiddenHeaders {
		delete(out, k)
	}
	if hook != nil && hook.SignatureHeader != "" {
		delete(out, hook.SignatureHeader)
	}
	out["Host"] = r.Host
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		out["Remote-Addr"] = host
	}
	return out
}

// eventPost is the body of POST /events: a tag and data, and optionally
// the event id, which makes a retried post store the event once.
type eventPost struct {
	ID   string          `json:"id"`
	Tag  string          `json:"tag"`
	Data json.RawMessage `json:"data"`
}

// postEvent fires an event for a program holding a token, under the same
// rules as the ZeroMQ gateway: no reserved tags.
func (s *Server) postEvent(w http.ResponseWriter, r *http.Request) {
	if err := s.checkToken(r, false); err != nil {
		writeError(w, authStatus(err), "POST /events: %v", err)
		return
	}
	if kind, err := contentKind(r.Header.Get("Content-Type")); err != nil || (kind != kindJSON && kind != kindEmpty) {
		writeError(w, http.StatusUnsupportedMediaType, "POST /events: send application/json: {\"tag\": …, \"data\": {…}}")
		return
	}
	body, status, err := s.readBody(w, r)
	if err != nil {
		writeError(w, status, "POST /events: %v", err)
		return
	}
	var p eventPost
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		writeError(w, http.StatusBadRequest, "POST /events: body: %v (want {\"tag\": …, \"data\": {…}})", err)
		return
	}
	if err := bus.ValidateTag(p.Tag); err != nil {
		writeError(w, http.StatusBadRequest, "POST /events: %v", err)
		return
	}
	if bus.HasReservedPrefix(p.Tag) {
		writeError(w, http.StatusForbidden, "POST /events: tag %q is reserved: only the master fires tags under %s", p.Tag, strings.Join(bus.ReservedPrefixes, ", "))
		return
	}
	var data map[string]any
	if len(p.Data) > 0 && !bytes.Equal(bytes.TrimSpace(p.Data), []byte("null")) {
		d := json.NewDecoder(bytes.NewReader(p.Data))
		d.UseNumber()
		if err := d.Decode(&data); err != nil {
			writeError(w, http.StatusBadRequest, "POST /events: data must be a JSON object: %v", err)
			return
		}
	}
	s.publish(w, r, p.Tag, data, p.ID)
}

// ParseBody is a request body as salt-api's processors read it, for the
// salt-api endpoints (package saltapi): by Content-Type JSON, a form,
// YAML or text, {} when empty, decoded, with numbers int64 or float64.
func ParseBody(contentType string, body []byte) (any, error) {
	kind, err := contentKind(contentType)
	if err != nil {
		return nil, err
	}
	v, err := parseBody(kind, body)
	if err != nil {
		return nil, err
	}
	if raw, ok := v.(json.RawMessage); ok {
		if v, err = decodeJSON(raw); err != nil {
			return nil, err
		}
	}
	return bus.Numbers(v), nil
}
