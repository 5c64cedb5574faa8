package e2e

import (
	"strings"
	"testing"
)

// TestCallQueuesNonFinite: a return holding .inf is queued for the master
// (as the text Salt prints for it), not refused and lost; the master is
// away here, so it stays in the outbox.
func TestCallQueuesNonFinite(t *testing.T) {
	a := &testAgent{t: t, id: "inf1", dir: t.TempDir()}
	writeFile(t, a.dir+"/minion", "id: inf1\nmaster: 127.0.0.1\nmaster_port: 1\npki_dir: pki\ncachedir: cache\ngrains:\n  big: .inf\n")
	out, errs, code := a.call("grains.get", "big", "--json", "--timeout", "1s")
	if code != 0 || strings.TrimSpace(out) != `{"local":"inf"}` {
		t.Fatalf("brine call grains.get big (.inf): exit %d\n%s%s", code, out, errs)
	}
	if n := a.queued(); n != 1 {
		t.Errorf("%d messages queued, want the return\n%s", n, errs)
	}
}
