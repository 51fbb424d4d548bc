package mcphttp

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/webpage"
)

// guard is stage guard: the transport-level checks that need nothing but the HTTP request. It
// reads the body (bounded) so that no later stage touches the connection.
func (s *Server) guard(x *request) error {
	r := x.r
	if err := s.origins.check(r); err != nil {
		return err
	}
	if err := jsonBody(r.Header); err != nil {
		return err
	}
	if !acceptsJSONAndSSE(r.Header.Values("Accept")) {
		return rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"Accept must list both application/json and text/event-stream"))
	}
	return s.readBody(x)
}

var errBodyTooLarge = &Error{
	Status:  http.StatusRequestEntityTooLarge,
	RPC:     jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Request body too large"),
	Outcome: outcomeClientError,
}

var errBodyTimeout = &Error{
	Status:  http.StatusRequestTimeout,
	RPC:     jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Request body not received in time"),
	Outcome: outcomeClientError,
	Header:  http.Header{"Connection": {"close"}},
}

var errBodiesBusy = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
	RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many request bytes in flight; retry later"),
	Header: http.Header{"Retry-After": {"1"}}}

// readBody reads at most MaxBodyBytes; a declared or actual larger body is 413 without reading
// (or buffering) the rest. The buffer grows as bytes arrive and is charged to the replica's
// budget for request bodies (503 when full), so a declared Content-Length reserves nothing; the
// whole body must arrive within BodyReadTimeout (408, and the connection is closed).
func (s *Server) readBody(x *request) error {
	r := x.r
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		return errBodyTooLarge
	}
	var rc *http.ResponseController
	if t := s.cfg.BodyReadTimeout; t > 0 {
		rc = http.NewResponseController(x.client.w)
		if rc.SetReadDeadline(time.Now().Add(t)) != nil {
			rc = nil // not supported by this connection: the read is unbounded, as before
		}
	}
	budget := s.bodies
	if share := x.unauth.Bodies(); share != nil {
		budget = share
	}
	buf, err := bodyread.Read(r.Body, limit, budget)
	if rc != nil && err == nil {
		// Lifted at once, so a call or a stream that outlasts it keeps its connection: net/http
		// reads to the body's end after the handler, and that read would fail on a passed
		// deadline. (Its background read, which notices a client that goes away, clears the
		// deadline itself.) A body not read whole keeps it: net/http's read of the rest after
		// the handler (up to 256 KiB) then ends with the deadline and the connection is closed;
		// lifted, that read would wait for bytes a stalled client never sends, holding the
		// connection without any timeout after its 408.
		_ = rc.SetReadDeadline(time.Time{})
	}
	var ne net.Error
	switch {
	case err == nil:
		x.in.bodyBuf, x.in.body = buf, buf.B
		return nil
	case errors.Is(err, bodyread.ErrTooLarge):
		return errBodyTooLarge
	case errors.Is(err, bodyread.ErrShare):
		return s.clients.bodiesBusy()
	case errors.Is(err, bodyread.ErrBudget):
		s.log.WarnContext(x.ctx, "request body refused: the replica's budget for request bodies is spent",
			"limit_bytes", s.bodies.Max())
		return errBodiesBusy
	case errors.As(err, &ne) && ne.Timeout():
		return errBodyTimeout
	}
	return &Error{Status: http.StatusBadRequest, RPC: jsonrpc.NewError(jsonrpc.CodeParseError,
		"Parse error: could not read the request body"), Outcome: outcomeClientError}
}

// jsonBody is the 415 of a request whose headers do not say its body is JSON read as sent, nil
// when they do: one Content-Type, application/json, and no content coding but identity. The
// gateway decodes no coding (RFC 9110 §8.4), so a compressed body would otherwise be refused as
// invalid JSON, which sends its client looking in the wrong place, and a plain body labelled
// compressed would be served as bytes that a reader honouring its label (a proxy in front, a
// log of the request) never sees. The 415 of a coding names the one accepted in Accept-Encoding
// (RFC 9110 §15.5.16).
func jsonBody(h http.Header) *Error {
	cts := h.Values("Content-Type")
	if len(cts) != 1 || !isJSONContentType(cts[0]) {
		return unsupportedBody("Content-Type must be application/json, given once", nil)
	}
	for _, v := range h.Values("Content-Encoding") {
		for v != "" {
			var coding string
			coding, v, _ = strings.Cut(v, ",")
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return unsupportedBody("Content-Encoding is not accepted: send the body uncompressed",
					http.Header{"Accept-Encoding": {"identity"}})
			}
		}
	}
	return nil
}

// unsupportedBody is a 415 saying why.
func unsupportedBody(why string, h http.Header) *Error {
	return &Error{Status: http.StatusUnsupportedMediaType, Outcome: outcomeClientError, Header: h,
		RPC: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, why)}
}

func isJSONContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// acceptsJSONAndSSE reports whether the Accept header values list both media types the
// Streamable HTTP transport requires (docs/protocol.md §2.1). Wildcards count: */* accepts both; a type
// with q=0 is refused, and stays refused whatever wildcard also covers it (accepted).
func acceptsJSONAndSSE(values []string) bool {
	json, sse := accepted(values)
	return json && sse
}

// accepted reports whether the Accept header values make application/json and
// text/event-stream acceptable. As RFC 9110 §12.5.1 says, the most specific media range that
// matches a type decides its quality: "application/json;q=0, */*" refuses JSON, and
// "text/*;q=0, text/event-stream" accepts SSE. Two ranges equally specific that disagree refuse
// it. It parses by hand because it runs on every request and mime.ParseMediaType allocates.
func accepted(values []string) (json, sse bool) {
	j, s := acceptMatch{level: -1}, acceptMatch{level: -1}
	for _, v := range values {
		for v != "" {
			var part string
			part, v, _ = strings.Cut(v, ",")
			mt, params, _ := strings.Cut(part, ";")
			ok := !refusedByQ(params)
			switch mt = strings.TrimSpace(mt); {
			case mt == "*/*":
				j.see(0, ok)
				s.see(0, ok)
			case strings.EqualFold(mt, "application/*"):
				j.see(1, ok)
			case strings.EqualFold(mt, "application/json"):
				j.see(2, ok)
			case strings.EqualFold(mt, "text/*"):
				s.see(1, ok)
			case strings.EqualFold(mt, "text/event-stream"):
				s.see(2, ok)
			}
		}
	}
	return j.ok, s.ok
}

// acceptMatch is what the Accept header says of one media type so far: how specific the most
// specific range that matched it is (-1 none, 0 */*, 1 type/*, 2 the type itself), and whether
// the ranges of that specificity accept it.
type acceptMatch struct {
	level int
	ok    bool
}

func (m *acceptMatch) see(level int, ok bool) {
	switch {
	case level > m.level:
		m.level, m.ok = level, ok
	case level == m.level:
		m.ok = m.ok && ok
	}
}

// refusedByQ reports whether media-type parameters carry a zero quality value (q=0, q=0.0, …).
func refusedByQ(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		val = strings.TrimSpace(val)
		return val != "" && strings.Trim(val, "0.") == "" && val[0] == '0'
	}
	return false
}

// originPolicy implements the Origin rule (docs/protocol.md §2.1: an Origin that is present and invalid is
// 403) and DNS-rebinding protection for loopback listeners.
type originPolicy struct {
	any      bool
	allowed  map[string]bool
	loopback bool // the listener is on a loopback address
}

func newOriginPolicy(cfg Config, loopback bool) originPolicy {
	p := originPolicy{allowed: map[string]bool{}, loopback: loopback}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			p.any = true
			continue
		}
		p.allowed[originKey(o)] = true
	}
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Host != "" {
		p.allowed[originKey(u.Scheme+"://"+u.Host)] = true
	}
	return p
}

// originKey is a configured origin as a browser sends it in Origin, which the check compares
// lower-cased: an http(s) origin serialised as browsers serialise it (no default port, the
// host in ASCII, an IPv6 literal in its short form: "https://bücher.example:443/" is sent
// "https://xn--bcher-kva.example"); another scheme's (a browser extension's) lower case,
// without a trailing slash.
func originKey(o string) string {
	if s, ok := webpage.SerialisedOrigin(o); ok {
		return s
	}
	return strings.TrimSuffix(strings.ToLower(o), "/")
}

var errForbiddenOrigin = &Error{Status: http.StatusForbidden, Outcome: outcomeDenied,
	RPC: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Forbidden: origin not allowed")}

// errForbiddenHost is the DNS-rebinding refusal: it names the Host, which the client sent (a
// name of its own for 127.0.0.1, or none, in HTTP/1.0), not an Origin, which it may not have.
var errForbiddenHost = &Error{Status: http.StatusForbidden, Outcome: outcomeDenied,
	RPC: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Forbidden: this endpoint listens on a loopback address; "+
		"the Host header must name it (localhost, 127.0.0.1 or [::1])")}

func (p originPolicy) check(r *http.Request) error {
	// A loopback listener reached through a non-loopback Host name is the signature of DNS
	// rebinding: a web page's name resolved to 127.0.0.1.
	if p.loopback && !loopback.HostPort(r.Host) {
		return errForbiddenHost
	}
	origins := r.Header.Values("Origin")
	if len(origins) > 1 {
		return errForbiddenOrigin
	}
	if len(origins) == 0 || p.any {
		return nil
	}
	origin := origins[0]
	if p.allowed[strings.ToLower(origin)] {
		return nil
	}
	if u, err := url.Parse(origin); err == nil && p.loopback && loopback.HostPort(u.Host) {
		return nil
	}
	return errForbiddenOrigin
}

// AcceptsEventStream reports whether Accept header values list text/event-stream (or a wildcard
// covering it, and no more specific range refusing it): a GET stream's precondition.
func AcceptsEventStream(values []string) bool {
	_, sse := accepted(values)
	return sse
}
