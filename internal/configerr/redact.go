package configerr

import (
	"errors"
	"net/url"
	"strings"
)

// Redacted is what stands in, in a quoted URL, for its user information, for each value of its
// query and for each segment of its path that may be a credential (pathsecret.go).
const Redacted = "REDACTED"

// URL is how a message quotes the configured URL raw: its scheme, host, port and path, which an
// operator recognises it by, with its user information replaced, each value of its query
// replaced (the names stay: "?key=REDACTED"), each path segment that may be a credential
// replaced (a webhook's token, a signature, a capability's random part: pathsecret.go) and its
// fragment dropped. Operators put credentials in all four (redis://:password@h, ?key=,
// ?access_token=, ?sig=, https://hooks.slack.com/services/T…/B…/<token>), and a message
// reaches terminals, CI logs and log collectors. It is RedactURLs applied to the one value.
// Every message, log line, report and status the gateway shows a URL in goes through it.
func URL(raw string) string { return RedactURLs(raw) }

// RedactURLs is s, a message, with every URL in it ("scheme://", or "scheme:\/\/" as some
// JSON encoders write it, onwards, to the end of the quoted value or to white space) written as
// URL writes it. It works on the text, not on a parsed URL, so that a URL that fails to parse,
// which is when an error quotes it, is hidden too, and so that an error from another package
// repeating the URL (a *url.Error, an HTTP client's error) is hidden however it is wrapped.
func RedactURLs(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, escapedSlashes) {
		return s
	}
	var b strings.Builder
	for {
		i, sep := nextURL(s)
		if i < 0 {
			break
		}
		start := i + len(sep)
		b.WriteString(s[:start])
		s = s[start:]
		end := valueEnd(s, 0)
		if sep == escapedSlashes {
			// Hidden as the URL written plainly is, and written back escaped.
			b.WriteString(strings.ReplaceAll(redactOne(strings.ReplaceAll(s[:end], `\/`, "/")), "/", `\/`))
		} else {
			b.WriteString(redactOne(s[:end]))
		}
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

// escapedSlashes is "://" in a JSON text whose encoder escapes '/' (PHP's json_encode, some Java
// encoders: "https:\/\/h\/p"), as an error that quotes a server's JSON body carries a URL.
const escapedSlashes = `:\/\/`

// nextURL is where the first URL of s has its "://", or its escapedSlashes, and which of the two.
func nextURL(s string) (int, string) {
	i, j := strings.Index(s, "://"), strings.Index(s, escapedSlashes)
	if j >= 0 && (i < 0 || j < i) {
		return j, escapedSlashes
	}
	return i, "://"
}

// redactOne writes v, a URL after its "scheme://" up to where its quoted value ends, as URL
// does.
func redactOne(v string) string {
	rest := v
	var out strings.Builder
	if at := userinfoEnd(v); at >= 0 {
		out.WriteString(Redacted + "@")
		rest = v[at+1:]
	}
	if f := strings.IndexByte(rest, '#'); f >= 0 {
		rest = rest[:f]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	writePath(&out, path)
	if !hasQuery {
		return out.String()
	}
	out.WriteByte('?')
	for j, p := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		if j > 0 {
			out.WriteByte('&')
		}
		if name, _, ok := strings.Cut(p, "="); ok {
			out.WriteString(name + "=" + Redacted)
		} else {
			out.WriteString(Redacted) // a bare value (?TOKEN) may be the credential itself
		}
	}
	return out.String()
}

// userinfoEnd is the index of the '@' that ends v's user information, or -1 when v has none.
// A user name runs to the first '@' before any ':', '/', '?' or '#'. A password runs to the
// last '@' of the value, not to the first '/', '?', '#' or '@' as a URL parser would read it: a
// generated password written unencoded often holds those, and the URL then fails to parse.
// When v parses as a URL without user information, with a path before its first '@' and no '@'
// in that path, the '@' is in its query ("h:443/p?a=b@c") and v has none; nor has it when it
// parses with a port and every '@' of its path begins a segment ("h:443/users/@me", "/@alice"),
// a path's way of naming a user that a password of digits, '/', and more ending in '/' would
// be the only other reading of. A password of digits followed by '?', '#' or '/' and anything
// but '/' before its '@' ("u:12?x@h", "u:12/x@h") parses too, as a port, and is still hidden.
func userinfoEnd(v string) int {
	if strings.HasPrefix(v, "[") {
		return -1 // an IPv6 host, or a pattern ("[user:password@]host") that no user information precedes
	}
	u := strings.IndexAny(v, ":/?#@")
	switch {
	case u < 0:
		return -1
	case v[u] == '@':
		return u
	case v[u] != ':':
		return -1
	}
	at := strings.LastIndexByte(v, '@')
	if at < 0 {
		return -1
	}
	first := strings.IndexByte(v, '@')
	if p, err := url.Parse("x://" + v); err == nil && p.User == nil && strings.Contains(v[:first], "/") {
		if path := p.EscapedPath(); !strings.Contains(path, "@") || p.Port() != "" && atsBeginSegments(path) {
			return -1
		}
	}
	return at
}

// atsBeginSegments reports whether every '@' of path follows a '/'.
func atsBeginSegments(path string) bool {
	for i := strings.IndexByte(path, '@'); i >= 0; i = strings.IndexByte(path, '@') {
		if i == 0 || path[i-1] != '/' {
			return false
		}
		path = path[i+1:]
	}
	return true
}

// valueEnd is where the value quoted in s that goes on at s[i] ends: at a '"' that no backslash
// escapes, or at white space, or at the end of s.
func valueEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"', ' ', '\n', '\t', '\r':
			return i
		}
	}
	return len(s)
}

// Redact returns err, or nil, with its text written as RedactURLs writes a message: the error
// to log, report or return of a client sending to a configured URL (net/http's errors repeat
// the URL whole, a *url.Error, and libraries quote it in their own words), so that a URL
// reaches no log line, status or answer but as URL quotes it. The *url.Error in err's chain,
// if any, has its URL quoted so too, for a caller that takes it out with errors.As; errors.Is
// and errors.As otherwise see err as it was.
func Redact(err error) error {
	if err == nil {
		return nil
	}
	if _, done := err.(redactedError); done {
		return err
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		// Written only when it changes: an error quoted once may be shared by then (a failed
		// fetch every waiter gets), and a reader of it must not race a write of the same text.
		if u := URL(ue.URL); u != ue.URL {
			ue.URL = u
		}
	}
	return redactedError{err}
}

// redactedError is an error whose text is RedactURLs of its cause's.
type redactedError struct{ err error }

func (e redactedError) Error() string { return RedactURLs(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
