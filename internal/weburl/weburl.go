// Package weburl reads an http or https URL's host as a browser does (the WHATWG URL
// standard), so that what the gateway checks of a link (an allowlisted host, a URL-mode
// elicitation's page) is the host the browser that opens it goes to. Go's net/url and the
// text of a link read a host as it is written; a browser removes tabs and line breaks from the
// whole URL, ends the authority at a backslash as at a slash, percent-decodes the host, maps
// it through IDNA (upper case, fullwidth forms, the ideographic full stop, compatibility
// characters) to its ASCII form, reads a host that ends in a number as an IPv4 address in
// any form inet_aton takes (0x7f.1, 2130706433), and refuses a host holding a forbidden code
// point, a zone in an IPv6 literal, or a label IDNA refuses.
package weburl

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrNotAURL is an input a browser does not parse as an http or https URL with a host.
var ErrNotAURL = errors.New("weburl: not an http(s) URL a browser opens")

// URL is what a browser reads of an http or https URL.
type URL struct {
	// Scheme is "http" or "https".
	Scheme string
	// User is the user information before the host, "" when there is none.
	User string
	// Host is the host as the browser serialises it: an ASCII domain (lower case, punycode),
	// a dotted-decimal IPv4 address, or an IPv6 literal in brackets.
	Host string
	// RawHost is the host as written (before the port), after the removals above.
	RawHost string
}

// Parse reads s as a browser reads an http or https URL (the WHATWG basic URL parser, as far as
// the scheme, the user information and the host).
func Parse(s string) (*URL, error) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return nil, ErrNotAURL
	}
	u := &URL{Scheme: strings.ToLower(s[:colon])}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, ErrNotAURL
	}
	rest := strings.TrimLeft(s[colon+1:], `/\`)
	auth := rest
	if k := strings.IndexAny(rest, `/\?#`); k >= 0 {
		auth = rest[:k]
	}
	if k := strings.LastIndexByte(auth, '@'); k >= 0 {
		u.User, auth = auth[:k], auth[k+1:]
		if u.User == "" {
			u.User = "@" // "https://@host": user information, if empty
		}
	}
	u.RawHost = auth
	if k, ok := portColon(auth); !ok {
		return nil, ErrNotAURL
	} else if k >= 0 {
		if !validPort(auth[k+1:]) {
			return nil, ErrNotAURL
		}
		u.RawHost = auth[:k]
	}
	if u.RawHost == "" {
		return nil, ErrNotAURL
	}
	h, err := Host(u.RawHost)
	if err != nil {
		return nil, err
	}
	u.Host = h
	return u, nil
}

// portColon is the index of the colon that starts the port of the authority a (after an IPv6
// literal's brackets), or -1; not ok when something else follows the literal.
func portColon(a string) (int, bool) {
	if strings.HasPrefix(a, "[") {
		k := strings.IndexByte(a, ']')
		switch {
		case k < 0 || k+1 == len(a):
			return -1, true
		case a[k+1] != ':':
			return 0, false
		}
		return k + 1, true
	}
	return strings.IndexByte(a, ':'), true
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(strings.TrimLeft(p, "0") + "0")
	return err == nil && n/10 <= 65535
}

// profile is UTS #46 processing as the URL standard's domain to ASCII does it, beStrict false:
// nontransitional, hyphens not checked, STD3 rules off (the URL standard forbids its own set of
// code points afterwards), the bidi and joiner rules on, no DNS length check.
func profile() *idna.Profile {
	return idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false),
		idna.CheckHyphens(false), idna.BidiRule(), idna.CheckJoiners(true), idna.VerifyDNSLength(false))
}

// Host reads a special URL's host as a browser does (the WHATWG host parser), returning its
// serialisation: an IPv6 literal compressed in brackets, an IPv4 address in dotted-decimal
// form, or the ASCII domain.
func Host(h string) (string, error) {
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "", ErrNotAURL
		}
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" || strings.ContainsRune(h, '%') {
			return "", ErrNotAURL // a browser reads no zone
		}
		if a.Is4In6() {
			b := a.As16()
			return "[::ffff:" + strconv.FormatUint(uint64(b[12])<<8|uint64(b[13]), 16) + ":" +
				strconv.FormatUint(uint64(b[14])<<8|uint64(b[15]), 16) + "]", nil
		}
		return "[" + a.String() + "]", nil
	}
	domain := percentDecode(h)
	if !utf8.ValidString(domain) {
		domain = strings.ToValidUTF8(domain, "\uFFFD") // as the standard's UTF-8 decode without BOM
	}
	ascii, err := toASCII(domain)
	if err != nil || ascii == "" {
		return "", ErrNotAURL
	}
	for i := 0; i < len(ascii); i++ {
		if forbiddenDomain(ascii[i]) {
			return "", ErrNotAURL
		}
	}
	if endsInNumber(ascii) {
		return ipv4(ascii)
	}
	return ascii, nil
}

// toASCII is the URL standard's domain to ASCII: UTS #46 ToASCII, which does nothing to an
// ASCII domain but lower-case it (a browser keeps an "xn--" label that does not decode, too).
func toASCII(d string) (string, error) {
	for i := 0; i < len(d); i++ {
		if d[i] >= utf8.RuneSelf {
			return profile().ToASCII(d)
		}
	}
	return strings.ToLower(d), nil
}

// forbiddenDomain reports whether c is a forbidden domain code point (ASCII ones: the rest is
// punycode after ToASCII).
func forbiddenDomain(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte(`#%/:<>?@[\]^|`, c) >= 0
}

// percentDecode decodes every %XX of s (other '%' are kept, as the standard does).
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// endsInNumber reports whether the last label of d (after a trailing dot, the one before it)
// is a number as the IPv4 parser reads it: decimal digits, or 0x and hex digits.
func endsInNumber(d string) bool {
	labels := strings.Split(d, ".")
	last := labels[len(labels)-1]
	if last == "" && len(labels) > 1 {
		last = labels[len(labels)-2]
	}
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return false
}

// ipv4 is the WHATWG IPv4 parser: up to four numbers, each decimal, octal (a leading 0) or hex
// (0x), the last filling the bytes the others leave.
func ipv4(d string) (string, error) {
	parts := strings.Split(d, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", ErrNotAURL
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", ErrNotAURL
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", ErrNotAURL
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", ErrNotAURL
	}
	addr := last
	for i, n := range nums[:len(nums)-1] {
		addr += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(addr >> 24), byte(addr >> 16), byte(addr >> 8), byte(addr)}).String(), nil
}

func ipv4Number(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil && n <= 1<<32
}
