package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/upstreams"
)

// request is the request value: what one client request is, as the stages of the pipeline
// (pipeline.go) learn it. Its state is grouped by the stage that produces it: a stage writes its
// own group and reads those of the stages before it; none re-reads the body. Nothing in it
// writes to the client: the answer goes to out, the request's Sink.
type request struct {
	// shared is what every message of the client's HTTP request has in common: a message of a
	// batch (Incoming.Element) and a request another edge built (Incoming.Run) start from a
	// copy of it, so a field added there reaches them without anyone listing it.
	shared
	start time.Time
	// requestID is kept apart from the response headers, which the keep-alive timer may be
	// writing concurrently; requestIDValue is it as a header value, shared by the response and
	// the backend request.
	requestID      string
	requestIDValue []string
	// viaCallTool marks a tools/call rewritten from call_tool (search.go).
	viaCallTool bool
	// internal marks a request another edge built from what it decoded (Incoming.Run): the
	// 2026-07-28 wire checks (version, Mcp-* headers) and authentication were that edge's,
	// and its admission covers the whole client request. (Next to viaCallTool: the two share
	// a word, which keeps the request in its size class.)
	internal bool
	// mutated marks params the gateway replaced (an interceptor's mutation, a guardrail's
	// redaction): the client's Mcp-Param-* headers mirrored the arguments it sent, so the
	// backend's are derived from the new ones, as for a request another edge built. (In the
	// same word as internal and viaCallTool.)
	mutated bool
	// endSpan ends the request's span, started after stage decode; nil with tracing off or
	// before it starts.
	endSpan tracing.End

	in    decoded // stages guard to headers
	route route   // stages route to mrtr-in
	// rails is what the guardrails keep of a request a rule covers (guardrails.go): stage
	// guardrails and the relay; nil for every other request, which it costs one word.
	rails *railState
	// waited is the time the request spent waiting for its client's input (a pre-2026 call's
	// asks): a person's think time, which the latency metrics leave out.
	waited time.Duration

	// out is where the request is answered: client for a 2026-07-28 request, another edge's
	// Sink for a request it built. client is the writer of the client's HTTP response.
	out    Sink
	client *ClientSink
	// admitted is what stage admit took, given back once the response is written.
	admitted admission
	// unauth is the request's slot in its client address's unauthenticated share (clients.go),
	// given back once stage authenticate knows the caller, or when the request ends.
	unauth clientaddr.Slot
	// bodyShare is the caller key whose share of the body budget holds the body once the
	// caller is authenticated (callerBodies), given back when the request ends; "" for none.
	bodyShare string
}

// shared is the part of a request that belongs to the client's HTTP request and its caller
// rather than to one JSON-RPC message: what every message of a batch, and every request another
// edge builds from its client's, carries as it is (TestRequestSharedCarried).
type shared struct {
	s   *Server
	ctx context.Context
	// r is the client's HTTP request, which stage guard reads the body of; hdr is the headers every
	// later stage reads: r's, or for a request another edge built (internal) only the trace
	// context of its client's, since that edge checked its own transport.
	r   *http.Request
	hdr http.Header
	// set is the endpoint's tool set or search mode (toolsets.go), nil on the plain default
	// endpoint.
	set    *toolset
	caller identity // stage authenticate
	// peer is the client's address behind the trusted proxies (clients.go); the zero Addr when
	// neither the per-client bounds, nor the access log, nor (without authentication) the
	// per-caller bounds need it (bound).
	peer netip.Addr
	// spanParent is the traceparent of the gateway's own span (the backend span from stage
	// forward on), "" with tracing off.
	spanParent string
	// era is what the access log and the metrics say of the request's protocol era, set by the
	// edge that served it.
	era eraLabel
}

// decoded is what stages guard to headers read from the client's request, once.
type decoded struct {
	body    []byte           // guard
	bodyBuf *bodyread.Buffer // holds body; released when the request ends (server.go)
	req     *jsonrpc.Request // decode
	params  *jsonrpc.Params  // decode
	meta    *jsonrpc.Meta    // decode
	err     error            // decode: why the body did not decode, for stage era
	// answer is the response the body is, read by the same decode (jsonrpc.DecodeClient): a
	// pre-2026 client's answer, for its edge; nil for anything else.
	answer *jsonrpc.Message
	h      *handler // method: the method's entry in the table
	// client is the params the client sent once a later stage replaced them (replaceParams);
	// nil while params are the client's.
	client *jsonrpc.Params
}

// replaceParams makes params, read as parsed, the request's params from here on: what the
// later stages check, confirm and forward. The values decode (or another edge, Incoming.Run)
// built are left as they were, since that edge may hold them; the client's params stay
// readable (clientParams) for what must name the call as the client sends it again.
func (d *decoded) replaceParams(params json.RawMessage, parsed *jsonrpc.Params) {
	if d.client == nil {
		d.client = d.params
	}
	req := *d.req
	req.Params = params
	d.req, d.params = &req, parsed
}

// clientParams are the params as the client sent them: a retry of the call carries these, not
// a redaction of them.
func (d *decoded) clientParams() *jsonrpc.Params {
	if d.client != nil {
		return d.client
	}
	return d.params
}

// identity is who the caller is: stage authenticate.
type identity struct {
	principal  *authz.Principal
	token      string // the verified access token: only ever given to upstreams for token exchange
	subjectKey string // see subject()
	boundKey   string // see bound(), without authentication
	tokenKey   string // see keyOf()
	dpop       bool   // the token came with a verified proof of possession (RFC 9449)
}

// route is where a routed call goes and on what terms: stages route to mrtr-in. The access log
// and the metrics read it too.
type route struct {
	kind           upstreams.Kind         // route: what the method names
	target         upstreams.Target       // route: the owning backend and its name for the item
	upstream       string                 // route: the owning backend
	name           string                 // route: the namespaced name or URI the client used
	nameHidden     bool                   // route: the guardrails find something in that URI, which log lines leave out (railName)
	uriScan        uriScan                // route: the guardrails' one scan of the URI the request names (guardrails_uri.go)
	upstreamName   string                 // route: the backend-side name or URI
	decision       authz.Decision         // authorize
	pinDrift       pins.Set               // pin: the drift a confirmation must name (pins.go); empty: none
	pinItem        string                 // pin: the namespaced item the pin verdict is about (a read's template)
	pinCurrent     string                 // pin: with pinDrift, the fingerprint of the definition a confirmation is of
	pinClasses     pins.Set               // pin: every drift class of the item, whatever its action (the approval page names them)
	uiReadPin      *pins.UIReadPin        // pin: what a read of a pinned MCP App UI resource's contents is held to (apps.go)
	paramHeaders   http.Header            // bind-headers, tools/call: the Mcp-Param-* headers the backend gets
	toolHeaders    *upstreams.ToolHeaders // bind-headers, tools/call: the tool's entry in its backend's list, nil when not held
	confirmed      bool                   // mrtr-in: the user approved this call (gateway confirmation)
	approvedOnPage bool                   // mrtr-in: ... on the gateway's approval page (approval.go)
	params         json.RawMessage        // mrtr-in: the params the backend gets
	userToken      string                 // connect: the caller's token for a per-user backend
}

// eraLabel is what the access log says of a request's era: "modern" or "legacy", the protocol
// version, and a short key of a pre-2026 client's session (never the session id).
type eraLabel struct {
	legacy  bool
	version string
	session string
}

// subject names the caller in logs, limits and cache keys: issuer-qualified, since subjects are
// unique per issuer only. Computed once per request.
func (x *request) subject() string {
	if x.caller.principal == nil {
		return ""
	}
	if x.caller.subjectKey == "" {
		x.caller.subjectKey = x.caller.principal.CallerKey()
	}
	return x.caller.subjectKey
}

// bound is the key this request's per-caller bounds and records are charged to: in-flight
// slots, rate-limit buckets, listens and their share of the result budget, the query budget of
// tool search, a pre-2026 client's session state and pending asks. It is the caller's key
// (subject) when the caller is authenticated. Without authentication there is no caller, and
// every client sharing one key would let any one of them spend the bounds of all: the key is
// then the client address's (callerkey.Client), grouped as the per-client bounds group it
// (server.trustedProxies, server.clientIPv6Prefix), so each client address has its own share.
// Computed once per request.
func (x *request) bound() string {
	if k := x.subject(); k != "" {
		return k
	}
	if x.caller.boundKey == "" {
		x.caller.boundKey = x.s.clients.key(x.peer)
	}
	return x.caller.boundKey
}

// subjectToken returns the caller's token for a backend that exchanges it (RFC 8693), "" for
// every other backend.
func (x *request) subjectToken(upstream string) string {
	if x.caller.token != "" && x.s.backends.ExchangesTokens(upstream) {
		return x.caller.token
	}
	return ""
}

// keyOf is upstreams.SubjectKey of tok (the caller's token as subjectToken gives it, ""
// for none), computed at most once per request: the key of what a token-exchange backend
// answered for this token (its exchanged token, its private lists), which every step of the
// request would otherwise hash again.
func (id *identity) keyOf(tok string) string {
	if tok == "" {
		return ""
	}
	if id.tokenKey == "" {
		id.tokenKey = upstreams.SubjectKey(tok)
	}
	return id.tokenKey
}

// listSubjectToken is subjectToken for a request that fans out to every backend (a list): the
// caller's token when any backend exchanges it.
func (x *request) listSubjectToken() string {
	if x.caller.token != "" && x.s.backends.AnyExchangesTokens() {
		return x.caller.token
	}
	return ""
}

// answer ends the request with the gateway's own result.
func (x *request) answer(result []byte, outcome string) error {
	return x.out.Result(result, http.StatusOK, outcome, nil)
}
