package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/approval"
	"github.com/mcp-gateway/gateway/internal/certreload"
	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/logging"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/mcphttp/pre2026"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Listeners reports where a started gateway listens; tests pass a channel to learn the ports
// chosen for ":0" addresses.
type Listeners struct {
	MCP, Admin string
}

// runOptions are what run needs besides the configuration.
type runOptions struct {
	getenv  func(string) string
	stderr  io.Writer
	started chan<- Listeners
	// bound are listeners the caller opened (ServeOn); a nil one is opened from cfg.
	bound bound
	// reload, when set, applies a new configuration on every signal of its trigger (reload.go).
	reload *reloadSource
	// streamAdmitted, when set, is called with each GET stream admitted to a component set,
	// before the set registers it (gateway.streamAdmitted; tests).
	streamAdmitted func(*http.Request)
}

// run is serve with the configuration reloadable (docs/deploy.md, "Changing the configuration").
func run(ctx context.Context, cfg *Config, o runOptions) error {
	if err := cfg.preflight(o.getenv); err != nil { // before anything is built or logged
		return err
	}
	// Log lines go through a bounded queue drained by one goroutine, so a slow log destination
	// never stalls a request; lines that do not fit are counted and reported.
	logOut, err := logging.New(o.stderr, logging.Config{Format: cfg.Log.Format})
	if err != nil {
		return err
	}
	defer logOut.Close()
	log, err := logging.NewLogger(logOut, cfg.Log.Level, cfg.Log.Format)
	if err != nil {
		return err
	}
	if cfg.Redis.enabled() {
		useRedisLogger(log)
	}
	warnServing(cfg, log)
	g, certs, err := prepare(cfg, o.getenv, log)
	if err != nil {
		return err
	}
	defer g.close()
	g.streamAdmitted = o.streamAdmitted
	if err := g.registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcp_gateway_log_lines_dropped_total",
		Help: "Log lines dropped because the log destination could not keep up.",
	}, func() float64 { return float64(logOut.Dropped()) })); err != nil {
		return err
	}
	mcpSrv, adminSrv, addrs, errc, err := g.listen(cfg, certs, o.bound)
	if err != nil {
		return err
	}

	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	g.start(runCtx)
	if certs != nil {
		go certs.Run(runCtx)
	}
	log.Info("gateway started", "version", cfg.buildVersion(), "mcp", addrs.MCP+cfg.Server.Path,
		"admin", addrs.Admin, "upstreams", len(cfg.Upstreams))
	if o.started != nil {
		o.started <- addrs
	}
	if err := g.serveUntil(ctx, errc, o.reload); err != nil {
		return err
	}
	stopIgnoring := ignoreReloads(log, o.reload)
	defer stopIgnoring()
	return drain(log, g, mcpSrv, adminSrv)
}

// serveUntil reloads the configuration on every signal of reload until ctx is done (nil), or
// returns a listener's failure.
func (g *gateway) serveUntil(ctx context.Context, errc <-chan error, reload *reloadSource) error {
	for {
		select {
		case err := <-errc:
			return err
		case <-reload.signals():
			reload.report(g.reloadFrom(ctx, reload))
		case <-ctx.Done():
			return nil
		}
	}
}

// warnServing says loudly, at start-up and on every reload, what of cfg serves in a way its
// operator may not mean: without authentication, or with a policy that allows nothing
// (policyNote), which a reload can bring about as well as a start.
func warnServing(cfg *Config, log *slog.Logger) {
	if cfg.Auth.Disabled {
		log.Warn("AUTHENTICATION IS DISABLED: every caller can list and call every backend tool; use only for local development")
	}
	if note := policyNote(cfg); note != "" {
		log.Warn(note)
	}
}

// prepare is what serve does between a checked configuration and binding its ports: every
// component built and the listener's certificate loaded. On error nothing is left open.
func prepare(cfg *Config, getenv func(string) string, log *slog.Logger) (*gateway, *certreload.Reloader, error) {
	g, err := build(cfg, getenv, log)
	if err != nil {
		return nil, nil, err
	}
	certs, err := newCertReloader(cfg, log)
	if err != nil {
		g.close()
		return nil, nil, err
	}
	return g, certs, nil
}

// newCertReloader loads the TLS certificate when the listener terminates HTTPS itself.
func newCertReloader(cfg *Config, log *slog.Logger) (*certreload.Reloader, error) {
	if cfg.Server.TLS.CertFile == "" {
		return nil, nil
	}
	certs, err := certreload.New(cfg.Server.TLS.CertFile, cfg.Server.TLS.KeyFile, certreload.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("server.tls: %w", err)
	}
	return certs, nil
}

// listen opens both listeners and starts serving; errc receives a listener's failure.
func (g *gateway) listen(cfg *Config, certs *certreload.Reloader, b bound) (mcpSrv, adminSrv *http.Server, addrs Listeners, errc chan error, err error) {
	mcpLn, adminLn, err := b.open(cfg)
	if err != nil {
		return nil, nil, addrs, nil, err
	}
	mcpSrv = g.httpServer(cfg, mcpHandler{g})
	// Each connection is tracked, so that requests a reload leaves running on the previous
	// configuration for longer than server.shutdownTimeout can be ended (swap.go).
	mcpSrv.ConnContext, mcpSrv.ConnState = g.conns.connContext, g.conns.connState
	if certs != nil {
		// Certificates are reloaded when their files change (cert-manager rotation); open
		// connections keep the certificate they were established with.
		mcpSrv.TLSConfig = certreload.ServerTLSConfig(certs)
	}
	adminSrv = g.httpServer(cfg, adminHandler{g})
	errc = make(chan error, 2)
	go func() { errc <- serveOn(mcpSrv, mcpLn) }()
	go func() { errc <- serveOn(adminSrv, adminLn) }()
	return mcpSrv, adminSrv, Listeners{MCP: mcpLn.Addr().String(), Admin: adminLn.Addr().String()}, errc, nil
}

// drain is the SIGTERM sequence. Closing idle keep-alive connections at the moment of SIGTERM
// races the load balancer reusing them, so the listener keeps serving normally, reporting
// not-ready, for DrainDelay first. The drain settings are the running configuration's: a
// reload may have changed them.
func drain(log *slog.Logger, g *gateway, mcpSrv, adminSrv *http.Server) error {
	cfg := g.stopReloads()
	log.Info("draining", "delay", cfg.Server.DrainDelay.String()) // "5s", not nanoseconds in JSON
	time.Sleep(cfg.Server.DrainDelay)
	// The load balancer has dropped the replica: its listens and pre-2026 GET streams end now
	// (gracefully; their clients listen again on another replica) rather than hold the drain
	// for the whole shutdown timeout, since a listen never finishes by itself.
	g.sets.each(func(c *components) { c.mcpServer.EndStreams() })
	// The requests still running when the deadline is near are cancelled and answered with
	// mcphttp.ErrShuttingDown on their open responses; the connections are closed only after
	// that, or at the deadline.
	grace := min(shutdownAnswerGrace, cfg.Server.ShutdownTimeout/10)
	deadline := time.Now().Add(cfg.Server.ShutdownTimeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-grace))
	defer cancel()
	err := mcpSrv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		n := g.conns.cutAll(mcphttp.ErrShuttingDown)
		log.Warn("shutdown deadline reached; requests still running are answered with an error, then their connections closed",
			"connections", n)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if err = mcpSrv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			err = mcpSrv.Close()
		}
	}
	_ = adminSrv.Close()
	log.Info("stopped")
	return err
}

// shutdownAnswerGrace is the part of server.shutdownTimeout (at most a tenth of it) kept, at
// its end, for the requests cancelled then to write their error before their connections close.
const shutdownAnswerGrace = time.Second

func serveOn(srv *http.Server, ln net.Listener) error {
	var err error
	if srv.TLSConfig != nil {
		err = srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig.GetCertificate
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// gateway is the running process: what lives as long as it does (the metrics, the shared
// store, the sealing keys, the tracer, the listeners' connections) and the components built
// from the running configuration, which a reload replaces as a whole (reload.go, swap.go).
type gateway struct {
	registry  *prometheus.Registry
	rec       *metrics.Recorder
	searchRec *metrics.ToolsetRecorder   // tool search metrics (toolsets.go)
	railRec   *metrics.GuardrailRecorder // guardrail metrics, registered with the first rules (guardrails.go)
	embedRec  *metrics.Embeddings        // embeddings endpoint metrics, registered when first on (embeddings.go)
	store     store.Store
	lists     *listChangedRelay // nil without a shared store that carries notices
	notices   store.Notices     // the shared store's notices; nil with the in-memory store
	// interceptRec records the interceptors (interceptors.go); nil when the process started
	// without any.
	interceptRec *metrics.Interceptors
	// callerCircuits counts the breakers' per-caller circuits (callercircuit.go).
	callerCircuits *callerCircuitMetrics
	// endpointNotices carry a pre-2026 client's answers between replicas (the shared store's
	// notices) and, without a shared store, between this process's component sets
	// (localnotices.go).
	endpointNotices store.Notices
	// legacyState keeps what pre-2026 sessions set (their log level and subscriptions): the
	// shared store with Redis, else a store of the process's own, apart from the
	// confirmations' single-use nonces, which no client's state may crowd out.
	legacyState pre2026.StateStore
	replays     *mrtr.EpochGuard
	// redisVersion says, in the readiness check, whether Redis is new enough; nil without
	// Redis.
	redisVersion *versionGate
	// redisScripts says, in the readiness check, whether Redis runs the gateway's scripts (an
	// ACL may refuse them while it grants the keys); nil without Redis.
	redisScripts func(context.Context) error
	codec        *mrtr.Codec
	ring         *seal.KeyRing
	replay       authz.ReplayCache // the store's Replay: DPoP proofs' jti
	tracer       *tracing.Tracer
	log          *slog.Logger
	getenv       func(string) string
	// approvalKeys and approvalObs serve every approval page built, from the first on
	// (approval.go): its records must open after a reload.
	approvalKeys *seal.KeyRing
	approvalObs  *metrics.Approval
	// records is the shared store's records (the per-user OAuth vault's), unwrapped from the
	// metrics; userOAuthObs and vaultSize are per-user OAuth's metrics, registered by the
	// first service built (useroauth.go).
	records      store.Records
	userOAuthObs *metrics.UserOAuth
	vaultSize    *metrics.VaultSize

	// current is the component set new requests are served by.
	current atomic.Pointer[components]
	conns   connTracker
	sets    liveSets
	reloads reloadState
	// streamAdmitted, when not nil, is called with each GET stream between its admission to a
	// component set and its registration there, where a reload may replace the set (tests).
	streamAdmitted func(*http.Request)
}

// build assembles the process and the components of cfg.
func build(cfg *Config, getenv func(string) string, log *slog.Logger) (g *gateway, err error) {
	g = &gateway{registry: prometheus.NewRegistry(), log: log, getenv: getenv}
	// The failure paths return a nil gateway: close the one being built, not the result.
	built := g
	defer func() {
		if err != nil {
			built.close()
		}
	}()
	if g.rec, err = newRecorder(cfg, g.registry); err != nil {
		return nil, err
	}
	if g.searchRec, err = newToolsetRecorder(cfg, g.registry); err != nil {
		return nil, err
	}
	if g.interceptRec, err = newInterceptorRecorder(cfg, g.registry); err != nil {
		return nil, err
	}
	if g.callerCircuits, err = newCallerCircuitMetrics(g.registry); err != nil {
		return nil, err
	}
	// Digested as buildState and the tracer read them: a reload tells what changed since.
	g.reloads.contentKey = contentKey()
	g.reloads.content = restartOnlyContent(cfg, getenv, g.reloads.contentKey)
	if err := g.buildState(cfg, getenv, log); err != nil {
		return nil, err
	}
	if g.lists != nil {
		g.lists.apply = g.sets.listChanged
	}
	if g.tracer, err = cfg.Tracing.newTracer(cfg.buildVersion(), getenv, log); err != nil {
		return nil, err
	}
	c, err := g.buildComponents(cfg, nil)
	if err != nil {
		return nil, err
	}
	g.activate(c, nil)
	g.reloads.running = cfg
	if err := g.registerEdgeMetrics(); err != nil {
		return nil, err
	}
	if err := g.reloads.register(g.registry, time.Now()); err != nil {
		return nil, err
	}
	return g, nil
}

// components are everything built from one configuration: the backends, the policy, the
// endpoint and the admin routes. Requests in flight keep the set they started on; a reload
// builds a new set and retires the old one once they are done (swap.go).
type components struct {
	cfg       *Config
	backends  *upstreams.Registry
	auth      *authz.Service     // nil without authentication
	userOAuth *useroauth.Service // nil when no backend uses per-user OAuth
	approvals *approval.Service  // nil without the approval page
	mcpServer *mcphttp.Server
	mcp       *echo.Echo
	adminEcho *echo.Echo
	admin     *mcphttp.Admin
	// interceptors call the configured interceptors; nil without any.
	interceptors *intercept.Set
	// embedder is the embeddings endpoint behind tool search; nil when it is off.
	embedder *embeddings.Embedder
	// leased is the rate limiter leasing from Redis; nil without one. A reload keeps it.
	leased *store.Leased
	// pinGuard is the backends' pinning (nil without a pins section); it writes back the
	// trust-on-first-use pins a shared store forgot while the set runs.
	pinGuard *pins.Guard
	// current is true while the set serves new requests: only then do its backends' health
	// and circuit changes reach the gauges, which describe what new requests meet.
	current atomic.Bool
	gate    gate
	// streams are the GET streams open on the set, judged when a reload replaces it
	// (streams.go).
	streams streamSet
	cancel  context.CancelFunc // ends the set's background work; nil until started
	closing sync.Once
	// retired is closed once the set, replaced, has been closed and forgotten (or the process
	// stops): a reload waits on it to keep at most two sets live (reload.go, awaitRoom).
	retired chan struct{}
}

// buildComponents builds the components of cfg on the process's shared parts. prev is the set
// cfg replaces (nil at start-up): its issuers are taken over where their settings did not
// change, and so are its rate-limit leases and its per-client limiter where theirs did not.
func (g *gateway) buildComponents(cfg *Config, prev *components) (c *components, err error) {
	c = &components{cfg: cfg, gate: gate{drained: make(chan struct{})}, retired: make(chan struct{})}
	built := c
	defer func() {
		if err != nil {
			built.close()
		}
	}()
	if err := g.buildServices(cfg, c, prev); err != nil {
		return nil, err
	}
	parts, err := g.buildEndpointParts(cfg, c, prev)
	if err != nil {
		return nil, err
	}
	if c.mcpServer, err = mcphttp.New(cfg.serverConfig(), g.endpointDeps(cfg, c, parts)); err != nil {
		return nil, err
	}
	if err := g.mountAll(cfg, c); err != nil {
		return nil, err
	}
	return c, nil
}

// buildServices builds what c's endpoint and admin routes stand on, in order of need: the
// approval page, per-user OAuth (which confirms through it), the backends (which take its
// users' tokens), and authentication with the policy.
func (g *gateway) buildServices(cfg *Config, c, prev *components) (err error) {
	if c.approvals, err = g.buildApproval(cfg); err != nil {
		return err
	}
	if c.userOAuth, err = g.buildUserOAuth(cfg, c.approvals); err != nil {
		return err
	}
	if c.backends, err = g.buildBackends(cfg, c, prev); err != nil {
		return err
	}
	c.auth, err = g.buildAuth(cfg, prev)
	return err
}

// buildAuth builds authentication and the policy of cfg, nil when authentication is off; the
// issuers of prev whose settings did not change are taken over with their keys.
func (g *gateway) buildAuth(cfg *Config, prev *components) (*authz.Service, error) {
	if cfg.Auth.Disabled {
		return nil, nil
	}
	var previous *authz.Authenticator
	if prev != nil && prev.auth != nil {
		previous = prev.auth.Authenticator()
	}
	return authz.New(cfg.Auth.Config, authz.Options{ResourceURI: cfg.Server.PublicURL, Logger: g.log,
		ToolsetResourceURIs: mcphttp.ToolsetResources(cfg.serverConfig()), Previous: previous,
		CaseInsensitive: caseInsensitiveUpstreams(cfg.Upstreams),
		DPoP:            authz.DPoPOptions{Replay: g.replay, Keys: g.ring, MemoryBegan: g.replays.Began}})
}

// endpointParts are the parts of c's endpoint that only the endpoint holds.
type endpointParts struct {
	limits mcphttp.RateLimits
	edge   mcphttp.EraEdge
	rails  *guardrails.Engine
	// clients is prev's per-client limiter, carried on (prevClientLimiter); nil for a new one.
	clients *clientaddr.Limiter
}

// buildEndpointParts compiles the rate limits (keeping prev's leases), the pre-2026 edge, the
// interceptors, the guardrails and the embeddings endpoint of cfg; c keeps those it closes.
func (g *gateway) buildEndpointParts(cfg *Config, c, prev *components) (p endpointParts, err error) {
	var prevLeased *store.Leased
	if prev != nil {
		prevLeased = prev.leased
	}
	if p.limits, err = cfg.compileRateLimits(g.store, prevLeased); err != nil {
		return p, err
	}
	c.leased, _ = p.limits.Store.(*store.Leased)
	if p.edge, err = g.buildEdge(cfg); err != nil {
		return p, err
	}
	if c.interceptors, err = g.buildInterceptors(cfg); err != nil {
		return p, err
	}
	if p.rails, err = g.buildGuardrails(cfg); err != nil {
		return p, err
	}
	if c.embedder, err = g.buildEmbedder(cfg); err != nil {
		return p, err
	}
	// A reload keeps what client addresses hold and have failed, unless their bounds changed:
	// a reload during a flood of bad tokens must not give it a fresh start.
	p.clients = prevClientLimiter(prev, cfg)
	return p, nil
}

// endpointDeps are the MCP endpoint's dependencies: c's services and parts on the process's
// shared ones.
func (g *gateway) endpointDeps(cfg *Config, c *components, p endpointParts) mcphttp.Deps {
	return mcphttp.Deps{
		Approvals:  c.approvals,
		UserOAuth:  c.userOAuth,
		Auth:       c.auth,
		Backends:   c.backends,
		Logger:     g.log,
		Version:    cfg.buildVersion(),
		Loopback:   loopback.Addr(cfg.Server.Listen),
		Metrics:    g.rec,
		MRTR:       g.codec,
		RateLimits: p.limits,
		Tracer:     g.tracer,
		// Tool search metrics (docs/toolsets.md).
		ToolsetMetrics: g.searchRec,
		Embeddings:     c.embedder,
		Edge:           p.edge,
		Interceptors:   c.interceptors,
		// The handles of denials (server.draftErrors: [denials]) open on every replica.
		AuthorizationContexts: g.ring.Sealer(seal.PurposeAuthorizationContext),
		// Built-in guardrails (docs/guardrails.md); nil without rules.
		Guardrails:       p.rails,
		GuardrailMetrics: g.railRec,
		// Tool sets select these backends' resources case-folded, as policy does.
		CaseInsensitive: caseInsensitiveUpstreams(cfg.Upstreams),
		// Sampling requests of these backends may ask the client for context (samplingContext).
		SamplingContext: samplingContextUpstreams(cfg.Upstreams),
		ClientLimiter:   p.clients,
	}
}

// mountAll reads the admin secrets of cfg and mounts c's endpoint and admin routes.
func (g *gateway) mountAll(cfg *Config, c *components) error {
	explainSecret, err := cfg.Admin.Explain.resolveSecret(g.getenv)
	if err != nil {
		return err
	}
	adminToken, err := cfg.Admin.resolveToken(g.getenv)
	if err != nil {
		return err
	}
	g.mount(cfg, c, explainSecret, adminToken)
	return nil
}

// prevClientLimiter is the per-client limiter of the previous configuration when its bounds and
// the body budget it shares out are the same as cfg's, for the new one to carry on (with that
// budget); nil otherwise.
func prevClientLimiter(prev *components, cfg *Config) *clientaddr.Limiter {
	if prev == nil {
		return nil
	}
	was, is := prev.cfg.Server, cfg.Server
	if prev.mcpServer == nil || was.PerClient != is.PerClient ||
		was.MaxBodyBytesInFlight != is.MaxBodyBytesInFlight || was.MaxBodyBytes != is.MaxBodyBytes {
		return nil
	}
	return prev.mcpServer.ClientLimiter()
}

// buildEdge builds the pre-2026 edge of a configuration, or nil when pre-2026 clients are
// refused (legacy.enabled off): nil, not a nil *pre2026.Edge, which the server would take for an
// edge. Its notices carry a client's answers between replicas, and between this process's
// configurations across a reload; its sessions' state lives in the store every configuration of
// the process shares (legacyState).
func (g *gateway) buildEdge(cfg *Config) (mcphttp.EraEdge, error) {
	if !cfg.Legacy.Enabled {
		return nil, nil
	}
	return pre2026.New(cfg.Legacy, pre2026.Deps{Keys: g.ring, Notices: g.endpointNotices, State: g.legacyState,
		Metrics: g.rec, Logger: g.log})
}

// buildState sets up what a later request depends on: the sealing key ring (derived once, here),
// the shared store, and the requestState codec with its epoch guard.
func (g *gateway) buildState(cfg *Config, getenv func(string) string, log *slog.Logger) error {
	ring, ephemeral, err := cfg.MRTR.keyRing(getenv)
	if err != nil {
		return err
	}
	g.ring = ring
	if ephemeral {
		log.Warn("no mrtr.keys configured: requestState and list cursors use a random per-process key; run a single replica only")
	}
	if g.store, err = cfg.Redis.newStore(getenv, log, g.registry); err != nil {
		return err
	}
	g.records, _ = g.store.(store.Records)
	if vc, ok := g.store.(store.VersionChecker); ok {
		g.redisVersion = &versionGate{check: vc.CheckVersion}
	}
	if sc, ok := g.store.(store.ScriptChecker); ok {
		g.redisScripts = sc.CheckScripts
	}
	if n, ok := g.store.(store.Notices); ok {
		g.notices, g.endpointNotices = n, n
		g.lists = newListChangedRelay(n, g.rec, log)
	} else {
		g.endpointNotices = &localNotices{}
	}
	g.legacyState = g.store
	if !cfg.Redis.enabled() {
		if g.legacyState, err = store.NewMemory(store.MemoryOptions{}); err != nil {
			return err
		}
	}
	// DPoP proofs' jti: in Redis across replicas, in this process's memory store on one.
	var answers store.Replay // each caller's answered rounds, by the same records
	getter, _ := g.store.(store.ReplayGetter)
	if r, ok := g.store.(store.ReplayOnce); ok {
		g.replay, answers = r, r
		if cfg.Redis.enabled() {
			g.replay = countedReplay{ReplayOnce: r, rec: g.rec}
			answers = g.replay
		}
	}
	if cfg.Redis.enabled() {
		counted := countedStore{Store: g.store, rec: g.rec}
		g.store = counted
		if l, ok := counted.Store.(store.Leaser); ok {
			g.store = countedLeaser{countedStore: counted, leaser: l}
		}
	}
	// The epoch guard keeps confirmations single-use even when the store loses its memory. It
	// is primed now and by every Redis readiness check; a store down at start-up is primed
	// later.
	g.replays = mrtr.GuardEpoch(g.store, cfg.MRTR.TTL, nil)
	if err := primeEpoch(g.replays); err != nil {
		log.Warn("shared store not reachable at start-up; confirmations fail closed until it is", "error", err)
	}
	if g.replay != nil && getter != nil {
		g.replay = epochReplay{ReplayCache: g.replay, get: getter, guard: g.replays, rec: g.rec, counted: cfg.Redis.enabled()}
	}
	g.codec, err = mrtr.New(ring.Sealer(seal.PurposeRequestState), mrtr.Config{TTL: cfg.MRTR.TTL,
		MaxAnswersPerCaller: cfg.MRTR.MaxAnswersPerCaller, Answers: answers}, g.replays, nil)
	return err
}

// buildBackends builds the backend registry of c with the metrics hooks, and its pinning,
// which keeps the trust-on-first-use pins prev's held.
func (g *gateway) buildBackends(cfg *Config, c, prev *components) (*upstreams.Registry, error) {
	secrets, err := cfg.resolveSecrets(g.getenv)
	if err != nil {
		return nil, err
	}
	var prevGuard *pins.Guard
	if prev != nil {
		prevGuard = prev.pinGuard
	}
	if c.pinGuard, err = newPinGuard(cfg, g.getenv, g.store, g.rec, g.log, g.storeBegan(cfg), prevGuard); err != nil {
		return nil, err
	}
	guard := c.pinGuard
	rec := g.rec
	return upstreams.New(cfg.upstreamsConfig(secrets), upstreams.Options{
		Logger:              g.log,
		Cursors:             g.ring.Sealer(seal.PurposeCursor),
		Observe:             rec.ObserveUpstream,
		NotificationDropped: rec.CallNoteDropped,
		// The hooks run under the breaker lock or on the list path: the recorder's methods
		// are non-blocking. Only the current set's health reaches the gauges (activate sets
		// them when a set becomes current).
		CircuitState: func(upstream string, state int) {
			if c.current.Load() {
				rec.SetCircuitState(upstream, circuitGauge(state))
			}
		},
		CallerCircuit: g.callerCircuits.hook(breakerUpstream),
		RateLimited:   func(upstream string) { metrics.UpstreamRateLimitWait(rec, upstream) },
		CacheResult:   rec.ListCache,
		CacheEvicted:  rec.CatalogCacheEviction,
		// Tool-call metrics label only names a backend published (bounded per backend).
		OnTools: g.onTools(rec),
		OnHealth: func(upstream string, up bool) {
			if c.current.Load() {
				rec.SetUpstreamUp(upstream, up)
			}
		},
		OnListChanged: g.lists.onListChanged(),
		UserTokens:    userTokens(c.userOAuth),
		// Zero is upstreams' default, negative unbounded: the same meaning as in server:.
		MaxResultBytesInFlight: cfg.Server.MaxResultBytesInFlight,
		Pins:                   guard,
		// The schema guardrail validates against the schemas the caller's list shows.
		ToolSchemas: cfg.Guardrails.ValidatesSchemas(),
	})
}

// mount puts c's MCP endpoint and admin routes on their echo instances.
func (g *gateway) mount(cfg *Config, c *components, explainSecret, adminToken string) {
	c.mcp = newEcho()
	c.mcpServer.Register(c.mcp)
	var checks []mcphttp.Check
	if cfg.Redis.enabled() {
		advisory := cfg.Admin.RedisReadiness == redisReadinessAdvisory
		checks = append(checks, mcphttp.Check{Name: "redis", Run: func(ctx context.Context) error {
			if err := g.replays.Prime(ctx); err != nil {
				return err
			}
			if err := g.redisVersion.run(ctx); err != nil {
				return err
			}
			// Every confirmation, rate limit and approval runs a script; a Redis that
			// refuses them (NOPERM) while it takes the marker's writes is as unusable.
			if g.redisScripts != nil {
				return g.redisScripts(ctx)
			}
			return nil
		}, Advisory: advisory})
		if st, ok := g.notices.(interface{ Subscribed() error }); ok {
			// Not ready until Redis confirmed the notice subscriptions: an answer another
			// replica hands over before then is lost (store.Redis.Subscribed).
			checks = append(checks, mcphttp.Check{Name: "notices", Run: func(context.Context) error { return st.Subscribed() },
				Advisory: advisory})
		}
	}
	if c.auth != nil {
		// Not ready until every issuer's keys were fetched once: a replica that cannot verify
		// any token must not be sent traffic (a typo'd issuer URL is otherwise silent).
		authn := c.auth.Authenticator()
		checks = append(checks, mcphttp.Check{Name: "issuers", Run: func(context.Context) error { return authn.KeysReady() }})
	}
	c.admin = mcphttp.NewAdmin(mcphttp.AdminDeps{Backends: c.backends, Gatherer: g.registry,
		Pprof: cfg.Admin.Pprof, Checks: checks, Auth: c.auth, Loopback: loopback.Addr(cfg.Admin.Listen),
		Explain: cfg.Admin.Explain.Enabled, ExplainSecret: explainSecret, Token: adminToken, UserOAuth: c.userOAuth})
	c.adminEcho = newEcho()
	c.admin.Register(c.adminEcho)
}

// close ends the process's parts once every component set is closed.
func (g *gateway) close() {
	g.sets.closeAll()
	if g.tracer != nil {
		shutdownTracer(g.tracer, g.log) // after draining, so the last requests' spans go out
	}
	if g.store != nil {
		_ = g.store.Close()
	}
}

// circuitGauge maps upstreams' circuit states onto the gauge values the metric documents
// (0 closed, 1 half-open, 2 open), which dashboards and alerts rely on.
func circuitGauge(state int) int {
	switch state {
	case upstreams.CircuitOpen:
		return metrics.CircuitOpen
	case upstreams.CircuitHalfOpen:
		return metrics.CircuitHalfOpen
	}
	return metrics.CircuitClosed
}

// newRecorder registers the gateway's metrics and the Go runtime and process collectors on reg,
// the registry the admin listener serves (no global registry).
func newRecorder(cfg *Config, reg *prometheus.Registry) (*metrics.Recorder, error) {
	if err := metrics.RegisterRuntime(reg); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(cfg.Upstreams))
	for _, u := range cfg.Upstreams {
		names = append(names, u.Name)
	}
	return metrics.New(reg, metrics.Options{Upstreams: names, Version: cfg.buildVersion()})
}

func primeEpoch(g *mrtr.EpochGuard) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return g.Prime(ctx)
}

func newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	return e
}

// registerEdgeMetrics exports what bounds the client-facing side: responses cut because the
// client did not read them, and the memory held by request bodies and relayed results. Each sums
// over the component sets alive: the current one and those still finishing requests.
func (g *gateway) registerEdgeMetrics() error {
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "mcp_gateway_client_write_timeouts_total",
			Help: "Responses cut because the client did not read them within the write deadline.",
		}, func() float64 { return float64(g.sets.writeTimeouts()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_gateway_request_body_bytes_in_flight",
			Help: "Buffer memory held by request bodies being received or served (server.maxBodyBytesInFlight).",
		}, func() float64 { return float64(g.sets.bodyBytesInFlight()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_gateway_result_bytes_in_flight",
			Help: "Buffer memory held by backend responses being relayed (server.maxResultBytesInFlight).",
		}, func() float64 { return float64(g.sets.resultBytesInFlight()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_gateway_config_live",
			Help: "Configurations live on this replica: the one serving, and a replaced one while its requests finish (at most 2).",
		}, func() float64 { return float64(g.sets.count()) }),
	} {
		if err := g.registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// httpServer applies the listener limits. There is no WriteTimeout: it would cut legitimate
// long-lived SSE streams. The MCP endpoint instead bounds each request's body read and every
// write itself (server.bodyReadTimeout, server.writeTimeout), and the backends' own timeouts
// bound each call. ReadTimeout (the headers' time and the body's) bounds what net/http reads
// of a request it answers itself, before any handler: an Expect it does not know is 417, after
// which it reads the rest of the body (up to 256 KiB) before it lets the connection go, and
// without a deadline a client that never sends it would hold the connection for as long as it
// liked. A handler sets the body's own deadline, and net/http clears the deadline once a body
// is read, so neither a slow call nor a long stream is cut by it. Like the listeners' other
// limits it keeps its values at start; a reloaded bodyReadTimeout is what handlers set. What
// net/http reports about a connection (a failed TLS handshake, an HTTP/2 connection without its
// preface: a line any client can cause) is a line of the gateway's log, in its format, at its
// level, through its queue.
func (g *gateway) httpServer(cfg *Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		ReadTimeout:       requestReadTimeout(cfg),
		IdleTimeout:       cfg.Server.IdleTimeout,
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
	}
}

// requestReadTimeout is the time net/http gives a request's headers and body together: the
// headers' timeout and the body's, none when either is off.
func requestReadTimeout(cfg *Config) time.Duration {
	h, b := cfg.Server.ReadHeaderTimeout, cfg.Server.BodyReadTimeout
	if h <= 0 || b < 0 {
		return 0
	}
	if b == 0 {
		b = mcphttp.DefaultBodyReadTimeout
	}
	return h + b
}

// bound are listeners opened before the gateway is built; a nil one is opened from cfg.
type bound struct{ mcp, admin net.Listener }

// open returns b's listeners, opening the missing ones at cfg's addresses.
func (b bound) open(cfg *Config) (mcpLn, adminLn net.Listener, err error) {
	mcpLn, adminLn = b.mcp, b.admin
	if mcpLn == nil {
		if mcpLn, err = net.Listen("tcp", cfg.Server.Listen); err != nil {
			return nil, nil, fmt.Errorf("MCP listener: %w", err)
		}
	}
	if adminLn == nil {
		if adminLn, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			mcpLn.Close()
			return nil, nil, fmt.Errorf("admin listener: %w", err)
		}
	}
	return mcpLn, adminLn, nil
}

// ServeOn runs the gateway with cfg, as `gateway serve` does, until ctx is done, on listeners
// the caller opened: for a caller that must know the addresses before cfg is complete (the
// demo, whose public URL and sign-in redirect URI name the port chosen for a ":0" address).
// cfg must come from NewConfig and have passed Complete, so the demo runs exactly what `serve`
// runs, defaults included. cfg.Server.Listen and cfg.Admin.Listen are not used; started, when
// not nil, receives the listeners' addresses once both accept connections. The listeners are
// closed when ServeOn returns.
func ServeOn(ctx context.Context, cfg *Config, mcpLn, adminLn net.Listener, stderr io.Writer, started chan<- Listeners) error {
	defer mcpLn.Close()
	defer adminLn.Close()
	return run(ctx, cfg, runOptions{getenv: func(string) string { return "" }, stderr: stderr, started: started,
		bound: bound{mcpLn, adminLn}})
}
