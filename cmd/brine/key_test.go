package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/bus/gateway/curve"
	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/keys"
)

func TestPrintKeysColours(t *testing.T) {
	l := keys.Listing{keys.ListPending: {"web2"}, keys.ListAccepted: {"web1"}, keys.ListRejected: {}, keys.ListDenied: {"web1"}}
	var plain, colour bytes.Buffer
	if err := printKeys(&plain, palette{}, l); err != nil {
		t.Fatal(err)
	}
	if want := "Accepted Keys:\nweb1\nDenied Keys:\nweb1\nUnaccepted Keys:\nweb2\nRejected Keys:\n"; plain.String() != want {
		t.Errorf("plain %q, want %q", plain.String(), want)
	}
	if err := printKeys(&colour, palette{on: true}, l); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[1;32mAccepted Keys:\x1b[0m\n\x1b[0;32mweb1\x1b[0m\n\x1b[1;35mDenied Keys:\x1b[0m\n\x1b[0;35mweb1\x1b[0m\n" +
		"\x1b[1;31mUnaccepted Keys:\x1b[0m\n\x1b[0;31mweb2\x1b[0m\n\x1b[1;34mRejected Keys:\x1b[0m\n"
	if colour.String() != want {
		t.Errorf("colour %q, want %q", colour.String(), want)
	}
	if ansiCode.ReplaceAllString(colour.String(), "") != plain.String() {
		t.Error("colour changes the text")
	}
}

// fakeMaster answers key functions from canned returns, through JSON as
// the master's answers come, and records the calls.
type fakeMaster struct {
	answers map[string]func(kwargs map[string]any) any
	calls   []string
}

func (f *fakeMaster) call(_ context.Context, fun string, kwargs map[string]any, out any) error {
	f.calls = append(f.calls, fun)
	answer, ok := f.answers[fun]
	if !ok {
		return fmt.Errorf("%s: no such function", fun)
	}
	b, err := json.Marshal(answer(kwargs))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// TestKeyLocalKeys: -f and -p list the master's Curve25519 key, which the
// client derives, beside the master's RSA key, which the master sends.
func TestKeyLocalKeys(t *testing.T) {
	t.Setenv("BRINE_KEY", "a shared key for the test")
	curveFP := curve.Fingerprint(gateway.MasterKeys([]byte("a shared key for the test")).Public)
	fm := &fakeMaster{answers: map[string]func(map[string]any) any{
		"key.finger": func(kw map[string]any) any {
			m := map[string]map[string]any{}
			match := kw["match"].(string)
			if match != "master" && match != "master.*" {
				m[keys.ListAccepted] = map[string]any{"web1": "aa:bb"}
			}
			if match != "web1" {
				m[keys.ListLocal] = map[string]any{keys.LocalRSA: "11:22"}
			}
			return m
		},
	}}
	for _, tc := range []struct{ match, want string }{
		{"master", "Local Keys:\nmaster.pub:  " + curveFP + "\nmaster.rsa.pub:  11:22\n"},
		{"master.*", "Local Keys:\nmaster.pub:  " + curveFP + "\nmaster.rsa.pub:  11:22\n"},
		{"*", "Local Keys:\nmaster.pub:  " + curveFP + "\nmaster.rsa.pub:  11:22\nAccepted Keys:\nweb1:  aa:bb\n"}, // salt-key's order
		{"web1", "Accepted Keys:\nweb1:  aa:bb\n"},
		{"web1,master.pub", "Local Keys:\nmaster.pub:  " + curveFP + "\nmaster.rsa.pub:  11:22\nAccepted Keys:\nweb1:  aa:bb\n"},
	} {
		var out bytes.Buffer
		k := &keyRun{g: &globalFlags{Flags: agentcmd.Flags{ConfigDir: t.TempDir()}}, cf: &clientFlags{}, f: &keyFlags{finger: tc.match}, out: &out, callFn: fm.call}
		if err := k.run(context.Background()); err != nil {
			t.Fatalf("-f %s: %v", tc.match, err)
		}
		if out.String() != tc.want {
			t.Errorf("-f %s:\n%s\nwant\n%s", tc.match, out.String(), tc.want)
		}
	}
}

// TestKeyImportSalt: --import-salt reads the pki_dir, sends its keys to
// key.import and reports what was recorded and what was skipped, by path.
func TestKeyImportSalt(t *testing.T) {
	pubText, err := os.ReadFile("../../keys/testdata/salt-minion.pub")
	if err != nil {
		t.Fatal(err)
	}
	pub := string(pubText)
	dir := t.TempDir()
	for name, text := range map[string]string{"minions/web1": pub, "minions_pre/web2": pub, "minions_rejected/bad": "not a key"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var sent keys.SaltPKI
	fm := &fakeMaster{answers: map[string]func(map[string]any) any{
		"key.import": func(kw map[string]any) any {
			sent = kw["keys"].(keys.SaltPKI)
			return keys.ImportResult{Imported: keys.Listing{keys.ListAccepted: {"web1"}}, Unchanged: keys.Listing{keys.ListPending: {"web2"}}}
		},
	}}
	for _, tc := range []struct {
		name string
		f    keyFlags
		want string
	}{
		{"text", keyFlags{importSalt: dir}, "Key for minion web1 imported as accepted.\nKey for minion web2 already recorded: unchanged.\n" +
			"Skipped " + filepath.Join(dir, "minions_rejected", "bad") + ": invalid public key"},
		{"json", keyFlags{importSalt: dir, asJSON: true}, `{"imported":{"minions":["web1"]},"unchanged":{"minions_pre":["web2"]},"skipped":["` +
			filepath.Join(dir, "minions_rejected", "bad") + `: invalid public key`},
	} {
		var out bytes.Buffer
		k := &keyRun{g: &globalFlags{}, cf: &clientFlags{}, f: &tc.f, out: &out, callFn: fm.call}
		err := k.run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "1 key(s) or file(s)") {
			t.Errorf("%s: err %v, want the skipped file counted", tc.name, err)
		}
		if !strings.HasPrefix(out.String(), tc.want) {
			t.Errorf("%s:\n%s\nwant it to start\n%s", tc.name, out.String(), tc.want)
		}
		if sent.Len() != 2 || sent[keys.ListAccepted]["web1"] != pub || sent[keys.ListPending]["web2"] != pub {
			t.Errorf("%s: sent %v", tc.name, sent)
		}
	}
	f := keyFlags{importSalt: dir, accept: "web1"}
	if err := f.check(); err == nil {
		t.Error("--import-salt with -a: no error")
	}
	k := &keyRun{g: &globalFlags{}, cf: &clientFlags{}, f: &keyFlags{importSalt: t.TempDir()}, out: io.Discard, callFn: fm.call}
	if err := k.run(context.Background()); err == nil || !strings.Contains(err.Error(), "not a Salt master's pki_dir") {
		t.Errorf("empty dir: %v", err)
	}
}
