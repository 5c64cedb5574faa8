package logging

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/brinehq/brine/internal/redact"
)

// Redacting wraps h so that every record it handles is masked with the
// patterns jobs use for their records and events (internal/redact): the
// message, string values, errors, values under secret-named keys, in
// groups as well. A failing `cmd.run 'echo password=…'` is logged by the
// agent with its output; the job store masks it, and so must the log.
func Redacting(h slog.Handler) slog.Handler {
	if _, ok := h.(*redactingHandler); ok {
		return h
	}
	return &redactingHandler{inner: h}
}

type redactingHandler struct{ inner slog.Handler }

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, redact.Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = maskAttr(a)
	}
	return &redactingHandler{inner: h.inner.WithAttrs(masked)}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{inner: h.inner.WithGroup(name)}
}

// secretAttr reports whether an attribute's name says its value is a
// secret. "key" alone is not one in a log line: brine logs public keys and
// key ids under it (an agent's CURVE public key), which an operator needs
// to see; "ssh_key", "api_key" and the rest still are.
func secretAttr(name string) bool {
	if name == "key" || strings.Contains(strings.ToLower(name), "public") {
		return false
	}
	return redact.SecretKey(name)
}

// maskAttr masks one attribute. Values of other kinds (numbers, times,
// structs) keep their kind unless their text holds a secret, so that the
// JSON format still shows numbers as numbers.
func maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		group := v.Group()
		masked := make([]slog.Attr, len(group))
		for i, g := range group {
			masked[i] = maskAttr(g)
		}
		if a.Key != "" && secretAttr(a.Key) && len(group) > 0 {
			return slog.String(a.Key, redact.Masked)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(masked...)}
	}
	if secretAttr(a.Key) && !emptyValue(v) {
		return slog.String(a.Key, redact.Masked)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact.Text(v.String()))
	case slog.KindAny:
		switch x := v.Any().(type) {
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		case error:
			return slog.String(a.Key, redact.Text(x.Error()))
		case map[string]any, []any:
			return slog.Any(a.Key, redact.Value(x))
		case []byte:
			return slog.String(a.Key, redact.Text(string(x)))
		default:
			s := fmt.Sprint(x)
			if m := redact.Text(s); m != s {
				return slog.String(a.Key, m)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// emptyValue is an absent value: masking it would claim a secret where
// there is none.
func emptyValue(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString:
		return v.String() == ""
	case slog.KindAny:
		return v.Any() == nil
	}
	return false
}
