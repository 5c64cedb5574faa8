// Package loopback finds free ports on 127.0.0.1 for the servers that tests,
// benchmarks and the demo start (BIND, dnsmasq, sshd, masters).
package loopback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Port returns a port of 127.0.0.1 free for both TCP and UDP at the time of
// the call: DNS servers bind both, and a port free only for one may be
// another server's. It is chosen below the kernel's ephemeral range, which
// the local ends of outgoing connections and listeners on port 0 take
// from: a port from that range could be taken by another test's connection
// between this call and the server's bind.
func Port() (int, error) {
	lo, hi := 10000, ephemeralLow()-1
	for range 200 {
		port := lo + rand.IntN(hi-lo+1)
		u, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
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

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 11000 {
		return 32768
	}
	return n
}
