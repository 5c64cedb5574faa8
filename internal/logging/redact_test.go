package logging

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

const (
	secret = "hunter2SECRET"
	slack  = "xoxb-1234-5678-abcdefSECRET"
)

func TestRedactingMasksEveryPart(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			log, err := New(&b, format, slog.LevelDebug)
			if err != nil {
				t.Fatal(err)
			}
			log = log.With("session", "s-"+secret, "ctx", "token="+secret)
			log.Error("command output: password="+secret+"; token "+slack,
				"stdout", "password="+secret+"\n"+slack,
				"err", errors.New("exit 1: password="+secret),
				"password", secret,
				"api_key", 12345,
				"args", []any{"password=" + secret, map[string]any{"token": secret}},
				"kwargs", map[string]any{"db_pass": secret, "note": "ok"},
				slog.Group("job", "stderr", slack, slog.Group("env", "AWS_SECRET", secret)),
				"bytes", []byte("token="+secret),
				"strs", []string{"password=" + secret},
				"retcode", 1, "jid", "20250101000000000000", "key", "agent-public-key")
			log.WithGroup("g").Warn("in a group", "token", secret, "out", slack)
			got := b.String()
			for _, s := range []string{"hunter2", "abcdef", "12345"} {
				if strings.Contains(got, s) {
					t.Errorf("%s log holds %q:\n%s", format, s, got)
				}
			}
			// What is not a secret stays as it was: numbers stay numbers,
			// a public key stays readable.
			for _, s := range []string{"command output: password=***", "20250101000000000000", "agent-public-key", "ok", "in a group"} {
				if !strings.Contains(got, s) {
					t.Errorf("%s log lost %q:\n%s", format, s, got)
				}
			}
			if format == "json" && !strings.Contains(got, `"retcode":1`) {
				t.Errorf("json log: retcode is no longer a number:\n%s", got)
			}
		})
	}
}

func TestRedactingWrapsOnce(t *testing.T) {
	h := Redacting(slog.NewTextHandler(&bytes.Buffer{}, nil))
	if Redacting(h) != h {
		t.Error("a redacting handler was wrapped again")
	}
}
