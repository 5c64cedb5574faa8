// Package loopback finds free ports on 127.0.0.1 for the servers that tests,
// benchmarks and the demo start (BIND, dnsmasq, sshd, masters).
package loopback

import (
	"errors"
	"fmt"
	"net"
)

// Port returns a port of 127.0.0.1 free for both TCP and UDP at the time
// of the call: DNS servers bind both, and a port free only for one may be
// another server's.
func Port() (int, error) {
	for range 50 {
		u, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		u.Close()
		if err != nil {
			continue
		}
		t.Close()
		return port, nil
	}
	return 0, errors.New("loopback: no port free for both TCP and UDP")
}
