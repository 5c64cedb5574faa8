package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/keys"
)

// Z85 public keys of three agents and an impostor.
const (
	pubWeb1     = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
	pubWeb2     = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID"
	pubDB1      = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"
	pubImpostor = "Rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
)

// keyMaster starts a master whose embedded bus is exposed on loopback,
// and returns it with a key store on the same bucket: agents' hellos
// recorded there are the master's keys, as another master's would be.
func keyMaster(t *testing.T) (*testMaster, *keys.Store) {
	t.Helper()
	m := newTestMaster(t)
	nats := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if err := os.MkdirAll(filepath.Join(m.confDir, "master.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "master.d", "bus.conf"), []byte("bus:\n  listen: "+nats+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{URL: "nats://" + nats})
	if err != nil {
		t.Fatalf("connecting to the master's bus: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	kv, err := b.Bucket(ctx, keys.BucketConfig)
	if err != nil {
		t.Fatal(err)
	}
	return m, keys.New(kv, bus.Emitter{Publisher: b, Source: "brine://test/gateway"})
}

func hello(t *testing.T, s *keys.Store, id, pub string) keys.Result {
	t.Helper()
	r, err := s.Authenticate(context.Background(), id, pub, nil)
	if err != nil {
		t.Fatalf("hello %s: %v", id, err)
	}
	return r
}

// TestKeyCommand drives `brine key` against a master: salt-key's listing,
// accept with and without -y, fingerprints (denied keys included), delete,
// JSON, and the usage errors.
func TestKeyCommand(t *testing.T) {
	m, store := keyMaster(t)
	hello(t, store, "web1", pubWeb1)
	hello(t, store, "web2", pubWeb2)
	hello(t, store, "db1", pubDB1)

	expect := func(what string, args []string, wantOut string, wantCode int, wantErr string) {
		t.Helper()
		out, errs, code := m.run(nil, append([]string{"key"}, args...)...)
		if code != wantCode || out != wantOut || !strings.Contains(errs, wantErr) {
			t.Errorf("%s: brine key %s: exit %d (want %d)\nstdout %q\nwant   %q\nstderr %q (want %q)", what, strings.Join(args, " "), code, wantCode, out, wantOut, errs, wantErr)
		}
	}
	expect("list", []string{"-L"}, "Accepted Keys:\nDenied Keys:\nUnaccepted Keys:\ndb1\nweb1\nweb2\nRejected Keys:\n", 0, "")
	expect("default is -L", nil, "Accepted Keys:\nDenied Keys:\nUnaccepted Keys:\ndb1\nweb1\nweb2\nRejected Keys:\n", 0, "")
	expect("no terminal, no -y", []string{"-a", "web*"}, "The following keys are going to be accepted:\nUnaccepted Keys:\nweb1\nweb2\n",
		2, `2 key(s) not accepted: standard input is not a terminal to ask "Proceed?" on (pass -y to proceed)`)
	expect("still pending", []string{"-l", "un"}, "Unaccepted Keys:\ndb1\nweb1\nweb2\n", 0, "")
	expect("accept", []string{"-a", "web*", "-y"},
		"The following keys are going to be accepted:\nUnaccepted Keys:\nweb1\nweb2\nKey for minion web1 accepted.\nKey for minion web2 accepted.\n", 0, "")
	if r := hello(t, store, "web1", pubWeb1); !r.Allowed {
		t.Errorf("web1 after brine key -a: %+v", r)
	}
	expect("accepted", []string{"--list", "accepted"}, "Accepted Keys:\nweb1\nweb2\n", 0, "")
	expect("nothing pending matches", []string{"-a", "web1", "-y"}, "The key glob 'web1' does not match any unaccepted keys.\n", 0, "")

	fp := func(pub string) string { f, _ := keys.Fingerprint(pub); return f }
	expect("finger", []string{"-f", "web1"}, "Accepted Keys:\nweb1:  "+fp(pubWeb1)+"\n", 0, "")
	if r := hello(t, store, "web1", pubImpostor); r.State != keys.Denied {
		t.Fatalf("impostor: %+v", r)
	}
	expect("finger with a denied key", []string{"-f", "web*"}, "Accepted Keys:\nweb1:  "+fp(pubWeb1)+"\nweb2:  "+fp(pubWeb2)+
		"\nDenied Keys:\nweb1:  "+fp(pubImpostor)+"\n", 0, "")
	expect("print", []string{"-p", "db1"}, "Unaccepted Keys:\ndb1:  "+pubDB1+"\n", 0, "")
	expect("json", []string{"-L", "--json"}, `{"minions":["web1","web2"],"minions_denied":["web1"],"minions_pre":["db1"],"minions_rejected":[]}`+"\n", 0, "")
	expect("salt's --out json", []string{"-l", "acc", "--out", "json"}, "{\n    \"minions\": [\n        \"web1\",\n        \"web2\"\n    ]\n}\n", 0, "")

	expect("delete", []string{"-d", "web1", "-y"},
		"The following keys are going to be deleted:\nAccepted Keys:\nweb1\nDenied Keys:\nweb1\nKey for minion web1 deleted.\nKey for minion web1 deleted.\n", 0, "")
	if r := hello(t, store, "web1", pubImpostor); r.State != keys.Pending {
		t.Errorf("web1 after its key was deleted: %+v, want pending", r)
	}
	expect("reject -R", []string{"-R", "-y", "--json"}, `{"minions_rejected":["db1","web1"]}`+"\n", 0, "")
	expect("delete -D", []string{"-D", "-y", "--json"}, `{"minions":["web2"],"minions_rejected":["db1","web1"]}`+"\n", 0, "")
	expect("empty", []string{"-L"}, "Accepted Keys:\nDenied Keys:\nUnaccepted Keys:\nRejected Keys:\n", 0, "")
	expect("delete nothing", []string{"-d", "nothing", "-y"}, "The key glob 'nothing' does not match any accepted, unaccepted, rejected or denied keys.\n", 0, "")

	expect("bad -l", []string{"-l", "foo-acc"}, "", 2, `-l "foo-acc": want one of pre, un`)
	expect("two actions", []string{"-a", "x", "-d", "y"}, "", 2, "give one of -L, -l")
	expect("bad --out", []string{"-L", "--out", "yaml"}, "", 2, `--out "yaml"`)
}

// TestKeyCommandWithoutMaster exits 3, as every client command.
func TestKeyCommandWithoutMaster(t *testing.T) {
	m := newTestMaster(t)
	_, errs, code := m.run([]string{"BRINE_KEY=0123456789abcdef0123456789abcdef"}, "key", "-L", "--timeout", "1s")
	if code != exitUnreachable {
		t.Errorf("exit %d, want %d: %s", code, exitUnreachable, errs)
	}
}
