package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/upstreams"
)

// request carries one client request through the pipeline. Its state is grouped by the stage
// that produces it (the numbers of docs/architecture.md "The request pipeline"): stages 1 to 8
// write their own group and read those of the stages before them; whichever stage answers
// writes out. None re-reads the body.
type request struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	ctx   context.Context
	start time.Time
	// requestID is kept apart from the response headers, which the keep-alive timer may be
	// writing concurrently.
	requestID string
	// requestIDValue is requestID as a header value, shared by the response and the backend
	// request.
	requestIDValue []string
	// endSpan ends the request's span, started after stage 2; nil with tracing off or before it
	// starts. spanParent is the traceparent of the gateway's own span (the backend span from
	// stage 9 on), "" with tracing off.
	endSpan    tracing.End
	spanParent string
	// set is the endpoint's tool set or search mode (toolsets.go), nil on the plain default
	// endpoint; viaCallTool marks a tools/call rewritten from call_tool (search.go).
	set         *toolset
	viaCallTool bool

	in     decoded  // stages 1 to 4
	caller identity // stage 5
	route  route    // stages 6 to 8
	out    output   // what has been written, by the stage that answers and the keep-alive timer
	// legacy is set for a pre-2026 client's request (legacy.go), which the access log and the
	// metrics label with its era; nil on the 2026-07-28 path.
	legacy *legacyState
}

// decoded is what stages 1 to 4 read from the client's request, once.
type decoded struct {
	body    []byte           // stage 1
	bodyBuf *bodyread.Buffer // holds body; released when the request ends (server.go)
	req     *jsonrpc.Request // stage 2
	params  *jsonrpc.Params  // stage 2
	meta    *jsonrpc.Meta    // stage 2
	h       *handler         // stage 4: the method's entry in the table
}

// identity is who the caller is: stage 5.
type identity struct {
	principal  *authz.Principal
	token      string // the verified bearer token: only ever given to upstreams for token exchange
	subjectKey string // see subject()
}

// route is where a routed call goes and on what terms: stages 6 to 8. The access log and the
// metrics read it too.
type route struct {
	upstream       string         // stage 6: the owning backend
	name           string         // stage 6: the namespaced name or URI the client used
	upstreamName   string         // stage 6: the backend-side name or URI
	decision       authz.Decision // stage 7
	paramHeaders   http.Header    // stage 7, tools/call: the Mcp-Param-* headers the backend gets
	confirmed      bool           // stage 8: the user approved this call (gateway confirmation)
	approvedOnPage bool           // stage 8: ... on the gateway's approval page (approval.go)
	pinDrift       pins.Set       // stage 7: the drift a confirmation must name (pins.go); empty: none
	pinItem        string         // stage 7: the namespaced item the pin verdict is about (a read's template)
	pinClasses     pins.Set       // stage 7: every drift class of the item, whatever its action (the approval page names them)
}

// output is what has been written to the client. Any stage that answers writes it, through
// the writers of respond.go; the access log and the metrics read it.
type output struct {
	// mu serializes writes between the handler and the keep-alive timer (keepalive.go).
	mu           sync.Mutex
	ka           *time.Timer
	done         bool // no more keep-alives: the last message is written or the handler is finishing
	status       int
	outcome      string
	sse          bool
	writeErr     error  // the first failed write: the response is over (respond.go)
	streamClosed func() // ends the open-SSE-streams gauge when the response was a stream
}

// run is the request pipeline: stages 1 to 11 of docs/architecture.md "The request pipeline",
// in order, in this one place. The order is deliberate:
//   - transport checks and the strict decode cost nothing and need no secrets, so a malformed or
//     hostile request is refused before any other work;
//   - the version and _meta checks come before the method lookup, and the header checks after
//     it, in the order the reference SDKs and the conformance suite use (docs/protocol.md §8);
//   - authentication precedes routing, so a caller without a valid token never learns whether a
//     tool, prompt or resource exists;
//   - a routed call is authorized on its backend-side name, confirmed or resumed (MRTR) only
//     once authorized, and the client's request reaches no backend before stage 9.
//
// The replica's in-flight slot is taken only once the caller is authenticated: until then a
// request holds nothing but its connection and the bytes of its body that have arrived, bounded
// in time (Config.BodyReadTimeout) and in memory (Config.MaxBodyBytesInFlight), so slow or
// unauthenticated requests cannot take the capacity authenticated callers need.
func (x *request) run() error {
	// Stage 1: guard.
	if err := x.guard(); err != nil {
		return err
	}
	// Stage 2: decode. The span starts even for a body that does not decode.
	err := x.decode()
	x.startSpan()
	// The era is decided once, here (docs/protocol.md §9.1): a pre-2026 client's request is
	// served by the legacy edge, which runs this pipeline again for an internal 2026-07-28
	// request; every other request goes on unchanged.
	if x.s.legacy != nil {
		if legacy, err := x.legacyDispatch(err); legacy {
			return err
		}
	}
	if err != nil {
		return err
	}
	if x.in.req.IsNotification() {
		// 2026-07-28 defines no client notifications over HTTP (docs/protocol.md §2); accept and drop.
		x.w.WriteHeader(http.StatusAccepted)
		x.out.status, x.out.outcome = http.StatusAccepted, outcomeOK
		return nil
	}
	// Stage 3: protocol version and _meta.
	if err := x.checkVersion(); err != nil {
		return err
	}
	// Stage 4: the method, and the headers that mirror the body.
	if err := x.checkMethod(); err != nil {
		return err
	}
	if err := x.checkHeaders(); err != nil {
		return err
	}
	// Stage 5: authenticate, then admit: the in-flight slots and the per-caller rate limit.
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
	// Tool sets and search mode: find_tools and a search endpoint's lists are answered here;
	// call_tool becomes the inner tools/call that every later stage sees (search.go).
	if handled, err := x.endpoint(); handled || err != nil {
		return err
	}
	if !pooledBody[x.in.req.Method] {
		// Lists and listens may hand slices of the body to work that outlives the request (a
		// shared listen stream keeps the client's _meta): the buffer goes to the garbage
		// collector instead of the pool, and stops counting against the body budget now.
		x.in.bodyBuf.Detach()
	}
	if x.in.h.target == nil {
		// Not routed to one backend: lists, server/discover and subscriptions/listen filter by
		// policy (7), fan out or listen (9) and respond (11) in their handlers.
		return x.in.h.serve(x)
	}
	// Stage 6: route.
	kind, name, err := x.in.h.target(x)
	if err != nil {
		return err
	}
	target, err := x.resolve(kind, name)
	if err != nil {
		return err
	}
	// Stage 7: authorize; then a tools/call's Mcp-Param-* headers are bound to its arguments,
	// before any confirmation is asked, so a call whose headers the backend could not be given
	// consistently is refused outright.
	if err := x.authorize(kind, target); err != nil {
		return err
	}
	if err := x.checkPin(target); err != nil {
		return err
	}
	if x.in.req.Method == upstreams.MethodToolsCall {
		if err := x.bindParamHeaders(target); err != nil {
			return err
		}
	}
	// Stage 8: MRTR in. Then the per-tool rate limit, which counts only calls that reach the
	// backend, after any confirmation round trip.
	params, handled, err := x.mrtrIn(target)
	if err != nil || handled {
		return err
	}
	if err := x.limitTool(); err != nil {
		return err
	}
	// Stages 9 to 11: forward, seal a backend's round-trip state (10), relay the response (11).
	return x.forward(target, params)
}

// subject names the caller in logs, limits and cache keys: issuer-qualified, since subjects are
// unique per issuer only. Computed once per request.
func (x *request) subject() string {
	if x.caller.principal == nil {
		return ""
	}
	if x.caller.subjectKey == "" {
		x.caller.subjectKey = x.caller.principal.Issuer + "#" + x.caller.principal.Subject
	}
	return x.caller.subjectKey
}

// subjectToken returns the caller's token for a backend that exchanges it (RFC 8693), "" for
// every other backend.
func (x *request) subjectToken(upstream string) string {
	if x.caller.token != "" && x.s.backends.ExchangesTokens(upstream) {
		return x.caller.token
	}
	return ""
}

// listSubjectToken is subjectToken for a request that fans out to every backend (a list): the
// caller's token when any backend exchanges it.
func (x *request) listSubjectToken() string {
	if x.caller.token != "" && x.s.backends.AnyExchangesTokens() {
		return x.caller.token
	}
	return ""
}

// decode is stage 2: one strict JSON-RPC message, and its params and _meta members.
func (x *request) decode() error {
	leave, err := x.s.decodes.enter(x.ctx, len(x.in.body))
	if err != nil {
		return err
	}
	defer leave()
	req, err := jsonrpc.Decode(x.in.body, x.s.limits)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && rpc.Code != jsonrpc.CodeParseError {
			// Echo the id when it can be read, as clients match errors to requests by id.
			x.in.req = &jsonrpc.Request{ID: jsonrpc.IDOf(x.in.body)}
		}
		return err
	}
	x.in.req = req
	if x.in.params, err = jsonrpc.ParseParams(req.Params); err != nil {
		return err
	}
	x.in.meta, err = jsonrpc.ParseMeta(x.in.params.Meta)
	return err
}

// checkVersion is stage 3. It compares MCP-Protocol-Version with _meta and checks that the version
// is served and the required _meta keys are present (docs/protocol.md §1, §2). A mismatch is reported
// before an unsupported version, as the conformance suite expects.
func (x *request) checkVersion() error {
	hdr, hasHdr, err := headerValue(x.r.Header, mcpheader.ProtocolVersion)
	if err != nil {
		return err
	}
	m := x.in.meta
	switch {
	case m.HasVersion && !hasHdr:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header is required")
	case m.HasVersion && hdr != m.ProtocolVersion:
		return headerMismatch("Header mismatch: MCP-Protocol-Version header value " + quote(hdr) +
			" does not match body value " + quote(m.ProtocolVersion))
	case !m.HasVersion && (!hasHdr || hdr < ProtocolVersion):
		// A pre-2026 client (initialize, no per-request metadata): tell it what we speak so it
		// can detect the era ("a modern-only server SHOULD name its supported versions",
		// docs/protocol.md §1), in the message too, since SDKs show their users the message.
		return legacyRefused(hdr, x.in.req)
	case !m.HasVersion:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaProtocolVersion + " is required")
	case m.ProtocolVersion != ProtocolVersion:
		return unsupportedVersion(m.ProtocolVersion)
	case m.ClientCapabilities == nil:
		return invalidParams("Invalid params: _meta." + jsonrpc.MetaClientCapabilities + " is required")
	}
	return nil
}

// legacyRefused is the -32022 for a pre-2026 client. requested is what it asked for: the
// protocolVersion of its initialize, else its MCP-Protocol-Version header.
func legacyRefused(hdr string, req *jsonrpc.Request) *Error {
	requested := hdr
	if req.Method == "initialize" && len(req.Params) > 0 {
		_ = jsonrpc.Members(req.Params, func(key, val []byte) error {
			var v string
			if string(key) == "protocolVersion" && json.Unmarshal(val, &v) == nil {
				requested = v
			}
			return nil
		})
	}
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion,
		"Unsupported protocol version "+quote(requested)+": this server supports "+ProtocolVersion).
		WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
	return rpcError(e)
}

func unsupportedVersion(requested string) *Error {
	e := jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
	return rpcError(e)
}

// checkMethod is the first part of stage 4: it looks the method up in the closed table of what
// the gateway serves. Everything else, including the removed initialize and ping, is
// 404/-32601 (docs/protocol.md §1).
func (x *request) checkMethod() error {
	h, ok := x.s.handlers[x.in.req.Method]
	if !ok {
		return rpcError(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "Method not found"))
	}
	x.in.h = h
	return nil
}

// checkHeaders is the rest of stage 4: it validates Mcp-Method and Mcp-Name against the body
// (SEP-2243), decoding the base64 sentinel first, and that every Mcp-Param-* header appears once
// and decodes. Those are checked against the arguments once the tool is routed and authorized
// (bindParamHeaders, stage 7), since that needs the tool's definition.
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
	case method != x.in.req.Method:
		return headerMismatch("Header mismatch: Mcp-Method header value " + quote(method) +
			" does not match body value " + quote(x.in.req.Method))
	}
	if x.in.h.nameParam == "" {
		return nil
	}
	if err := x.in.h.requireName(x.in.params); err != nil {
		return err
	}
	want := x.in.params.Name
	if x.in.h.nameParam == "uri" {
		want = x.in.params.URI
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
