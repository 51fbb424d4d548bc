package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// EraEdge serves the clients of another protocol era on the MCP endpoint: package pre2026 serves
// 2025-11-25, 2025-06-18 and 2025-03-26 clients. The pipeline hands it every POST right after the strict
// decode (stage era), and every GET; it answers through the request's ClientSink and runs what
// it translates through the same pipeline (Incoming.Run), so everything the 2026-07-28 path
// checks, a translated request is checked for too.
type EraEdge interface {
	// ServePost serves in and reports true when it is a request of the edge's era; false leaves
	// it to the 2026-07-28 pipeline unchanged. decodeErr is why the body did not decode as a
	// 2026-07-28 request (a pre-2026 client's answer to the gateway's request, say), nil when it
	// did.
	ServePost(in *Incoming, decodeErr error) (served bool, err error)
	// ClaimsGet reports whether a GET is one of the edge's streams; the others are 405.
	ClaimsGet(r *http.Request) bool
	// KeepsStream reports whether a stream opened by r, already running, may go on under this
	// edge for p, the caller this edge's configuration authenticates r as (nil without
	// authentication): a reload asks the new configuration's edge (Server.AcceptsStream).
	KeepsStream(r *http.Request, p *authz.Principal) bool
	// ServeGet serves a GET it claimed.
	ServeGet(in *Incoming) error
	// Start runs the edge's background work until ctx ends.
	Start(ctx context.Context)
	// Versions are the protocol versions the edge serves, newest first: the Server Cards
	// name them beside ProtocolVersion.
	Versions() []string
}

// Incoming is one client request as an era edge sees it: what the HTTP edge read of it, the
// writer of its response, the pipeline stages every path shares (authentication, admission), and
// the pipeline itself for the requests it translates.
type Incoming struct{ x *request }

// Context is the request's context: it ends when the client goes away.
func (in *Incoming) Context() context.Context { return in.x.ctx }

// Bound makes ctx, which must derive from Context, the context the request is served under
// from here on: a message of a batch is served under the batch's deadline, its backend calls
// cancelled when it passes.
func (in *Incoming) Bound(ctx context.Context) {
	in.x.ctx = ctx
	in.x.client.ctx = ctx
}

// Header is the client's HTTP request headers.
func (in *Incoming) Header() http.Header { return in.x.r.Header }

// Body is the request body as read (bounded) by stage guard; nil for a GET.
func (in *Incoming) Body() []byte { return in.x.in.body }

// Limits are the strict decoder's limits, for a body the edge decodes itself (a client's
// answer, which the 2026-07-28 decode refuses as a response).
func (in *Incoming) Limits() jsonrpc.Limits { return in.x.s.limits }

// TakeResultBytes charges n bytes of a copy of a backend's response the edge makes (a result
// reshaped for its version) to the replica's budget of response bytes in flight
// (server.maxResultBytesInFlight), within the caller's share of it as the responses themselves
// are; an ErrResultBudget error when they do not fit, wrapping whose bound it was (the
// caller's share's is bodyread.ErrShare). The edge gives them back with ReturnResultBytes once
// the copy is written.
func (in *Incoming) TakeResultBytes(n int) error {
	if b := in.x.s.backends; b != nil {
		if err := b.TakeResultBytes(in.x.bound(), int64(n)); err != nil {
			return fmt.Errorf("%w: a reshaped result of %d bytes: %w", upstreams.ErrResultBudget, n, err)
		}
	}
	return nil
}

// ReturnResultBytes gives back n bytes charged by TakeResultBytes.
func (in *Incoming) ReturnResultBytes(n int) {
	if b := in.x.s.backends; b != nil {
		b.ReturnResultBytes(in.x.bound(), int64(n))
	}
}

// TakeBodyBytes charges n bytes the edge holds of its client's beyond the request's own body
// (its answers to the gateway's requests, held until their round is complete and then sent on in
// one request) to the replica's budget of request bytes in flight (server.maxBodyBytesInFlight),
// and reports whether they fit; nothing is charged when they do not. The edge gives them back
// with ReturnBodyBytes once the request that carries them has ended.
func (in *Incoming) TakeBodyBytes(n int64) bool { return in.x.s.bodies.Take(n) }

// ReturnBodyBytes gives back n bytes charged by TakeBodyBytes.
func (in *Incoming) ReturnBodyBytes(n int64) { in.x.s.bodies.Return(n) }

// MaxBodyBytesInFlight is the replica's budget of request bytes in flight
// (server.maxBodyBytesInFlight); 0 when it is off.
func (in *Incoming) MaxBodyBytesInFlight() int64 { return in.x.s.bodies.Max() }

// MaxBodyBytes is the most one request may carry (server.maxBodyBytes): an edge that makes one
// request of several of its client's holds them to it.
func (in *Incoming) MaxBodyBytes() int64 { return in.x.s.cfg.MaxBodyBytes }

// Message is the decoded JSON-RPC request; nil when the body did not decode as one.
func (in *Incoming) Message() *jsonrpc.Request {
	if in.x.in.req == nil || in.x.in.req.Method == "" {
		return nil
	}
	return in.x.in.req
}

// Answer is the JSON-RPC response the body is, read by stage decode, which refuses it (clients
// of 2026-07-28 send none): a pre-2026 client's answer to one of the gateway's requests, with an
// id and a "result" object or an "error" object. nil for any other body.
func (in *Incoming) Answer() *jsonrpc.Message { return in.x.in.answer }

// Params are the message's params as stage decode read them; nil when they did not decode.
func (in *Incoming) Params() *jsonrpc.Params { return in.x.in.params }

// Meta is the message's _meta as stage decode read it; nil when it did not decode.
func (in *Incoming) Meta() *jsonrpc.Meta { return in.x.in.meta }

// Client is the writer of the client's response.
func (in *Incoming) Client() *ClientSink { return in.x.client }

// RequestID is the request's id in logs and the X-Request-Id header.
func (in *Incoming) RequestID() string { return in.x.requestID }

// SetMessage records the message the edge decoded itself (a GET's internal request): the
// access log and the metrics name its method, the response answers its id.
func (in *Incoming) SetMessage(req *jsonrpc.Request) { in.x.setMessage(req) }

// SetEra labels the request for the access log and the metrics: served by the pre-2026 edge at
// version, in the session whose short log key is session ("" for none; never the session id).
func (in *Incoming) SetEra(version, session string) {
	in.x.era = eraLabel{legacy: true, version: version, session: session}
}

// Waited adds d to the time the request spent waiting for its client's input, which the
// request duration metric leaves out (mcp_gateway_request_client_wait_seconds has it).
func (in *Incoming) Waited(d time.Duration) { in.x.waited += d }

// CheckOrigin is stage guard's Origin and Host check, for a GET, which runs no other stage.
func (in *Incoming) CheckOrigin() error { return in.x.s.origins.check(in.x.r) }

// Authenticate is stage authenticate: the bearer token to a verified principal (a 401 challenge,
// or 503 when the identity provider cannot be reached, as for any request).
func (in *Incoming) Authenticate() error { return in.x.s.authenticate(in.x) }

// Principal is the caller stage authenticate proved; nil without authentication.
func (in *Incoming) Principal() *authz.Principal { return in.x.caller.principal }

// Subject is the caller's key in logs (issuer and subject), "" without authentication. What is
// bounded or kept per caller is keyed by BoundKey.
func (in *Incoming) Subject() string { return in.x.subject() }

// BoundKey is the key the caller's per-caller bounds and records are charged to: Subject when the
// caller is authenticated, its client address's key (callerkey.Client) without authentication.
// The state an era edge keeps per caller is bounded by it, never by Subject, which is "" for
// every unauthenticated client at once.
func (in *Incoming) BoundKey() string { return in.x.bound() }

// Admit is stage admit for the whole client request, whatever the edge does with it (answered
// at the edge, translated and run once or for several rounds, waiting for its client's input): an
// in-flight slot, overall and the caller's, and a token of the caller's rate limit. What it
// takes is held until the response is written. A second call takes nothing more.
func (in *Incoming) Admit() error {
	x := in.x
	if x.admitted.held {
		return nil
	}
	return x.s.admit(x)
}

// HoldListen takes one of the caller's listens (server.maxListensPerCaller) for the whole client
// request, so that a stream that runs listens (a pre-2026 client's GET stream, whose listen
// starts again when the session's subscriptions change) is refused before it starts: 429 with
// Retry-After. Its listens count as that one; the place is given back once the response is
// written. Call it after Admit.
func (in *Incoming) HoldListen() error {
	if err := in.x.admitted.holdListen(in.x.bound()); err != nil {
		return in.x.s.drafts.tooManyListens
	}
	return nil
}

// AdmitAnswer is Admit for a client's answer to a request the gateway wrote it, once the edge
// has checked that it names one still waiting: a token of the caller's rate limit, but no
// in-flight slot. The calls waiting for answers hold their caller's slots, so an answer that
// needed one could find them all held by the very calls it would let finish; what bounds such
// answers is what bounds the requests they answer (each answered once).
func (in *Incoming) AdmitAnswer() error {
	x := in.x
	if x.admitted.held {
		return nil
	}
	return x.limitCaller()
}

// Inner is a request an era edge built from its client's: a 2026-07-28 message that runs through
// the pipeline from stage method on, as the caller the edge authenticated, under the admission
// it took (Incoming.Admit).
type Inner struct {
	// Ctx is the context of this run (a cancellable one, for a client's
	// notifications/cancelled); nil is the request's.
	Ctx context.Context
	// ID is the JSON-RPC id the pipeline answers with.
	ID json.RawMessage
	// Method is the 2026-07-28 method.
	Method string
	// Params are the 2026-07-28 params, _meta included, as a backend is sent them.
	Params json.RawMessage
	// Parsed is Params read: Params.Meta must be Params' _meta. Meta is that _meta read.
	Parsed *jsonrpc.Params
	Meta   *jsonrpc.Meta
	// AwaitDecision is how long a retry that answers the gateway's URL elicitation of its
	// approval page with accept waits for the page's decision before its client is asked again,
	// and one that so answers its connect page waits for the caller's token (awaitConnect).
	// A 2025-11-25 client's accept says only that its user was sent to the page (that
	// revision's URL mode): asked again at once, it would be sent the same page round after
	// round. Zero asks again at once, as a 2026-07-28 client, which retries when its user says
	// so, expects. An approval's wait never outlasts the call's requestState.
	AwaitDecision time.Duration
}

// Run runs m through the pipeline and answers it through out. The request's route is m's
// afterwards (the access log names what the client called).
func (in *Incoming) Run(m *Inner, out Sink) error {
	x := in.x
	ctx := m.Ctx
	if ctx == nil {
		ctx = x.ctx
	}
	y := &request{shared: x.shared, start: x.start, requestID: x.requestID, requestIDValue: x.requestIDValue,
		internal: true, out: out, client: x.client, admitted: admission{listen: x.admitted.listen}}
	if m.AwaitDecision > 0 {
		ctx = context.WithValue(ctx, awaitDecisionKey{}, m.AwaitDecision)
	}
	y.ctx, y.hdr = ctx, withParamHeadersOf(traceHeadersAsSent(x.r.Header), x.r.Header)
	y.in.req = &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: m.Params}
	y.in.params, y.in.meta = m.Parsed, m.Meta
	err := x.s.run(y)
	x.route, x.viaCallTool = y.route, y.viaCallTool
	x.waited += y.waited
	if y.rails != nil && y.rails.nameFound {
		// The access line of the pre-2026 request names the inner one's target: not this one.
		x.rails = &railState{nameFound: true}
	}
	return err
}

// Authorize resolves a namespaced name or URI and authorizes it for the caller exactly as
// stages route, authorize and pin do for a call of it, and returns its namespaced normal form. A
// pre-2026 client's resources/subscribe is authorized as resources/read of the same URI this
// way, so a caller cannot learn when a resource it may not read changes. Without authorize only
// the form is checked.
func (in *Incoming) Authorize(kind upstreams.Kind, name string, authorize bool) (string, error) {
	x := in.x
	if err := x.resolve(kind, name); err != nil {
		return "", namedAs(x, name, err)
	}
	if authorize {
		if err := x.authorize(kind, x.route.target); err != nil {
			return "", namedAs(x, name, err)
		}
		if err := x.checkPin(x.route.target); err != nil {
			return "", namedAs(x, name, err)
		}
	}
	return x.s.backends.Namespaced(kind, x.route.target), nil
}

// namedAs is err, unless it is an unknown-name answer: then the one naming name, as the caller
// sent it, that the pipeline gives a request of that name (namedUnknown), so a pre-2026
// subscription is refused with the bytes a read of its URI is.
func namedAs(x *request, name string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.unknown == "" || x.mutated {
		return err
	}
	return unknownNamed(e.unknown, name, separator(x.s.backends))
}

// Discover is the server/discover result the gateway answers with on this endpoint, with its
// serverInfo in _meta: a pre-2026 client's initialize is answered from it.
func (in *Incoming) Discover() ([]byte, error) { return in.x.discoverResult(in.x.s.serverInfo) }

// ServerInfo is the gateway's serverInfo (name and version), which every result it answers with
// carries in _meta.
func (in *Incoming) ServerInfo() json.RawMessage { return in.x.s.serverInfo }

// Limited is the error of a caller over one of its limits, to retry after retryAfter: 429 with
// Retry-After, as -32012 or, with server.draftErrors: [rateLimited], SEP-3304's -32023.
func (in *Incoming) Limited(retryAfter time.Duration, msg string) *Error {
	return in.x.s.drafts.limited(retryAfter, msg)
}

// Shaped is e in the shape server.draftErrors asks for, as the 2026-07-28 edge writes it: a
// backend's 429 is SEP-3304's -32023 when it has rateLimited.
func (in *Incoming) Shaped(e *Error) *Error { return in.x.s.drafts.draftShape(e) }

// LimitedError is Incoming.Limited of a server whose server.draftErrors has rateLimited (draft)
// or not.
func LimitedError(retryAfter time.Duration, msg string, draft bool) *Error {
	d := drafts{rateLimited: draft}
	return d.limited(retryAfter, msg)
}

// MapError is the one mapping of an error to what a client is answered (status, headers,
// JSON-RPC error, outcome), for the errors an edge gets from Run and the shared stages.
func MapError(err error) *Error { return mapError(err) }

// ErrClientWrite is the error of a response the client did not take (gone, or not reading in
// time): nothing more can reach it.
var ErrClientWrite = errClientWrite

// IsClientWrite reports whether err says the client did not take its response.
func IsClientWrite(err error) bool { return errors.Is(err, errClientWrite) }
