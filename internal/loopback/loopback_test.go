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

func TestPortIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 50 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if p < 10000 || p >= low {
			t.Fatalf("port %d outside 10000..%d", p, low-1)
		}
	}
}
