package mcphttp

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// CORS for the MCP endpoints: a page of an origin the operator listed in server.allowedOrigins
// (or any, with "*") may call them from a browser. Every request it sends needs a preflight
// (Content-Type application/json, Authorization and the Mcp-* headers are not CORS-safelisted),
// and it reads an answer only when that answer names its origin. Origins the loopback rule
// admits without being listed (a page on another loopback port) get no CORS: a page on
// localhost cannot drive a local gateway, which may run without authentication.

// corsExposed are the response headers a page may read besides the safelisted ones: the 401
// challenge (where to get a token), Retry-After, the request id and a pre-2026 session.
const corsExposed = "WWW-Authenticate, Retry-After, " + mcpheader.RequestID + ", " + mcpheader.SessionID

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer.
const corsMaxAge = "600"

// maxCORSHeaders bounds the header names one preflight may ask for.
const maxCORSHeaders = 64

// corsOrigin is the one Origin of r when a page of it may read the endpoint's answers, else "".
func (p originPolicy) corsOrigin(r *http.Request) string {
	origins := r.Header.Values("Origin")
	if len(origins) != 1 || !(p.any || p.allowed[strings.ToLower(origins[0])]) {
		return ""
	}
	return origins[0]
}

// allowCORS lets the page that sent r read its answer, when its origin may (corsOrigin).
func (p originPolicy) allowCORS(r *http.Request, h http.Header) {
	if origin := p.corsOrigin(r); origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", corsExposed)
		h.Add("Vary", "Origin")
	}
}

// corsPreflight answers OPTIONS at an MCP endpoint whose methods are methods: a browser's
// preflight from an origin that may call it gets 204 with the CORS headers; a preflight from
// another origin, for another method, of a request header that is not a token, or reaching a
// loopback listener through another host name (DNS rebinding), gets 403 without them; an
// OPTIONS that is no preflight gets the 405 of every other method.
func corsPreflight(p originPolicy, methods []string) echo.HandlerFunc {
	allow := strings.Join(methods, ", ")
	return func(c echo.Context) error {
		r := c.Request()
		asked := r.Header.Values("Access-Control-Request-Method")
		if len(r.Header.Values("Origin")) == 0 || len(asked) == 0 {
			return methodNotAllowed(c)
		}
		h := c.Response().Header()
		h.Add("Vary", "Origin")
		origin := p.corsOrigin(r)
		names, ok := corsRequestHeaders(r.Header.Values("Access-Control-Request-Headers"))
		if origin == "" || len(asked) != 1 || !slices.Contains(methods, asked[0]) || !ok ||
			p.loopback && !loopback.HostPort(r.Host) {
			return c.NoContent(http.StatusForbidden)
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", allow)
		if names != "" {
			h.Set("Access-Control-Allow-Headers", names)
		}
		h.Set("Access-Control-Max-Age", corsMaxAge)
		return c.NoContent(http.StatusNoContent)
	}
}

// corsRequestHeaders is the header names a preflight asks for, as one list to allow, and whether
// each is an HTTP token and they are at most maxCORSHeaders. Every header is checked as the
// request arrives (stage guard and stage headers), whatever the preflight allowed.
func corsRequestHeaders(values []string) (string, bool) {
	var names []string
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !isToken(name) || len(names) == maxCORSHeaders {
				return "", false
			}
			names = append(names, strings.ToLower(name))
		}
	}
	return strings.Join(names, ", "), true
}

// endpointMethods are the methods a page may send to an MCP endpoint: POST, and GET where the
// pre-2026 edge serves its stream.
func endpointMethods(edge EraEdge) []string {
	if edge != nil {
		return []string{http.MethodPost, http.MethodGet}
	}
	return []string{http.MethodPost}
}
