package gateway

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// validateHeaderNames refuses a header configured twice under names that differ only in case
// (Authorization and authorization): HTTP header names ignore case, so a request could carry
// only one of the values, and which one would be left to the order of a map, possibly
// different on each replica. Every map of headers the file sets is checked: the backends', the
// interceptors' and the span exporter's.
func (c *Config) validateHeaderNames() []error {
	var errs []error
	for i, u := range c.Upstreams {
		errs = append(errs, sameHeaderTwice(fmt.Sprintf("upstreams[%d].headers", i), u.Headers)...)
	}
	for i, ic := range c.Interceptors {
		errs = append(errs, sameHeaderTwice(fmt.Sprintf("interceptors[%d].headers", i), ic.Headers)...)
	}
	return append(errs, sameHeaderTwice("tracing.headers", c.Tracing.Headers)...)
}

// sameHeaderTwice reports each name of headers, at path, that names a header an earlier name
// (in sorted order) already names. Values are never printed.
func sameHeaderTwice(path string, headers map[string]Secret) []error {
	var errs []error
	first := make(map[string]string, len(headers))
	for _, name := range sortedKeys(headers) {
		canonical := http.CanonicalHeaderKey(name)
		if earlier, ok := first[canonical]; ok {
			errs = append(errs, configerr.At(path+"."+name, "names the same header as %q (header names ignore case)", earlier))
			continue
		}
		first[canonical] = name
	}
	return errs
}

// redactedError is a configuration error whose text shows no password of a URL: a setting's
// value is quoted in its error, and a URL with user information ("redis://:pw@host",
// "https://user:pw@host") carries a credential, which must not reach a terminal or a CI log.
type redactedError struct{ err error }

func (e redactedError) Error() string { return redactURLPasswords(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// redactURLPasswords replaces the password of every "scheme://user:password@" in s with xxxxx,
// as url.URL.Redacted does; the rest of each URL stays, to be recognised. The password runs to
// the last '@' before the end of the value (a '"' not escaped, or white space), not to the first
// '/', '?', '#' or '@' as a URL parser would read it: a generated password written unencoded
// often holds those, the URL then fails to parse, and that is when an error quotes it. A URL
// whose user name holds one of them has no password to hide (https://h/p?a=b:c@d).
func redactURLPasswords(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		start := i + len("://")
		b.WriteString(s[:start])
		s = s[start:]
		u := strings.IndexAny(s, ":/?#@\" \n\t")
		if u < 0 || s[u] != ':' {
			continue
		}
		at := strings.LastIndexByte(s[u:valueEnd(s, u)], '@')
		if at < 0 {
			continue
		}
		b.WriteString(s[:u] + ":xxxxx")
		s = s[u+at:]
	}
	b.WriteString(s)
	return b.String()
}

// valueEnd is where the value quoted in s that goes on at s[i] ends: at a '"' that no backslash
// escapes, or at white space, or at the end of s.
func valueEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"', ' ', '\n', '\t':
			return i
		}
	}
	return len(s)
}
