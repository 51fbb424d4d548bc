// Package clientaddr finds the address of the client behind a request, through the proxies the
// operator trusts, and bounds the work one client address may make a replica do before it is
// authenticated (Limiter).
package clientaddr

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Headers a trusted proxy may name the client in (Config.Header).
const (
	// HeaderXForwardedFor is X-Forwarded-For: comma-separated addresses, each proxy appending
	// the address of its peer. Every common ingress and load balancer writes it.
	HeaderXForwardedFor = "X-Forwarded-For"
	// HeaderForwarded is RFC 7239 Forwarded: comma-separated elements whose for= parameter is
	// the address of the proxy's peer.
	HeaderForwarded = "Forwarded"
)

// DefaultIPv6PrefixBits groups IPv6 clients by their /64: one subscriber usually holds a whole
// /64 (RFC 6177), and can pick any address in it.
const DefaultIPv6PrefixBits = 64

// Config says which peers are proxies whose headers are believed, and how addresses group.
type Config struct {
	// TrustedProxies are CIDRs (or single addresses) of the proxies in front of the gateway.
	// Empty: the TCP peer is the client, and no header is read.
	TrustedProxies []string
	// Header is the header the trusted proxies name the client in: HeaderXForwardedFor (the
	// default) or HeaderForwarded. One only: a header the proxy does not write passes through
	// it as the client sent it.
	Header string
	// IPv6PrefixBits is the prefix length IPv6 clients are grouped by (1 to 128); IPv4 clients
	// are grouped by their address (/32). Default DefaultIPv6PrefixBits.
	IPv6PrefixBits int
}

// Resolver finds a request's client address (Client) and its group (Key).
type Resolver struct {
	trusted   []netip.Prefix
	forwarded bool // Header is Forwarded
	v6bits    int
}

// ParsePrefix parses a trusted-proxy entry: a CIDR, or a single address (its /32 or /128).
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or fd00::/8", s)
		}
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q: a zone is not allowed", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR such as 10.0.0.0/8 nor an address", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Validate reports every problem of c, keyed by the setting's name relative to its block
// (trustedProxies[1], clientAddressHeader, clientIPv6Prefix), for the caller to prefix.
func (c Config) Validate() map[string]error {
	errs := map[string]error{}
	for i, s := range c.TrustedProxies {
		if _, err := ParsePrefix(s); err != nil {
			errs[fmt.Sprintf("trustedProxies[%d]", i)] = err
		}
	}
	if c.Header != "" && !strings.EqualFold(c.Header, HeaderXForwardedFor) && !strings.EqualFold(c.Header, HeaderForwarded) {
		errs["clientAddressHeader"] = fmt.Errorf("%q: want %s or %s", c.Header, HeaderXForwardedFor, HeaderForwarded)
	}
	if c.IPv6PrefixBits < 0 || c.IPv6PrefixBits > 128 {
		errs["clientIPv6Prefix"] = errors.New("want a prefix length from 1 to 128")
	}
	return errs
}

// New compiles c; it fails on what Validate reports.
func New(c Config) (*Resolver, error) {
	r := &Resolver{forwarded: strings.EqualFold(c.Header, HeaderForwarded), v6bits: c.IPv6PrefixBits}
	if r.v6bits == 0 {
		r.v6bits = DefaultIPv6PrefixBits
	}
	if r.v6bits < 0 || r.v6bits > 128 {
		return nil, errors.New("clientaddr: IPv6 prefix length out of range")
	}
	for _, s := range c.TrustedProxies {
		p, err := ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		r.trusted = append(r.trusted, p)
	}
	return r, nil
}

// TrustsProxies reports whether any proxy is trusted, that is whether a header is ever read.
func (r *Resolver) TrustsProxies() bool { return len(r.trusted) > 0 }

// trusts reports whether a is the address of a trusted proxy.
func (r *Resolver) trusts(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the address of req's client: its TCP peer, unless the peer is a trusted proxy;
// then, walking the proxy header from right to left, the first address that is not a trusted
// proxy's. An entry that is not an address (a proxy's "unknown", an obfuscated identifier,
// garbage) stops the walk at the last trusted hop, whose address is then the client's: those
// behind it share one bound rather than letting a header pick one. A header from a peer that
// is not trusted is never read. The zero Addr when RemoteAddr does not parse (not a TCP peer).
func (r *Resolver) Client(req *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(req.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	hop := peer.Addr().Unmap()
	if len(r.trusted) == 0 || !r.trusts(hop) {
		return hop
	}
	name := HeaderXForwardedFor
	if r.forwarded {
		name = HeaderForwarded
	}
	values := req.Header[name]
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			var elem string
			v, elem = lastElement(v)
			a, ok := r.parseElement(elem)
			if !ok {
				return hop
			}
			if !r.trusts(a) {
				return a
			}
			hop = a
		}
	}
	// Every hop is a trusted proxy: the leftmost is the client (a request from inside).
	return hop
}

// lastElement splits off the last comma-separated element of v, outside double quotes.
func lastElement(v string) (rest, elem string) {
	quoted := false
	for i := len(v) - 1; i >= 0; i-- {
		switch v[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				return v[:i], strings.TrimSpace(v[i+1:])
			}
		}
	}
	return "", strings.TrimSpace(v)
}

// parseElement reads the address of one header element.
func (r *Resolver) parseElement(elem string) (netip.Addr, bool) {
	if r.forwarded {
		var ok bool
		if elem, ok = forwardedFor(elem); !ok {
			return netip.Addr{}, false
		}
	}
	return parseNode(elem)
}

// forwardedFor returns the value of the for= parameter of a Forwarded element, unquoted.
func forwardedFor(elem string) (string, bool) {
	for elem != "" {
		var pair string
		pair, elem, _ = strings.Cut(elem, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		return v, true
	}
	return "", false
}

// parseNode reads an address as proxies write it: 192.0.2.1, 192.0.2.1:4711, 2001:db8::1 or
// [2001:db8::1]:4711. Zones are refused: no client is reached through one.
func parseNode(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), a.Zone() == ""
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		return a.Unmap(), err == nil && a.Is6() && a.Zone() == ""
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil || ap.Addr().Zone() != "" {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// Key is the group a client address is bounded as: the address itself for IPv4, its prefix of
// the configured length for IPv6.
func (r *Resolver) Key(a netip.Addr) netip.Prefix {
	bits := 32
	if a.Is6() {
		bits = r.v6bits
	}
	p, _ := a.Prefix(bits)
	return p
}
