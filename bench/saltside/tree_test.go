package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ret   string
		first bool
		sum   float64
		err   string
	}{
		{"first, all changed", `{"a": {"__id__": "saltside-conf-1", "result": true, "changes": {"diff": "New file"}, "duration": 1.5}, "b": {"__id__": "saltside-conf-2", "result": true, "changes": {"pid": 1}, "duration": 2}}`, true, 3.5, ""},
		{"repeat, none changed", `{"a": {"result": true, "changes": {}, "duration": 1}, "b": {"result": true, "changes": {}, "duration": 1}}`, false, 2, ""},
		{"repeat that changed", `{"a": {"result": true, "changes": {"diff": "x"}}, "b": {"result": true, "changes": {}}}`, false, 0, "1 of 2 states changed"},
		{"a failed state", `{"a": {"result": false, "comment": "no"}, "b": {"result": true}}`, true, 0, "failed: no"},
		{"a result missing", `{"a": {"changes": {}}, "b": {"result": true}}`, false, 0, "failed"},
		{"too few states", `{"a": {"result": true}}`, false, 0, "1 states returned, 2 expected"},
		{"not a state run", `["minion did not return"]`, false, 0, "not a state run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, _, err := checkApply([]byte(tc.ret), 2, tc.first)
			if tc.err == "" {
				if err != nil || sum != tc.sum {
					t.Fatalf("checkApply = %v, %v; want %v, nil", sum, err, tc.sum)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("checkApply error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestStateKind(t *testing.T) {
	for id, want := range map[string]string{
		"saltside-conf-7":   "saltside-conf",
		"saltside-stamp-24": "saltside-stamp",
		"saltside-dir-0":    "saltside-dir",
		"something":         "other",
		"":                  "other",
	} {
		if got := (stateRet{ID: id}).kind(); got != want {
			t.Errorf("kind of %q = %q, want %q", id, got, want)
		}
	}
}

func TestMinionReturn(t *testing.T) {
	for _, tc := range []struct {
		name, out, want, err string
	}{
		{"salt's --out=json", "{\n    \"saltside-minion\": true\n}\n", "true", ""},
		{"another minion only", `{"other": true}`, "", "no return from saltside-minion"},
		{"nothing printed", "", "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &cliRun{}
			r.stdout.WriteString(tc.out)
			ret, err := minionReturn(r)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("minionReturn error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !bytes.Equal(bytes.TrimSpace(ret), []byte(tc.want)) {
				t.Fatalf("minionReturn = %s, %v; want %s", ret, err, tc.want)
			}
		})
	}
}

// TestGroupStop proves that stopping a daemon ends the processes it
// forked too, as a salt-master's workers, even those that outlive it.
func TestGroupStop(t *testing.T) {
	log := t.TempDir() + "/out.log"
	// The backgrounded sleep ignores SIGTERM: it outlives the shell,
	// which SIGTERM ends, and only SIGKILL ends it.
	g, err := startGroup("sh", log, os.Environ(), "/bin/sh", "-c", "(trap '' TERM; sleep 60) & sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	pgid := g.proc.PID()
	deadline := time.Now().Add(5 * time.Second)
	for len(groupPIDs(pgid)) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(groupPIDs(pgid)); n < 3 {
		t.Fatalf("%d processes in the group, want the shell and its sleeps", n)
	}
	if err := g.stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if pids := groupPIDs(pgid); len(pids) > 0 {
		t.Fatalf("processes %v left after stop", pids)
	}
	if err := syscall.Kill(-pgid, 0); err == nil {
		t.Fatal("the process group still exists")
	}
}
