// Package logging builds brine's loggers (log/slog) from the log_level and
// log_format settings that the master, the CLI and agents share.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// SettingError reports a log level or format brine does not know;
// commands treat it as a usage error.
type SettingError struct{ msg string }

func (e *SettingError) Error() string { return e.msg }

// ParseLevel reads debug, info, warn (or Salt's warning) or error.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "warning" {
		s = "warn"
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, &SettingError{fmt.Sprintf("log level %q: want debug, info, warn or error", s)}
	}
	return l, nil
}

// New returns a logger writing to w in format (text or json) at level,
// masking secrets in every line (see Redacting).
func New(w io.Writer, format string, level slog.Leveler) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "json":
		return slog.New(Redacting(slog.NewJSONHandler(w, opts))), nil
	case "text":
		return slog.New(Redacting(slog.NewTextHandler(w, opts))), nil
	}
	return nil, &SettingError{fmt.Sprintf("log format %q: want text or json", format)}
}
