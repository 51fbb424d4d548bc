package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopbackBelowEphemeralRange: the ports are distinct, bindable, and below the range the
// kernel hands out for port 0 and outgoing connections.
func TestLoopbackBelowEphemeralRange(t *testing.T) {
	lo, hi := fixedRange()
	ports := Loopback(t, 8)
	seen := map[int]bool{}
	for _, p := range ports {
		if p < lo || p >= hi || seen[p] {
			t.Errorf("port %d: want distinct ports in [%d, %d)", p, lo, hi)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("port %d is not free after Loopback returned: %v", p, err)
			continue
		}
		_ = l.Close()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p := l.Addr().(*net.TCPAddr).Port; p >= lo && p < hi {
		t.Errorf("an ephemeral port (%d) falls in the fixed range [%d, %d)", p, lo, hi)
	}
}
