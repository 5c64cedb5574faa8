package file

import (
	"os"
	"testing"
)

// TestKeyvalue holds what Salt 3006.6's file.keyvalue returned and wrote
// on the same files (salt-call --local).
func TestKeyvalue(t *testing.T) {
	h := newHarness(t)
	sshd, conf, conf2, conf3, pre := h.path("sshd"), h.path("conf"), h.path("conf2"), h.path("conf3"), h.path("pre")
	h.write(sshd, "PermitRootLogin yes\n#PasswordAuthentication yes\nPort 22\nPort 2222\n", 0o600)
	for _, p := range []string{conf, conf2, conf3} {
		h.write(p, "a=1\nb = 2\n#c=3\n", 0o644)
	}
	h.write(pre, "x=1\n", 0o644)
	sshdArgs := map[string]any{"name": sshd, "key_values": map[string]any{"permitrootlogin": "no", "passwordauthentication": "no"},
		"separator": " ", "uncomment": "# ", "key_ignore_case": true, "append_if_not_found": true}
	sshdDiff := "- PermitRootLogin yes\n+ PermitRootLogin no\n- #PasswordAuthentication yes\n+ PasswordAuthentication no\n"
	// Salt lists the keys in the SLS's order: one that sorts the same.
	h.steps([]step{
		{"sshd, test mode", "file.keyvalue", true, sshdArgs, nil, "File " + sshd + " is set to be changed (2 lines)\n" +
			"Predicted diff:\n\r\t\t- PermitRootLogin yes\n\r\t\t+ PermitRootLogin no\n\r\t\t- #PasswordAuthentication yes\n" +
			"\r\t\t+ PasswordAuthentication no\n", map[string]any{"diff": sshdDiff},
			fileIs(sshd, "PermitRootLogin yes\n#PasswordAuthentication yes\nPort 22\nPort 2222\n", "")},
		{"sshd", "file.keyvalue", false, sshdArgs, true, "Changed 2 lines", map[string]any{"diff": sshdDiff},
			fileIs(sshd, "PermitRootLogin no\nPasswordAuthentication no\nPort 22\nPort 2222\n", "0600")},
		{"sshd, second run", "file.keyvalue", false, sshdArgs, true, "", nil, nil},
		{"already set", "file.keyvalue", false, map[string]any{"name": conf, "key": "a", "value": int64(1)}, true, "", nil,
			fileIs(conf, "a=1\nb = 2\n#c=3\n", "")},
		{"append", "file.keyvalue", false, map[string]any{"name": conf2, "key_values": map[string]any{"b": int64(3), "d": "four"},
			"append_if_not_found": true}, true, "Changed 2 lines", map[string]any{"diff": "- <EOF>\n+ b=3\n+ d=four\n+ <EOF>\n"},
			fileIs(conf2, "a=1\nb = 2\n#c=3\nb=3\nd=four\n", "")},
		{"uncomment", "file.keyvalue", false, map[string]any{"name": conf3, "key": "c", "value": "3", "uncomment": "#"}, true,
			"Changed 1 lines", map[string]any{"diff": "- #c=3\n+ c=3\n"}, fileIs(conf3, "a=1\nb = 2\nc=3\n", "")},
		{"prepend, no changes shown, test mode", "file.keyvalue", true, map[string]any{"name": pre, "key": "y", "value": int64(2),
			"prepend_if_not_found": true, "show_changes": false}, nil, "File " + pre + " is set to be changed (1 lines)", nil,
			fileIs(pre, "x=1\n", "")},
		{"prepend, no changes shown", "file.keyvalue", false, map[string]any{"name": pre, "key": "y", "value": int64(2),
			"prepend_if_not_found": true, "show_changes": false}, true, "Changed 1 lines", nil, fileIs(pre, "y=2\nx=1\n", "")},
		{"missing", "file.keyvalue", false, map[string]any{"name": h.path("nope"), "key": "a", "value": "b"}, false,
			"unable to open " + h.path("nope"), nil, nil},
		{"missing, ignored", "file.keyvalue", false, map[string]any{"name": h.path("nope"), "key": "a", "value": "b",
			"ignore_if_missing": true}, true, "unable to open " + h.path("nope"), nil, nil},
		{"nothing to set", "file.keyvalue", false, map[string]any{"name": conf}, false,
			"file.keyvalue key and value not supplied and key_values is empty", nil, nil},
		{"every line (count -1)", "file.keyvalue", false, map[string]any{"name": sshd, "key": "Port", "value": int64(22),
			"separator": " ", "count": int64(-1)}, true, "Changed 1 lines",
			map[string]any{"diff": "- Port 2222\n+ Port 22 (from int type)\n"},
			fileIs(sshd, "PermitRootLogin no\nPasswordAuthentication no\nPort 22\nPort 22\n", "")},
	})
}

// TestKeyvalueThroughSymlink: Salt rewrites the file in place, so a
// symlink stays a symlink and its target gets the change.
func TestKeyvalueThroughSymlink(t *testing.T) {
	h := newHarness(t)
	target, link := h.path("real.conf"), h.path("link.conf")
	h.write(target, "a=1\n", 0o640)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	h.steps([]step{{"through a symlink", "file.keyvalue", false, map[string]any{"name": link, "key": "a", "value": "2"}, true,
		"Changed 1 lines", map[string]any{"diff": "- a=1\n+ a=2\n"}, fileIs(target, "a=2\n", "0640")}})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink: %v", link, err)
	}
}
