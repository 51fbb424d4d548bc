package gateway

import (
	"errors"
	"net"
	"net/netip"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
)

// validateListeners checks the two listen addresses as serve will bind them: each a host:port
// whose port is a number from 0 to 65535 (0: any free port), and not the same port as the other
// on an interface both would bind. Found only when serve binds them, either was a start-up crash
// loop check-config had passed.
func validateListeners(serverListen, adminListen string) []error {
	type listener struct {
		path, addr, host string
		port             int
	}
	var errs []error
	var ok []listener
	for _, l := range []listener{{path: "server.listen", addr: serverListen}, {path: "admin.listen", addr: adminListen}} {
		host, port, err := net.SplitHostPort(l.addr)
		if err != nil {
			reason := err.Error()
			var ae *net.AddrError
			if errors.As(err, &ae) {
				reason = ae.Err
			}
			errs = append(errs, configerr.At(l.path, "%q: want host:port or :port (%s)", l.addr, reason))
			continue
		}
		// As net.Listen reads it: a number, or a service name (http).
		n, err := net.LookupPort("tcp", port)
		if err != nil {
			errs = append(errs, configerr.At(l.path, "%q: want a port from 0 to 65535 after the colon", l.addr))
			continue
		}
		l.host, l.port = host, n
		ok = append(ok, l)
	}
	if len(ok) == 2 && ok[0].port != 0 && ok[0].port == ok[1].port && overlap(ok[0].host, ok[1].host) {
		errs = append(errs, configerr.At("admin.listen", "%q: the MCP listener (server.listen %q) binds the same port there; give the admin listener a port of its own", ok[1].addr, ok[0].addr))
	}
	return errs
}

// overlap reports whether listeners on hosts a and b, on one port, would bind a common address:
// either one every interface, or the same address however it is spelt (an IPv6 address in
// another notation, an IPv4 address as IPv4-mapped IPv6, a name in another case, "localhost"
// beside the loopback address net.Listen binds for it). Other names are not resolved:
// check-config may run where they resolve differently.
func overlap(a, b string) bool {
	return wildcardHost(a) || wildcardHost(b) || bindKey(a) == bindKey(b)
}

// bindKey is the address a listener on host binds, in one spelling: an IP address in its
// canonical form (IPv4-mapped IPv6 as IPv4, a zone kept); "localhost" as 127.0.0.1, since
// net.Listen binds the first IPv4 address a name resolves to and localhost resolves to it;
// any other name lower-cased (names are looked up without regard to case).
func bindKey(host string) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().String()
	}
	if loopback.Host(host) { // not an address, so the name localhost
		return "127.0.0.1"
	}
	return strings.ToLower(host)
}

// wildcardHost reports whether a listen host binds every interface.
func wildcardHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "" || ip != nil && ip.IsUnspecified()
}

// validateListener refuses a negative number among the listener's own settings, which net/http
// and the drain would otherwise each read their own way: a negative readHeaderTimeout as no
// timeout at all, a negative maxHeaderBytes as net/http's 1 MiB, a negative shutdownTimeout as a
// deadline already past (every request in flight cut at once on SIGTERM and on a reload), a
// negative idleTimeout as closing every kept-alive connection at once. Zero keeps its meaning:
// the default, or for drainDelay no delay.
func (s ServerConfig) validateListener() []error {
	var errs []error
	for _, f := range []struct {
		path     string
		negative bool
	}{
		{"server.drainDelay", s.DrainDelay < 0},
		{"server.shutdownTimeout", s.ShutdownTimeout < 0},
		{"server.readHeaderTimeout", s.ReadHeaderTimeout < 0},
		{"server.idleTimeout", s.IdleTimeout < 0},
		{"server.maxHeaderBytes", s.MaxHeaderBytes < 0},
	} {
		if f.negative {
			errs = append(errs, configerr.At(f.path, "must not be negative"))
		}
	}
	return errs
}
