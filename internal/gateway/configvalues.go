package gateway

import (
	"fmt"
	"net/http"

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

// redacted is err, if any, with every URL its text quotes written as configerr.URL writes it
// (configerr.Redact): a setting's value is quoted in its error, and a URL can carry a credential
// in its user information ("redis://:pw@host"), its query ("?key=") or its path (a webhook's
// token), which must not reach a terminal, a CI log or a log collector. Every configuration
// error the gateway prints or logs (check-config, serve's start, a reload refused) goes
// through it.
func redacted(err error) error { return configerr.Redact(err) }
