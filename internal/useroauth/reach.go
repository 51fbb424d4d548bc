package useroauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/mcp-gateway/gateway/internal/loopback"
)

// Where the gateway goes for a backend's authorization server. The backend's URL and a
// configured auth.authServer are the operator's; every other address comes from documents the
// backend and its authorization server serve, and is held to these rules before the gateway
// sends anything there (codes, client secrets, refresh tokens):
//
//   - never a link-local, unspecified or multicast address (169.254.169.254, the cloud
//     metadata service, among them), whoever names it: the default client refuses to connect
//     to one, whatever name resolved to it (noLinkLocal);
//   - a loopback host (127.0.0.0/8, ::1, localhost) only when the document comes from a
//     loopback host itself (a development setup on one machine): a backend or authorization
//     server elsewhere cannot send the gateway's requests to services listening on its own
//     machine (its admin listener among them) (reachableFrom);
//   - https, or http on a loopback host (checkEndpoint).
//
// Host names are not resolved before the check: a public name that resolves to a loopback or
// private address is reached. Private addresses (10/8, 172.16/12, 192.168/16) are allowed:
// authorization servers inside an organisation live there.

var errLinkLocal = errors.New("a link-local, unspecified or multicast address")

// reachableFrom reports whether the gateway may use endpoint, named in a document served at
// from: an error for a link-local, unspecified or multicast host, and for a loopback host named
// by a document from a host that is not loopback.
func reachableFrom(from, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return errors.New("does not parse")
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && !usableAddr(ip) {
		return fmt.Errorf("%q is %w", u.Hostname(), errLinkLocal)
	}
	f, err := url.Parse(from)
	if err != nil {
		return errors.New("the document's URL does not parse")
	}
	// Refusing is wide (any spelling that could reach loopback), allowing is strict (only a
	// document from a host that certainly is loopback).
	if loopback.Maybe(u.Hostname()) && !loopback.Host(f.Hostname()) {
		return fmt.Errorf("%q is a loopback host, named by %q which is not", u.Hostname(), f.Hostname())
	}
	return nil
}

// usableAddr reports whether ip may be an authorization server's address.
func usableAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() &&
		!ip.IsMulticast() && !ip.IsUnspecified()
}

// noLinkLocal refuses a connection to an address usableAddr refuses, whatever name resolved to
// it (net.Dialer.Control).
func noLinkLocal(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); err != nil || !usableAddr(ip) {
		return fmt.Errorf("useroauth: refusing to connect to %s: %w", host, errLinkLocal)
	}
	return nil
}

// defaultHTTPClient reaches backends' metadata and authorization servers: no redirect followed
// (a redirect would take a code or token elsewhere), no connection to a link-local address.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: noLinkLocal}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
