package dpop

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// errURL is the one error of NormalizeURL: which part is wrong is not worth telling a client.
var errURL = errors.New("dpop: htu is not an absolute http(s) URL without query or fragment")

// NormalizeURL puts an http(s) URL in the form htu values are compared in (RFC 9449 §4.3 step
// 9): the syntax-based and scheme-based normalisations of RFC 3986 §6.2.2 and §6.2.3 — scheme
// and host in lower case, the default port dropped, percent-encodings of unreserved characters
// decoded and the others' hex in upper case, dot segments removed, an empty path as "/". An htu
// with a query or fragment, user information, or another scheme is refused: RFC 9449 §4.2 has
// htu without query and fragment, and an endpoint's configured URL must have none. A proof's htu
// is compared without its query and fragment (checkRequest).
func NormalizeURL(raw string) (string, error) {
	if strings.ContainsAny(raw, "?#") {
		return "", errURL
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", errURL
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errURL
	}
	if !validHost(strings.ToLower(u.Hostname())) {
		return "", errURL
	}
	path, ok := normalizeEscapes(u.EscapedPath())
	if !ok {
		return "", errURL
	}
	return scheme + "://" + Authority(scheme, u) + removeDotSegments(path), nil
}

// Authority is u's host and port as RFC 3986 §6.2.2.1 and §6.2.3 normalise them for scheme
// (http or https, in lower case): the host in lower case, an IPv6 literal in brackets, and the
// scheme's default port, or an empty one, left out.
func Authority(scheme string, u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if port != "" {
		return net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// withoutQuery is raw up to its query or fragment, whichever comes first (RFC 3986 §3: the
// path ends at the first "?" or "#").
func withoutQuery(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// validHost accepts an IP literal or a registered name of unreserved characters: what an
// endpoint's public URL can have, so nothing else needs a normal form.
func validHost(h string) bool {
	if strings.Contains(h, ":") {
		return net.ParseIP(h) != nil
	}
	for i := 0; i < len(h); i++ {
		if !unreserved(h[i]) {
			return false
		}
	}
	return h != ""
}

// normalizeEscapes decodes percent-encoded unreserved characters and upper-cases the hex digits
// of the other percent-encodings (RFC 3986 §6.2.2.1, §6.2.2.2).
func normalizeEscapes(p string) (string, bool) {
	if !strings.Contains(p, "%") {
		return p, true
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(p) || unhex(p[i+1]) < 0 || unhex(p[i+2]) < 0 {
			return "", false
		}
		v := byte(unhex(p[i+1])<<4 | unhex(p[i+2]))
		if unreserved(v) {
			b.WriteByte(v)
		} else {
			const hexUpper = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hexUpper[v>>4])
			b.WriteByte(hexUpper[v&15])
		}
		i += 2
	}
	return b.String(), true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments is RFC 3986 §5.2.4 for an absolute path; an empty path becomes "/"
// (§6.2.3).
func removeDotSegments(p string) string {
	if p == "" {
		return "/"
	}
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")[1:]
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
