package mcphttp

import (
	"context"
	"errors"
	"github.com/mcp-gateway/gateway/authz"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/tracing"
)

// request carries one client request through the pipeline. Each stage reads what earlier stages
// decoded and adds what it learns; none re-reads the body.
type request struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	ctx   context.Context
	start time.Time
	// requestID is kept apart from the response headers, which the keep-alive timer may be
	// writing concurrently.
	requestID      string
	requestIDValue []string // requestID as a header value, shared by the response and the backend request

	body    []byte
	bodyBuf *bodyread.Buffer // holds body; released when the request ends (server.go)
	req     *jsonrpc.Request
	params  *jsonrpc.Params
	meta    *jsonrpc.Meta
	h       *handler

	// filled by later stages, read by the access log and metrics
	upstream     string // the owning backend
	name         string // the namespaced name or URI the client used
	upstreamName string // the backend-side name or URI
	streamClosed func() // ends the open-SSE-streams gauge when the response was a stream
	principal    *authz.Principal
	token        string // the verified bearer token: only ever given to upstreams for token exchange
	subjectKey   string // see subject()
	decision     authz.Decision
	confirmed    bool        // the user approved this call (gateway confirmation)
	paramHeaders http.Header // tools/call: the Mcp-Param-* headers the backend gets (paramheaders.go)
	endSpan      tracing.End // ends the request's span; nil with tracing off or before it starts
	spanParent   string      // the traceparent of the gateway's own span, "" with tracing off

	// mu serializes writes between the handler and the keep-alive timer (keepalive.go).
	mu       sync.Mutex
	ka       *time.Timer
	done     bool // no more keep-alives: the final message is written or the handler is finishing
	status   int
	outcome  string
	sse      bool
	writeErr error // the first failed write: the response is over (respond.go)
}

// run is the request pipeline. The order is deliberate (STYLE.md "The request pipeline"):
//   - transport checks and the strict decode cost nothing and need no secrets, so a malformed or
//     hostile request is refused before any other work;
//   - the version and envelope checks come before the method lookup, and the header checks after
//     it, in the order the reference SDKs and the conformance suite use (digest §8);
//   - authentication precedes routing, so a caller without a valid token never learns whether a
//     tool, prompt or resource exists;
//   - only then does the method's handler route, authorize and forward.
//
// The replica's in-flight slot is taken only once the caller is authenticated: until then a
// request holds nothing but its connection and the bytes of its body that have arrived, bounded
// in time (Config.BodyReadTimeout) and in memory (Config.MaxBodyBytesInFlight), so slow or
// unauthenticated requests cannot take the capacity authenticated callers need.
func (x *request) run() error {
	if err := x.guard(); err != nil {
		return err
	}
	err := x.decode()
	x.startSpan()
	if err != nil {
		return err
	}
	if x.req.IsNotification() {
		// 2026-07-28 defines no client notifications over HTTP (digest §2.1); accept and drop.
		x.w.WriteHeader(http.StatusAccepted)
		x.status, x.outcome = http.StatusAccepted, outcomeOK
		return nil
	}
	if err := x.checkVersion(); err != nil {
		return err
	}
	if err := x.checkMethod(); err != nil {
		return err
	}
	if err := x.checkHeaders(); err != nil {
		return err
	}
	if err := x.authenticate(); err != nil {
		return err
	}
	release, err := x.s.inflight.acquire()
	if err != nil {
		return err
	}
	defer release()
	releaseCaller, err := x.s.inflight.acquireCaller(x.subject())
	if err != nil {
		return err
	}
	defer releaseCaller()
	if err := x.limitCaller(); err != nil {
		return err
	}
	if !pooledBody[x.req.Method] {
		// Lists and listens may hand slices of the body to work that outlives the request (a
		// shared listen stream keeps the client's _meta): the buffer goes to the garbage
		// collector instead of the pool, and stops counting against the body budget now.
		x.bodyBuf.Detach()
	}
	return x.h.serve(x)
}

// subject names the caller in logs, limits and cache keys: issuer-qualified, since subjects are
// unique per issuer only. Computed once per request.
func (x *request) subject() string {
	if x.principal == nil {
		return ""
	}
	if x.subjectKey == "" {
		x.subjectKey = x.principal.Issuer + "#" + x.principal.Subject
	}
	return x.subjectKey
}

// subjectToken returns the caller's token for a backend that exchanges it (RFC 8693), "" for
// every other backend.
func (x *request) subjectToken(upstream string) string {
	if x.token != "" && x.s.backends.ExchangesTokens(upstream) {
		return x.token
	}
	return ""
}

// listSubjectToken is subjectToken for a request that fans out to every backend (a list): the
// caller's token when any backend exchanges it.
func (x *request) listSubjectToken() string {
	if x.token != "" && x.s.backends.AnyExchangesTokens() {
		return x.token
	}
	return ""
}

// decode is stage 2: one strict JSON-RPC message, and its params and _meta members.
func (x *request) decode() error {
	req, err := jsonrpc.Decode(x.body, x.s.limits)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code != jsonrpc.CodeParseError {
			// Echo the id when it can be read, as clients match errors to requests by id.
			x.req = &jsonrpc.Request{ID: jsonrpc.IDOf(x.body)}
		}
		return err
	}
	x.req = req
	if x.params, err = jsonrpc.ParseParams(req.Params); err != nil {
		return err
	}
	x.meta, err = jsonrpc.ParseMeta(x.params.Meta)
	return err
}

// checkVersion compares MCP-Protocol-Version with _meta and checks that the version is served
// and the required _meta keys are present (digest §1, §2.3). A mismatch is reported before an
// unsupported version, as the conformance suite expects.
func (x *request) checkVersion() error {
	hdr, hasHdr, err := headerValue(x.r.Header, mcpheader.ProtocolVersion)
	if err != nil {
		return err
	}
	m := x.meta
	switch {
	case m.HasVersion && !hasHdr:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header is required")
	case m.HasVersion && hdr != m.ProtocolVersion:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header value " + quote(hdr) +
			" does not match body value " + quote(m.ProtocolVersion))
	case !m.HasVersion && (!hasHdr || hdr < ProtocolVersion):
		// A pre-2026 client (initialize, no per-request metadata): tell it what we speak so it
		// can detect the era (digest §1, "a modern-only server SHOULD name its supported
		// versions").
		return unsupportedVersion(hdr)
	case !m.HasVersion:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaProtocolVersion + " is required")
	case m.ProtocolVersion != ProtocolVersion:
		return unsupportedVersion(m.ProtocolVersion)
	case m.ClientCapabilities == nil:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaClientCapabilities + " is required")
	}
	return nil
}

func unsupportedVersion(requested string) *Error {
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
	return rpcError(e)
}

// checkMethod looks the method up in the closed table of what the gateway serves. Everything
// else, including the removed initialize and ping, is 404/-32601 (digest §2.3).
func (x *request) checkMethod() error {
	h, ok := x.s.handlers[x.req.Method]
	if !ok {
		return rpcError(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	x.h = h
	return nil
}

// checkHeaders validates Mcp-Method and Mcp-Name against the body (SEP-2243), decoding the
// base64 sentinel first, and that every Mcp-Param-* header appears once and decodes. Those are
// checked against the arguments once the tool is routed (bindParamHeaders), since that needs
// the tool's definition.
func (x *request) checkHeaders() error {
	if err := x.checkParamSyntax(); err != nil {
		return err
	}
	method, ok, err := headerValue(x.r.Header, mcpheader.Method)
	switch {
	case err != nil:
		return err
	case !ok:
		return headerMismatch("Header mismatch: Mcp-Method header is required")
	case method != x.req.Method:
		return headerMismatch("Header mismatch: Mcp-Method header value " + quote(method) +
			" does not match body value " + quote(x.req.Method))
	}
	if x.h.nameParam == "" {
		return nil
	}
	if err := x.h.requireName(x.params); err != nil {
		return err
	}
	want := x.params.Name
	if x.h.nameParam == "uri" {
		want = x.params.URI
	}
	raw, ok, err := headerValue(x.r.Header, mcpheader.Name)
	if err != nil {
		return err
	}
	if !ok {
		return headerMismatch("Header mismatch: Mcp-Name header is required")
	}
	got, err := mcpheader.Decode(raw)
	if err != nil {
		return headerMismatch("Header mismatch: Mcp-Name header value is not validly encoded")
	}
	if got != want {
		return headerMismatch("Header mismatch: Mcp-Name header value " + quote(got) +
			" does not match body value " + quote(want))
	}
	return nil
}

// headerValue returns the single value of a header. A header that must match the body but
// appears twice is refused rather than resolved, like a duplicate JSON key: which copy a
// backend or another proxy would read is not ours to guess.
func headerValue(h http.Header, name string) (string, bool, error) {
	v := h.Values(name)
	switch len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	}
	return "", false, headerMismatch("Header mismatch: " + name + " header appears more than once")
}
