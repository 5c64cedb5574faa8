// Package natstest runs a stand-alone NATS server with JetStream on a
// loopback port for tests that use the bus as `bus.url` does: a server the
// bus connects to but does not own (an external cluster, several masters).
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start runs the server until the test ends and returns its client URL.
func Start(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start within 10s")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}
