// Package loopback decides, in one place, whether a host or address names this machine's
// loopback interface. The gateway asks it where plain http is allowed only on loopback
// (issuer, token, approval and embedding URLs), where a listener counts as local (auth may be
// off, the explainer and pprof need no secret), and where a Host header on a loopback listener
// must be a loopback name (DNS rebinding).
//
// The answer must never be yes for something that can leave the machine, so the rule is the
// strictest sound one: only spellings that every resolver and URL parser agree are loopback.
// Each member of the family, decided:
//
//   - "localhost", in any ASCII case: RFC 6761 reserves it, and resolvers answer it from the
//     hosts file. Only ASCII letters fold: "localhoſt" (long s, which Unicode case folding maps
//     to "s") is another name, and IDNA would hand it to DNS.
//   - "localhost." (trailing dot), "sub.localhost", "localhost.evil.example", "localhostx": not
//     loopback. They are names that DNS may answer, and anything DNS answers is another
//     machine's to decide.
//   - An IPv4 address in 127.0.0.0/8, written as four decimal parts: loopback.
//   - 127.1, 2130706433, 0x7f.1, 0177.0.0.1: not loopback. inet_aton reads them as 127.0.0.1
//     while Go and URL parsers read them as names; a string two parsers disagree on is refused.
//   - ::1 in any IPv6 text form (0:0:0:0:0:0:0:1 too): loopback.
//   - ::ffff:127.0.0.1 (IPv4-mapped): not loopback. Some libraries call it loopback and some do
//     not (net/netip does not), and a listener bound to it depends on the kernel's dual-stack
//     setting.
//   - A zoned address (fe80::1%lo, ::1%lo): not loopback; a zone names an interface, and
//     link-local addresses reach the link.
//   - 0.0.0.0 and :: : not loopback. As a listener they bind every interface.
//   - The empty host: not loopback. As a listener (":8080") it binds every interface.
//
// Host takes a bare host (what url.URL.Hostname returns); HostPort takes a Host header or URL
// authority, with or without a port; Addr takes a listen address, whose port is required.
//
// Where loopback is what must be refused rather than what is allowed (a document from the
// internet naming a loopback endpoint), the sound rule is the widest, not the strictest: Maybe
// answers yes for every spelling that some resolver or parser could take to loopback.
package loopback

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Host reports whether host, without port or brackets, is "localhost" (ASCII case-insensitive)
// or a loopback IP literal, by the rules in the package comment.
func Host(host string) bool {
	if asciiEqualFold(host, "localhost") {
		return true
	}
	// netip.ParseAddr's error allocates, and the Host check runs on every request: a host with
	// a character no address has is a name.
	if strings.Trim(host, "0123456789abcdefABCDEF.:") != "" {
		return false
	}
	ip, err := netip.ParseAddr(host)
	// Is4In6 is "::ffff:127.0.0.1", which only some parsers call loopback; a zone names an
	// interface.
	return err == nil && !ip.Is4In6() && ip.Zone() == "" && ip.IsLoopback()
}

// HostPort reports whether hostport, a Host header or URL authority such as "localhost",
// "127.0.0.1:8080" or "[::1]:443", names a loopback host. The port may be absent; when present
// it must be digits. An IPv6 address must be in brackets, as it is in a Host header.
func HostPort(hostport string) bool {
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return false
		}
		host, port = hostport[1:end], hostport[end+1:]
		if port != "" && port[0] != ':' {
			return false
		}
		if !strings.Contains(host, ":") {
			return false // brackets hold only IPv6 literals
		}
	} else if i := strings.IndexByte(hostport, ':'); i >= 0 {
		host, port = hostport[:i], hostport[i:]
		if strings.Contains(host, ":") || strings.Contains(port[1:], ":") {
			return false // an unbracketed IPv6 literal is not a Host
		}
	} else if strings.Contains(hostport, "]") {
		return false
	}
	if port != "" && !digits(port[1:]) {
		return false
	}
	return Host(host)
}

// Addr reports whether addr, a listen address in net.Listen's host:port form, binds only
// loopback interfaces. An empty host (":8080") binds every interface and is not loopback.
func Addr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || (strings.HasPrefix(addr, "[") && !strings.Contains(host, ":")) {
		return false // "[localhost]:80" splits, but brackets hold only IPv6 literals
	}
	return Host(host)
}

// Maybe reports whether some resolver or parser could take host, without port or brackets, to
// this machine's loopback interface: everything Host accepts, and also names under localhost
// (RFC 6761 lets resolvers answer them with loopback), a trailing dot, Unicode case forms of
// "localhost", IPv4-mapped and zoned loopback addresses, inet_aton's shorthand (127.1,
// 2130706433, 0x7f.1), and every Unicode spelling whose dialled form (Dialled: "ℓocalhost",
// "ⓛocalhost", "①②⑦.0.0.1") is one of those. It is for refusing; a name that resolves to
// loopback through DNS is still beyond it, so a caller that must not reach loopback checks the
// dialed address too.
func Maybe(host string) bool {
	if d := Dialled(host); d != host && maybe(d) {
		return true
	}
	return maybe(host)
}

// Dialled is host, without port or brackets, as net/http dials it: a host that is not ASCII in
// its IDNA (UTS #46) lookup form, which maps compatibility characters ("ℓocalhost" and
// "ⓛocalhost" are dialled as localhost, "①②⑦.0.0.1" and fullwidth digits as 127.0.0.1), and an
// ASCII host as it is. A host IDNA refuses is returned as written (net/http refuses to dial it).
// Whoever judges a host that will be dialled judges this form: the text as written can name
// something else than what is reached.
func Dialled(host string) string {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				return a
			}
			return host
		}
	}
	return host
}

func maybe(host string) bool {
	if Host(host) {
		return true
	}
	h := strings.TrimSuffix(strings.Map(foldName, host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.WithZone("").Unmap().IsLoopback()
	}
	ip, ok := parseInetAton(h)
	return ok && ip[0] == 127
}

// parseInetAton reads the IPv4 forms inet_aton accepts: one to four parts, each decimal, octal
// (leading 0) or hex (0x), the last part filling the remaining bytes.
func parseInetAton(s string) ([4]byte, bool) {
	var out [4]byte
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return out, false
	}
	var vals []uint64
	for _, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		lp := strings.ToLower(p)
		if err != nil || strings.HasPrefix(lp, "0o") || strings.HasPrefix(lp, "0b") || strings.Contains(p, "_") {
			return out, false
		}
		vals = append(vals, v)
	}
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 255 {
			return out, false
		}
		out[i] = byte(vals[i])
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return out, false
	}
	for i := 3; i >= last; i-- {
		out[i] = byte(vals[last])
		vals[last] >>= 8
	}
	return out, true
}

// foldName maps r as a resolver that applies IDNA mapping might: fullwidth ASCII to ASCII, and
// every case form, including those only Unicode folds (U+017F to "s", U+212A to "k"), to lower
// case.
func foldName(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFEE0
	}
	switch r {
	case 'ſ':
		return 's'
	case '\u212A':
		return 'k'
	}
	return unicode.ToLower(r)
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// asciiEqualFold is strings.EqualFold over ASCII letters only: Unicode folding maps U+017F
// (ſ) to "s" and U+212A (Kelvin sign) to "k".
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
