package curve

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The fuzz targets feed arbitrary bytes to what a server parses before it
// knows who the peer is (HELLO, INITIATE) and to OpenFrame. Their seeds in
// testdata/fuzz come from real handshakes with fixed keys and randomness
// (fixedServer, fixedClient), so they still open today; rewrite them with
//
//	go test -run TestWriteFuzzSeeds ./bus/gateway/curve/ -args -write-seeds
var writeSeeds = flag.Bool("write-seeds", false, "rewrite testdata/fuzz/* seeds from real handshakes")

// fixedSeeds returns a real HELLO and INITIATE and the first frames the
// client seals after them.
func fixedSeeds(t testing.TB) (hello, initiate []byte, frames [][]byte) {
	hello, initiate, cs, _ := memoryHandshake(t, fixedServer(), fixedClient())
	for _, f := range []struct {
		more    bool
		payload string
	}{{false, ""}, {true, "salt/job/1/ret/web1"}, {false, string(make([]byte, 300))}} {
		fresh := *cs
		frames = append(frames, fresh.AppendFrame(nil, f.more, []byte(f.payload)))
	}
	return hello, initiate, frames
}

// afterHello returns the fixed server state after the fixed HELLO.
func afterHello(t testing.TB, hello []byte) serverHandshake {
	sh := fixedServer()
	if _, err := sh.hello(hello); err != nil {
		t.Fatal(err)
	}
	return *sh
}

func FuzzServerHello(f *testing.F) {
	hello, _, _ := fixedSeeds(f)
	f.Add(hello)
	f.Add(hello[:100])
	f.Fuzz(func(t *testing.T, body []byte) {
		welcome, err := fixedServer().hello(body)
		if err != nil {
			return
		}
		if len(body) != helloSize || len(welcome) != welcomeSize {
			t.Fatalf("accepted a HELLO of %d bytes, answered %d", len(body), len(welcome))
		}
	})
}

func FuzzServerInitiate(f *testing.F) {
	hello, initiate, _ := fixedSeeds(f)
	base := afterHello(f, hello)
	f.Add(initiate)
	f.Add(initiate[:minInitiateSize])
	f.Fuzz(func(t *testing.T, body []byte) {
		sh := base
		client, meta, nonce, err := sh.initiate(body)
		if err != nil {
			return
		}
		if client != fixedClientKeys.Public || nonce <= sh.helloNonce || checkMetadata(meta) != nil {
			t.Fatalf("accepted INITIATE from %s, nonce %d, metadata %q", client, nonce, meta)
		}
	})
}

func FuzzOpenFrame(f *testing.F) {
	_, _, frames := fixedSeeds(f)
	_, _, _, ss := memoryHandshake(f, fixedServer(), fixedClient())
	for _, fr := range frames {
		flags, body := splitFrame(fr)
		f.Add(flags, body)
	}
	f.Fuzz(func(t *testing.T, flags byte, body []byte) {
		s := *ss
		got, payload, err := s.OpenFrame(flags, body)
		if err != nil {
			return
		}
		if got&^(FlagMore|FlagCommand) != 0 || len(payload) != len(body)-Overhead {
			t.Fatalf("opened %d bytes as flags %#x with %d bytes of payload", len(body), got, len(payload))
		}
		if _, _, err := s.OpenFrame(flags, body); err == nil {
			t.Fatal("the same frame opened twice")
		}
	})
}

// TestWriteFuzzSeeds writes the seeds with -write-seeds; without it, it
// checks the committed seeds still hold what a real handshake produces.
func TestWriteFuzzSeeds(t *testing.T) {
	hello, initiate, frames := fixedSeeds(t)
	_, _, _, ss := memoryHandshake(t, fixedServer(), fixedClient())
	for i, fr := range frames {
		s := *ss
		if _, _, err := s.OpenFrame(splitFrame(fr)); err != nil {
			t.Fatalf("seed frame %d does not open: %v", i, err)
		}
	}
	seeds := map[string][]string{
		"FuzzServerHello":    {corpusBytes(hello)},
		"FuzzServerInitiate": {corpusBytes(initiate)},
	}
	for _, fr := range frames {
		flags, body := splitFrame(fr)
		seeds["FuzzOpenFrame"] = append(seeds["FuzzOpenFrame"], fmt.Sprintf("go test fuzz v1\nbyte(%q)\n[]byte(%q)\n", flags, body))
	}
	for target, files := range seeds {
		for _, content := range files {
			sum := sha256.Sum256([]byte(content))
			path := filepath.Join("testdata", "fuzz", target, "handshake-"+hex.EncodeToString(sum[:8]))
			if *writeSeeds {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content {
				t.Errorf("seed %s is missing or stale (%v): rewrite with -write-seeds", path, err)
			}
		}
	}
}

func corpusBytes(b []byte) string { return fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b) }
