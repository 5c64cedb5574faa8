package loopback

import (
	"fmt"
	"net"
	"testing"
)

func TestPortIsFreeForTCPAndUDP(t *testing.T) {
	for range 20 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		u, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d not free for UDP: %v", p, err)
		}
		l, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d not free for TCP: %v", p, err)
		}
		u.Close()
		l.Close()
	}
}
