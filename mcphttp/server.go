package mcphttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/logging"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Deps are the components the client-facing server drives.
type Deps struct {
	// Backends routes and forwards to the backend MCP servers. Required.
	Backends *upstreams.Registry
	// Logger receives the access log and decision lines. Required.
	Logger *slog.Logger
	// Name and Version identify the gateway in serverInfo.
	Name, Version string
	// Instructions, if set, is returned by server/discover.
	Instructions string
	// Loopback reports that the MCP listener is bound to a loopback address, which turns on
	// DNS-rebinding protection (Host must be a loopback name).
	Loopback bool
	// Auth authenticates callers and decides per-tool access; nil serves without
	// authentication (an explicit, loudly logged choice of cmd/gateway).
	Auth *authz.Service
	// MRTR seals and opens requestState: gateway confirmations and backend round trips. Nil
	// passes backend round trips through unsealed and cannot ask for confirmation.
	MRTR *mrtr.Codec
	// RateLimits limits callers and tools; the zero value limits nothing.
	RateLimits RateLimits
	// Metrics records request metrics; nil records nothing.
	Metrics *metrics.Recorder
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// Tracer exports a span per request and per backend call; nil exports nothing.
	Tracer *tracing.Tracer
	// ToolsetMetrics records tool search (toolsets.go); nil records nothing.
	ToolsetMetrics *metrics.ToolsetRecorder
	// Embeddings is the operator-configured embeddings endpoint search fuses with its lexical
	// ranking (docs/search.md § An embeddings endpoint); nil: search ranks lexically and nothing
	// is contacted.
	Embeddings *embeddings.Embedder
	// Approvals is the out-of-band approval page for `confirm: url` rules; nil refuses those
	// calls (fail closed).
	Approvals *approval.Service
	// UserOAuth is per-user OAuth to backends (auth.type userOAuth): the callers' tokens and
	// the connect pages. Nil: no backend uses it.
	UserOAuth *useroauth.Service
	// Edge serves the clients of another protocol era on the same endpoint (package pre2026:
	// 2025-11-25, 2025-06-18 and 2025-03-26 clients); nil refuses them, naming the versions served.
	Edge EraEdge
	// Interceptors are the out-of-process interceptors of calls (docs/interceptors.md); nil
	// when none is configured.
	Interceptors *intercept.Set
	// Guardrails are the built-in guardrails (docs/guardrails.md); nil runs none, at no cost.
	Guardrails *guardrails.Engine
	// GuardrailMetrics records the guardrails' checks; nil records nothing.
	GuardrailMetrics *metrics.GuardrailRecorder
	// AuthorizationContexts seals the authorizationContextId of the gateway's authorization
	// denials with server.draftErrors: [denials] (seal.PurposeAuthorizationContext; every
	// replica needs the same keys); nil sends denials without one.
	AuthorizationContexts *seal.Sealer
	// CaseInsensitive are the backends whose resource paths are case-insensitive: tool sets
	// select their resources case-folded, as policy matches them (authz.Options.CaseInsensitive).
	CaseInsensitive []string
	// SamplingContext are the backends trusted with sampling context: their clientCapabilities
	// keep sampling.context and their sampling requests reach the client with includeContext as
	// they wrote it. Every other backend's ask for context becomes "none" (samplingcontext.go).
	SamplingContext []string
	// ClientLimiter, when not nil, is the per-client limiter to carry on with (a previous
	// configuration's, whose server.perClient was the same); nil builds a new one.
	ClientLimiter *clientaddr.Limiter
}

// Server is the MCP endpoint: the pipeline and the handlers of the methods it serves.
type Server struct {
	cfg      Config
	limits   jsonrpc.Limits
	origins  originPolicy
	handlers map[string]*handler
	backends *upstreams.Registry
	listens  *upstreams.Listens // subscriptions/listen, backend streams shared
	// listensOpen is cancelled by EndListens: every listen of this server then ends.
	listensOpen context.Context
	endListens  context.CancelFunc
	// streamsOpen is cancelled by EndStreams: every pre-2026 GET stream then ends too.
	streamsOpen context.Context
	endStreams  context.CancelFunc
	log         *slog.Logger
	metrics     *metrics.Recorder
	tracer      *tracing.Tracer
	auth        *authz.Service
	rate        RateLimits
	// confirm is stage mrtr-in's component: requestState, confirmations, the approval page.
	confirm *confirmer
	// intercept is stage intercept's component and the response phase's; nil without
	// interceptors.
	intercept *interceptor
	// rechecks are the stages a request an interceptor changed runs again (stagesBetween).
	rechecks []stage
	// rails is stage guardrails' component and the relay's checks; nil without guardrails.
	rails    *railer
	inflight *concurrency
	decodes  *decodeGate      // large bodies' strict decodes (stage decode)
	bodies   *bodyread.Budget // request bodies being received or served
	// callerBodies are the authenticated callers' shares of bodies (callerBodyShare).
	callerBodies *bodyread.Shares
	// writeTimeouts counts responses cut because the client did not read them in time.
	writeTimeouts atomic.Uint64
	// samplingContext are the backends trusted with sampling context (Deps.SamplingContext).
	samplingContext map[string]bool
	now             func() time.Time
	serverInfo      []byte
	instructions    string
	toolsets        // tool sets and search mode (toolsets.go, search.go)
	// edge serves pre-2026 clients (Deps.Edge); nil when they are refused.
	edge EraEdge
	// userOAuth is stage connect's service (Deps.UserOAuth); nil when no backend uses it.
	userOAuth *useroauth.Service
	// htu is the public URL in the form DPoP proofs' htu is compared in; "" without one, when no
	// proof can match.
	htu string
	// drafts is server.draftErrors compiled (drafts.go).
	drafts drafts
	// cards are the endpoints' Server Cards and the AI Catalog (cards.go); nil when off.
	cards *cards
	// clients bounds each client address's work before authentication (clients.go); nil when
	// off.
	clients *clients
}

// New builds the server from validated configuration.
func New(cfg Config, deps Deps) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Backends == nil || deps.Logger == nil {
		return nil, errors.New("mcphttp: Backends and Logger are required")
	}
	if (deps.RateLimits.PerCaller != nil || len(deps.RateLimits.Rules) > 0) && deps.RateLimits.Store == nil {
		return nil, errors.New("mcphttp: rate limits need a store")
	}
	s := &Server{
		cfg:      cfg,
		limits:   cfg.limits(),
		origins:  newOriginPolicy(cfg, deps.Loopback),
		handlers: newHandlers(),
		inflight: newConcurrency(cfg.MaxConcurrent, cfg.MaxConcurrentPerCaller, cfg.MaxListensPerCaller),
		decodes:  newDecodeGate(),
		bodies:   bodyread.NewBudget(cfg.MaxBodyBytesInFlight),
		backends: deps.Backends,
		listens:  upstreams.NewListens(deps.Backends),
		log:      deps.Logger,
		metrics:  deps.Metrics,
		tracer:   deps.Tracer,
		auth:     deps.Auth,
		rate:     deps.RateLimits,
		now:      deps.Clock,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.callerBodies = bodyread.NewShares(s.bodies, callerBodyShare(cfg))
	for _, up := range deps.SamplingContext {
		if s.samplingContext == nil {
			s.samplingContext = map[string]bool{}
		}
		s.samplingContext[up] = true
	}
	s.listensOpen, s.endListens = context.WithCancel(context.Background())
	s.streamsOpen, s.endStreams = context.WithCancel(context.Background())
	if deps.Interceptors != nil {
		s.intercept = &interceptor{set: deps.Interceptors, log: deps.Logger}
		s.rechecks = stagesBetween(stageFirstRechecked, stageNameIntercept)
	}
	if deps.Guardrails != nil {
		s.rails = &railer{engine: deps.Guardrails, rec: deps.GuardrailMetrics, log: deps.Logger,
			backends: deps.Backends, now: s.now}
	}
	if cfg.PublicURL != "" {
		s.htu, _ = dpop.NormalizeURL(cfg.PublicURL)
	}
	s.drafts = compileDrafts(cfg.DraftErrors, deps.AuthorizationContexts, s.log, s.now)
	var err error
	if s.clients, err = newClients(cfg, deps, &s.drafts, s.bodies, s.now); err != nil {
		return nil, err
	}
	if l := s.ClientLimiter(); l != nil && l.Bodies() != nil {
		// A limiter carried on from the previous configuration shares out that one's budget,
		// which its requests still in flight hold: one budget for both.
		s.bodies = l.Bodies()
	}
	s.confirm = &confirmer{codec: deps.MRTR, approvals: deps.Approvals, backends: deps.Backends, log: deps.Logger,
		metrics: deps.Metrics, now: s.now, confirmDestructive: cfg.ConfirmDestructiveTools, drafts: &s.drafts}
	name := deps.Name
	if name == "" {
		name = "mcp-gateway"
	}
	s.serverInfo, _ = json.Marshal(map[string]string{"name": name, "version": deps.Version})
	s.instructions = deps.Instructions
	if err := s.initToolsets(deps); err != nil {
		return nil, err
	}
	s.edge = deps.Edge
	s.userOAuth = deps.UserOAuth
	versions := []string{ProtocolVersion}
	if s.edge != nil {
		versions = append(versions, s.edge.Versions()...)
	}
	if err := s.initCards(name, deps.Version, versions); err != nil {
		return nil, err
	}
	return s, nil
}

// Start starts what the server runs in the background for as long as ctx lasts: the edge's
// (the subscriptions through which replicas hand pre-2026 clients' answers and cancellations to
// each other). Without Start a single replica still serves everything.
func (s *Server) Start(ctx context.Context) {
	if s.edge != nil {
		s.edge.Start(ctx)
	}
}

// EndListens ends every subscriptions/listen of this server, those open now and any opened
// later, with the graceful end (a complete result with the subscription id), after which their
// clients listen again elsewhere: on the configuration a reload put in its place, or another
// replica when this one drains. A pre-2026 GET stream, which runs one, is left to end as a
// call in flight does (a go-sdk client whose GET stream cannot reconnect fails its whole
// session), filtering by the policy of the configuration that replaced this one once it
// follows it (StreamPolicy). A listen has
// nothing in flight that waiting would let finish: each notification it relays after a reload
// would be filtered by the replaced policy, and it would hold a drain for the whole
// server.shutdownTimeout.
func (s *Server) EndListens() { s.endListens() }

// EndStreams is EndListens for a drain: the load balancer has dropped this replica, so every
// pre-2026 GET stream ends as well, those open now and any opened later, and its client opens it
// again on another replica, where the session's subscriptions, kept in the shared store, go on.
// The stream carries an event id (the edge writes one once its listen runs), so a go-sdk client
// counts the end as progress, not as a failed reconnection. Without it the streams held every
// drain for the whole server.shutdownTimeout. A reload does not call it: there a GET stream
// lasts and follows the new policy.
func (s *Server) EndStreams() {
	s.endListens()
	s.endStreams()
}

// WriteTimeouts is the number of responses cut so far because the client did not read them
// within the write deadline (Config.WriteTimeout), for a counter.
func (s *Server) WriteTimeouts() uint64 { return s.writeTimeouts.Load() }

// ClientLimiter is the per-client limiter (server.perClient), nil when its bounds are off, for a
// reloaded configuration to carry on with (Deps.ClientLimiter).
func (s *Server) ClientLimiter() *clientaddr.Limiter {
	if s.clients == nil {
		return nil
	}
	return s.clients.limit
}

// BodyBytesInFlight is the buffer memory request bodies hold now, for a gauge.
func (s *Server) BodyBytesInFlight() int64 { return s.bodies.InUse() }

// Register adds the MCP endpoint's routes to e.
func (s *Server) Register(e *echo.Echo) {
	// net/http keeps a connection's write deadline from one request to the next: every
	// request on this listener starts without the deadline its predecessor's last write set.
	if s.clients != nil {
		s.clients.serve[s.cfg.Path] = true
		for path := range s.sets {
			s.clients.serve[path] = true
		}
	}
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			_ = http.NewResponseController(c.Response()).SetWriteDeadline(time.Time{})
			if s.clients != nil {
				// Here rather than in a middleware of its own, which echo would allocate for
				// every request: this function is allocated anyway.
				return s.clients.hold(c, next)
			}
			return next(c)
		}
	})
	e.POST(s.cfg.Path, s.handlePost)
	s.registerMetadata(e)
	s.registerToolsets(e)
	s.registerApproval(e)
	s.registerConnect(e)
	s.registerCards(e)
	// Streamable HTTP 2026-07-28 has no GET stream and no DELETE (docs/protocol.md §2.1). A
	// pre-2026 client's GET with a session opens a stream of list_changed notifications
	// (legacyget.go); DELETE stays 405, which 2025-11-25 allows.
	methods := []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch}
	if s.edge != nil {
		e.GET(s.cfg.Path, s.handleGet)
		methods = methods[1:]
	}
	refuseOtherMethods(e, s.cfg.Path, methods)
	e.OPTIONS(s.cfg.Path, corsPreflight(s.origins, endpointMethods(s.edge)))
}

// refuseOtherMethods answers 405 with Allow: POST to the methods named at an MCP endpoint's path
// and, through the path's not-found route, to every method no route of it takes (HEAD,
// OPTIONS, TRACE, any extension method), which echo's own fallback would otherwise answer
// with an Allow header listing every method registered there, those refused too, and for
// OPTIONS with 204.
func refuseOtherMethods(e *echo.Echo, path string, methods []string) {
	e.Match(methods, path, methodNotAllowed)
	e.RouteNotFound(path, methodNotAllowed)
}

// pooledBody lists the methods whose request body is referenced by nothing once the request is
// answered (a forwarded call copies what it sends), so its buffer can be reused.
var pooledBody = map[string]bool{
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
}

func methodNotAllowed(c echo.Context) error {
	c.Response().Header().Set("Allow", http.MethodPost)
	return c.NoContent(http.StatusMethodNotAllowed)
}

// handlePost is the edge of the pipeline: request id, panic recovery and the access log wrap
// the pipeline (pipeline.go), and any error it returns is mapped once and written.
func (s *Server) handlePost(c echo.Context) error {
	return s.serve(c, s.run)
}

// handleGet serves GET on the endpoint: the era edge's stream (a pre-2026 client's list_changed
// stream), or 405 as for any other GET, which 2026-07-28 does not have.
func (s *Server) handleGet(c echo.Context) error {
	if !s.edge.ClaimsGet(c.Request()) {
		return methodNotAllowed(c)
	}
	return s.serve(c, func(x *request) error {
		x.hdr = x.r.Header
		return s.edge.ServeGet(&Incoming{x: x})
	})
}

// serve runs one request through run (the pipeline, or the era edge's GET stream) with what
// every request gets: its id, its ClientSink, panic recovery, the access log and the mapping of
// its error.
func (s *Server) serve(c echo.Context, run func(x *request) error) error {
	r := c.Request()
	// The request value and its client sink live and die together: one allocation.
	both := &struct {
		x request
		c ClientSink
	}{x: request{shared: shared{s: s, r: r, hdr: r.Header, ctx: r.Context()}, start: s.now()}, c: ClientSink{w: c.Response(), srv: s, sent: time.Now()}}
	x := &both.x
	x.client = &both.c
	x.out = x.client
	x.requestID = requestID(r)
	x.set = s.endpointSet(c)
	x.requestIDValue = []string{x.requestID}
	x.client.w.Header()[mcpheader.RequestID] = x.requestIDValue
	s.origins.allowCORS(r, x.client.w.Header())
	// Every log line of this request, the authorization decision included, carries its ids.
	x.ctx = logging.WithRequest(x.ctx, x.requestID, traceID(r.Header.Get(mcpheader.TraceParent)))
	x.client.ctx, x.client.requestID = x.ctx, x.requestID
	defer s.metrics.InFlight()()
	// After record: nothing reads the body or the guardrails' state any more. A closure, as
	// bodyBuf is set later.
	defer func() {
		x.in.bodyBuf.Release()
		s.callerBodies.Give(x.bodyShare) // after Release: the share's entry outlives its bytes
		s.rails.release(x)
	}()
	defer x.record()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic serving request", "request_id", x.requestID, "panic", p)
			_ = x.client.Error(mapError(errors.New("panic")))
		}
	}()
	err := s.clients.enter(x)
	if err == nil {
		err = run(x)
	}
	// Given back at once if stage authenticate did not (the request failed before, or its
	// caller could not be authenticated).
	x.unauth.Release()
	x.client.finish()
	// Admission is held until the response is written: a client that reads slowly keeps its
	// slot, as it keeps the result's bytes.
	x.admitted.release()
	if x.client.writeErr != nil || errors.Is(err, errClientWrite) {
		// The client did not take the response (gone, or not reading within the write
		// deadline): nothing more can reach it. Returning releases the backend and the
		// buffers; net/http closes the connection.
		x.client.outcome = outcomeCanceled
		if x.client.status == 0 {
			x.client.status = 499
		}
		return nil
	}
	if err != nil {
		if cut := CutBy(x.ctx); cut != nil && x.in.req != nil && x.in.req.ID != nil {
			// The gateway cancelled the request (it is shutting down): said on the open
			// response, whatever the error the cancellation left. A stream the client opened
			// with GET, which answers no request, just ends.
			err = cut
		} else if x.ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = context.Canceled
		}
		_ = x.client.Error(mapError(err))
	}
	return nil
}

// record ends the request's span, records its metrics and writes its access log line. Argument
// values, tokens and bodies never appear in any of them.
func (x *request) record() {
	s, c := x.s, x.client
	method := ""
	if x.in.req != nil {
		method = x.in.req.Method
	}
	d := s.now().Sub(x.start)
	x.endRequestSpan()
	if c.streamClosed != nil {
		c.streamClosed()
	}
	// A person thinking (a pre-2026 call waiting for its client's input) is not latency.
	s.metrics.ObserveRequestWaited(method, c.outcome, d, x.waited)
	if method == "tools/call" && x.route.upstream != "" {
		s.metrics.ToolCall(x.route.upstream, x.route.upstreamName, c.outcome)
		if x.viaCallTool {
			s.setMetrics.CallTool(x.route.upstream, x.route.upstreamName, c.outcome)
		}
	}
	era, pv := eraModern, x.era.version
	if pv == "" && x.in.meta != nil {
		pv = x.in.meta.ProtocolVersion
	}
	if x.era.legacy {
		era = eraLegacy
		s.metrics.LegacyRequest(method, c.outcome)
	}
	attrs := [...]slog.Attr{
		slog.String("request_id", x.requestID),
		slog.String("method", logToken(method)),
		slog.String("name", logName(x)),
		slog.String("upstream", x.route.upstream),
		slog.String("subject", x.subject()),
		slog.Int("status", c.status),
		slog.String("outcome", c.outcome),
		slog.Bool("sse", c.sse),
		slog.Duration("duration", d),
		slog.String("era", era),
		slog.String("pv", logToken(pv)),
		slog.String("session", x.era.session),
		{}, // the client's address, where the operator turned it on
	}
	n := len(attrs) - 1
	if s.cfg.LogClientAddress {
		attrs[n], n = clientAttr(x.peer), n+1
	}
	logging.LogAttrs(x.ctx, s.log, slog.LevelInfo, "request", attrs[:n]...)
}

// Values of the access log's era attribute.
const (
	eraModern = "modern"
	eraLegacy = "legacy"
)

// requestID returns the client's X-Request-Id when it is a short token of visible ASCII, and a
// fresh random one otherwise, so a hostile value can neither forge log structure nor grow it.
func requestID(r *http.Request) string {
	if id := r.Header.Get(mcpheader.RequestID); id != "" && len(id) <= 128 {
		ok := true
		for i := 0; i < len(id) && ok; i++ {
			ok = id[i] > 0x20 && id[i] < 0x7f
		}
		if ok {
			return id
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxLogToken bounds a client-sent token the access log writes as sent.
const maxLogToken = 64

// logToken is a client-sent token (a method name, a protocol version) as the access log writes
// it: as sent when it is at most maxLogToken bytes of visible ASCII, as every real one is, else
// "_other", the value metrics and spans fold unknown methods into. The line is written for
// requests refused before authentication too, so what a client puts there must neither grow it
// without bound nor carry text of its choosing, as for the request id.
func logToken(s string) string {
	if len(s) > maxLogToken {
		return spanOther
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x7f {
			return spanOther
		}
	}
	return s
}

func quote(s string) string {
	if len(s) > 128 {
		s = s[:128] + "…"
	}
	b, _ := json.Marshal(s)
	return "'" + string(b[1:len(b)-1]) + "'"
}
