// Package egress judges, in one place, where the gateway may connect when it follows a URL it
// learnt at run time: an authorization server's endpoints named by a backend's or a server's
// metadata, a key set named by an issuer's discovery document. What is judged is the address
// actually connected to, after resolution, for every address tried (net.Dialer's Control sees
// each one), so a name is held to exactly the rule its address would be held to as an IP
// literal, whatever DNS answers and whenever it answers it; a redirect is a new connection and
// is judged the same way.
//
// The rule, by the class of the address (an IPv4 address inside IPv6, IPv4-mapped
// ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d or NAT64 64:ff9b::a.b.c.d, is judged as the IPv4
// address it carries):
//
//   - the NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215): refused, unless the URL's host is
//     one the operator configured or Policy.Allow lists the address. Where its IPv4 address
//     sits (RFC 6052 §2.2) depends on the prefix length the network chose (/48 to /96), which
//     the gateway cannot know, so the address it reaches is not known: 127.0.0.1 and
//     169.254.169.254 may hide in it as well as any public address.
//   - link-local (169.254.0.0/16, the cloud metadata service among it; fe80::/10),
//     unspecified and "this network" (0.0.0.0/8, ::), multicast and broadcast: refused.
//   - loopback (127.0.0.0/8, ::1): refused, unless the URL's host is itself a loopback name
//     (internal/loopback.Host: localhost, 127.x.y.z, ::1), whose use the caller has already
//     judged where it reads the URL, or a host the operator configured. A public name that
//     resolves to loopback reaches the gateway's own listeners and whatever else listens on
//     its machine; it is refused.
//   - private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) and public: allowed. Servers
//     inside an organisation live at private addresses; the callers require https there, so
//     what answers must hold a certificate for the name.
//
// The operator may allow more (Policy.Allow: prefixes connected to whatever their class), and
// the hosts the operator configured (a backend's URL, an issuer) are theirs: whatever those
// names resolve to but a refused-always class is reached.
//
// The dial trusts a loopback name because the URL naming it was judged first: Named judges a
// URL a document names (or a redirect points to) by the document's origin, and CheckRedirect
// applies it to every redirect a client follows. A client for learnt URLs uses both halves:
// Named (or no redirects) on every URL, Policy.Dial on every connection. A request that
// carries a credential (a code, a client secret, a refresh token) follows no redirect at all,
// wherever it points (NoRedirect, Credentialed): a 307 or 308 would send its body again.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-gateway/gateway/internal/loopback"
)

// ErrRefused is a connection the policy refuses; a *RefusedError carries the detail.
var ErrRefused = errors.New("egress: address refused")

// RefusedError is a refused connection: the URL's host (a name or an IP literal), the address
// it would have connected to and that address's class. It names no path, query or credential.
type RefusedError struct {
	Host  string     // the URL's host, without port or brackets
	Addr  netip.Addr // the address it resolved to (itself, for an IP literal)
	Class Class      // Addr's class
}

// Error names the host, the address and its class.
func (e *RefusedError) Error() string {
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("not connecting to %s: it is %s", e.Host, e.Class.article())
	}
	return fmt.Sprintf("not connecting to %s: it resolved to %s, %s", e.Host, e.Addr, e.Class.article())
}

// Is makes errors.Is(err, ErrRefused) true for a *RefusedError.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Class is the kind of an address, as the policy judges it.
type Class int

// The classes, from allowed always to refused always (ClassOf takes the larger of two).
const (
	Public      Class = iota // any other unicast address
	Private                  // 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7
	Loopback                 // 127/8, ::1
	Translated               // 64:ff9b:1::/48, NAT64 of a network-specific prefix length
	LinkLocal                // 169.254/16, fe80::/10, and link-local multicast
	Unspecified              // 0.0.0.0/8, ::
	Multicast                // 224/4, ff00::/8, 255.255.255.255
)

// String is the class's name.
func (c Class) String() string {
	return [...]string{"public", "private", "loopback", "nat64-local", "link-local", "unspecified", "multicast"}[c]
}

func (c Class) article() string {
	switch c {
	case Public:
		return "a public address"
	case Private:
		return "a private address"
	case Loopback:
		return "a loopback address"
	case Translated:
		return "a local-use NAT64 address, whose IPv4 address is not known"
	case LinkLocal:
		return "a link-local address"
	case Unspecified:
		return "an unspecified address"
	}
	return "a multicast or broadcast address"
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nat64Local is RFC 8215's local-use prefix: networks take NAT64 prefixes of any RFC 6052
	// length within it, each placing the IPv4 address elsewhere.
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	compat     = netip.MustParsePrefix("::/96")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	// sixToFour is RFC 3056's prefix: 2002:V4ADDR::/48, the IPv4 address in bits 16-47.
	sixToFour = netip.MustParsePrefix("2002::/16")
	// teredo is RFC 4380's prefix: the Teredo server's IPv4 address in bits 32-63, the
	// client's, each bit inverted, in the last 32.
	teredo = netip.MustParsePrefix("2001::/32")
	bcast  = netip.AddrFrom4([4]byte{255, 255, 255, 255})
)

// Embedded returns the IPv4 address ip carries when it is IPv4-mapped, IPv4-compatible (::/96
// but :: and ::1), in the NAT64 well-known prefix or a 6to4 address (2002::/16), and ip
// without its zone otherwise: the address a packet to ip may end up at. A Teredo address
// (2001::/32) carries two, the server's and the client's; it is returned as itself, and
// ClassOf judges it by both.
func Embedded(ip netip.Addr) netip.Addr {
	ip = ip.WithZone("").Unmap()
	b := ip.As16()
	switch {
	case !ip.Is6():
	case (nat64.Contains(ip) || compat.Contains(ip)) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:]))
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return ip
}

// teredoCarried returns the Teredo server's and client's IPv4 addresses a Teredo address
// carries, and whether ip is one.
func teredoCarried(ip netip.Addr) (server, client netip.Addr, ok bool) {
	if !teredo.Contains(ip) {
		return netip.Addr{}, netip.Addr{}, false
	}
	b := ip.As16()
	return netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
}

// ClassOf returns the class of ip, judged as the IPv4 address it carries, if it carries one;
// a Teredo address as the more refused of the two it carries; Translated when it may carry
// one at a place not known (64:ff9b:1::/48).
func ClassOf(ip netip.Addr) Class {
	ip = Embedded(ip)
	if server, client, ok := teredoCarried(ip); ok {
		return max(classOfAddr(server), classOfAddr(client))
	}
	return classOfAddr(ip)
}

// classOfAddr is ClassOf of an address that carries none: the classes are declared from
// allowed to refused, so the larger of two is the more refused.
func classOfAddr(ip netip.Addr) Class {
	switch {
	case nat64Local.Contains(ip):
		return Translated
	case ip.IsLoopback():
		return Loopback
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return LinkLocal
	case ip.IsUnspecified(), thisNet.Contains(ip):
		return Unspecified
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast(), ip == bcast:
		return Multicast
	case ip.IsPrivate(), cgnat.Contains(ip):
		return Private
	}
	return Public
}

// Policy is what a client following learnt URLs may connect to beyond the package's rule. The
// zero Policy is the rule alone.
type Policy struct {
	// Allow are prefixes connected to whatever their class: what the operator's deployment
	// needs (a sidecar on loopback reached by name, tests).
	Allow []netip.Prefix
	// Hosts are names the operator configured (case-insensitive; HostsOf gives them from
	// URLs): a loopback address they resolve to is reached, as their IP literal would be.
	Hosts []string
}

// Check reports whether a connection to ip, which host (a URL's host: a name or an IP
// literal, no port) resolved to, may be made. The error is a *RefusedError.
func (p *Policy) Check(host string, ip netip.Addr) error {
	for _, a := range p.Allow {
		if a.Contains(ip.WithZone("")) || a.Contains(Embedded(ip)) {
			return nil
		}
	}
	switch c := ClassOf(ip); c {
	case Public, Private:
		return nil
	case Loopback:
		if loopback.Host(host) || p.operators(host) {
			return nil
		}
		return &RefusedError{Host: host, Addr: ip, Class: c}
	case Translated:
		// The operator's own name answered through their network's NAT64 is theirs, as its
		// loopback address would be; a learnt name is not known to reach what it may.
		if p.operators(host) {
			return nil
		}
		return &RefusedError{Host: host, Addr: ip, Class: c}
	default:
		return &RefusedError{Host: host, Addr: ip, Class: c}
	}
}

// HostsOf returns the hosts of urls, the operator's configured URLs, for Policy.Hosts: each in
// the form it is dialled in (dialledHost), which is what Check compares. A URL that does not
// parse or names no host adds none.
func HostsOf(urls ...string) []string {
	var out []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			out = append(out, dialledHost(u))
		}
	}
	return out
}

func (p *Policy) operators(host string) bool {
	for _, h := range p.Hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// Dial returns a DialContext for an http.Transport that connects as d does, and only to
// addresses Check allows for the host being dialled. d is not changed.
func (p *Policy) Dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		dd := *d
		dd.Control = nil
		dd.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: not connecting to %s: address %q does not parse", ErrRefused, host, address)
			}
			if err := p.Check(host, ap.Addr()); err != nil {
				return err
			}
			if d.ControlContext != nil {
				return d.ControlContext(ctx, network, address, c)
			}
			if d.Control != nil {
				return d.Control(network, address, c)
			}
			return nil
		}
		return dd.DialContext(ctx, network, addr)
	}
}

// ErrNamed is a URL a document names that is not used: its host is an IP literal of a class
// refused whatever names it, or could reach loopback while the document's host is not
// loopback.
var ErrNamed = errors.New("egress: refused host")

// Named reports whether target, a URL named by a document served at from (or a redirect from
// from), may be followed. Its host is judged as text here, in the form it is dialled in
// (dialledHost: a Unicode spelling as the ASCII name it maps to); what a name resolves to is judged
// where it is dialled (Policy.Dial), which lets a loopback name through because this judged
// it:
//
//   - an IP literal of a class refused always (link-local, unspecified, multicast, in any
//     IPv6 form) is refused;
//   - a host that some resolver or parser could take to loopback (loopback.Maybe: 127.1,
//     2130706433, sub.localhost, ::ffff:127.0.0.1, ...) is refused unless from's host is
//     certainly loopback (loopback.Host): a document or server elsewhere cannot send the
//     gateway to services listening on its own machine, while everything on one machine (a
//     development setup) works;
//   - a URL that is not https is refused, but http on a loopback host: the configured URLs
//     are held to that rule, and a document or redirect naming http elsewhere would have the
//     gateway fetch a key set, or send a code or client secret, in clear text that anyone on
//     the path reads or replaces.
//
// The error wraps ErrNamed and names the hosts, never a path or query.
func Named(from, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("%w: the URL does not parse", ErrNamed)
	}
	host := dialledHost(u)
	if u.Scheme != "https" && (u.Scheme != "http" || !loopback.Host(host)) {
		return fmt.Errorf("%w: %s://%s is not https (http only on a loopback host)", ErrNamed, u.Scheme, host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		switch c := ClassOf(ip); c {
		case LinkLocal, Unspecified, Multicast:
			return fmt.Errorf("%w: %q is %s", ErrNamed, host, c.article())
		}
	}
	f, err := url.Parse(from)
	if err != nil {
		return fmt.Errorf("%w: the document's URL does not parse", ErrNamed)
	}
	// Refusing is wide (any spelling that could reach loopback), allowing is strict (only a
	// document from a host that certainly is loopback).
	if loopback.Maybe(host) && !loopback.Host(f.Hostname()) {
		return fmt.Errorf("%w: %q is a loopback host, named by %q which is not", ErrNamed, host, f.Hostname())
	}
	return nil
}

// dialledHost is u's host as net/http dials it, and so as Policy.Dial sees it
// (loopback.Dialled: "ℓocalhost" is dialled as localhost, "①②⑦.0.0.1" as 127.0.0.1). Judging
// the text as written would let such a spelling past Named to a dial that trusts the loopback
// name it became.
func dialledHost(u *url.URL) string { return loopback.Dialled(u.Hostname()) }

// ErrRedirected is a redirect a client whose requests carry a credential did not follow.
var ErrRedirected = errors.New("egress: redirect not followed")

// RedirectedError is a redirect NoRedirect refused: the status that asked for it. It names
// neither the request's URL nor the redirect's target (whose query is the server's text).
type RedirectedError struct {
	Status int
}

// Error names the status and why it was not followed.
func (e *RedirectedError) Error() string {
	return fmt.Sprintf("the server answered HTTP %d, a redirect, which a request carrying a credential does not follow", e.Status)
}

// Is makes errors.Is(err, ErrRedirected) true for a *RedirectedError.
func (e *RedirectedError) Is(target error) bool { return target == ErrRedirected }

// NoRedirect is the CheckRedirect of a client whose requests carry a credential (a code, a
// client secret, a refresh token, a registration): a 307 or 308 answer would have the client
// send the same body, and a 301, 302 or 303 the same Authorization header to a host whose
// name matches, to wherever the server points, so no redirect is followed, whatever its
// target. The client's Do returns a *url.Error (naming the target) wrapping a
// *RedirectedError, which is what to report.
func NoRedirect(req *http.Request, _ []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &RedirectedError{Status: status}
}

// Credentialed returns a copy of c, sharing its transport, that follows no redirect
// (NoRedirect): the client for requests that carry a credential, whatever c's own policy.
func Credentialed(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = NoRedirect
	return &cc
}

// maxRedirects is as many redirects as net/http's default policy follows.
const maxRedirects = 10

// CheckRedirect is an http.Client's CheckRedirect for a client that follows redirects: each
// target is judged by Named from the URL that redirected to it, and at most maxRedirects are
// followed.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return Named(via[len(via)-1].URL.String(), req.URL.String())
}

// Connection bounds of Transport's dialer.
const (
	connectTimeout = 30 * time.Second
	keepAlive      = 30 * time.Second
)

// Pool bounds of Transport, per host (scheme, host and port) a learnt URL names.
const (
	// maxConnsPerHost bounds the connections open at once to one host, dialling and idle
	// included: a host that answers slowly, or never, holds at most this many sockets and
	// their goroutines however many callers' requests (one refresh per caller, one sign-in per
	// user) wait on it; the others wait for a free connection within their own deadline.
	maxConnsPerHost = 32
	// maxIdleConnsPerHost bounds the connections kept alive to one host between requests,
	// stated rather than left to net/http's default of 2, which closes and dials again after
	// every burst of concurrent requests.
	maxIdleConnsPerHost = 8
)

// Transport returns a clone of http.DefaultTransport (HTTP/2, timeouts) whose every connection p
// judges. It has no proxy: through one (HTTPS_PROXY), p would judge only the proxy's address
// and the proxy would resolve the learnt name itself, so a public name answering 127.0.0.1 or
// 169.254.169.254 would reach what p refuses; and packages read no environment (the backends'
// and the tracing exporter's transports have no proxy either). d dials; nil is a dialer with
// the default transport's timeouts and the system's resolver (tests give one with their own
// resolver). At most maxConnsPerHost connections to one host are open at once, at most
// maxIdleConnsPerHost of them idle.
func (p *Policy) Transport(d *net.Dialer) *http.Transport {
	if d == nil {
		d = &net.Dialer{Timeout: connectTimeout, KeepAlive: keepAlive}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.Dial(d)
	t.MaxConnsPerHost, t.MaxIdleConnsPerHost = maxConnsPerHost, maxIdleConnsPerHost
	return t
}
