// Package freeport picks loopback ports for the tests' child processes (gateways, balancers)
// whose addresses must be known before they start.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Loopback returns n distinct ports free on 127.0.0.1 now, so a child process's address (a
// gateway's public URL, which an issuer must know as a redirect URI; a balancer's frontend)
// can be fixed before it starts. The listeners are held until all n are chosen, so no port
// comes twice.
//
// The ports are below the kernel's ephemeral range, which listeners on port 0 and outgoing
// connections take theirs from: a port freed here waits for its process to bind it, and the
// tests running beside this one open listeners and connections all the while, which could
// otherwise be handed that very port first (a balancer once failed "Address already in use"
// on a port picked with port 0).
func Loopback(t testing.TB, n int) []int {
	t.Helper()
	lo, hi := fixedRange()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts == 100*n {
			t.Fatalf("no %d free loopback ports in [%d, %d) after %d attempts", n, lo, hi, attempts)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo))))
		if err != nil {
			continue // taken
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// fixedRange is where Loopback picks from: from 10000 up to the first ephemeral port, as Linux
// reports its range (elsewhere, IANA's range, which starts higher).
func fixedRange() (lo, hi int) {
	lo, hi = 10000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if first, err := strconv.Atoi(f[0]); err == nil && first > lo+1000 {
				hi = first
			}
		}
	}
	return lo, hi
}
