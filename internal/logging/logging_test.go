package logging

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn,
		"warning": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	var se *SettingError
	if _, err := ParseLevel("loud"); !errors.As(err, &se) || err.Error() != `log level "loud": want debug, info, warn or error` {
		t.Errorf("ParseLevel(loud) error %v", err)
	}
}

func TestNew(t *testing.T) {
	var (
		b  bytes.Buffer
		se *SettingError
	)
	log, err := New(&b, "json", slog.LevelWarn)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	if got := b.String(); strings.Contains(got, "hidden") || !strings.Contains(got, `"msg":"shown","k":1`) {
		t.Errorf("json logger wrote %q", got)
	}
	if _, err := New(&b, "xml", slog.LevelInfo); !errors.As(err, &se) {
		t.Errorf("format xml: %v", err)
	}
}
