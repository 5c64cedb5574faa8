package jobs

import (
	"strings"
	"testing"
)

// The patterns are tested in internal/redact; these are the job-facing
// entry points over them.
func TestRedactUsesTheSharedPatterns(t *testing.T) {
	got := Redact(map[string]any{"password": "hunter2", "out": "token=abc"}).(map[string]any)
	if got["password"] != Masked || got["out"] != "token="+Masked {
		t.Errorf("Redact = %v", got)
	}
	if s := RedactText("echo password=hunter2SECRET"); strings.Contains(s, "hunter2SECRET") {
		t.Errorf("RedactText = %q", s)
	}
	if r := NewRedactor(nil, nil, []string{"own"}); r.Text("my own") != "my "+Masked {
		t.Errorf("NewRedactor exact string not masked")
	}
}
