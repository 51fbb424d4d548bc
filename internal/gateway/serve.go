package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/certreload"
	"github.com/mcp-gateway/gateway/internal/logging"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Listeners reports where a started gateway listens; tests pass a channel to learn the ports
// chosen for ":0" addresses.
type Listeners struct {
	MCP, Admin string
}

// serve runs the gateway until ctx is done, then drains: not-ready first while still serving,
// then stop accepting and let in-flight requests finish (docs/deploy.md).
func serve(ctx context.Context, cfg *Config, getenv func(string) string, stdout, stderr io.Writer, started chan<- Listeners) error {
	return serveBound(ctx, cfg, getenv, bound{}, stdout, stderr, started)
}

// serveBound is serve on the listeners b holds, opening the others from cfg.
func serveBound(ctx context.Context, cfg *Config, getenv func(string) string, b bound, stdout, stderr io.Writer, started chan<- Listeners) error {
	if err := cfg.preflight(getenv); err != nil { // before anything is built or logged
		return err
	}
	// Log lines go through a bounded queue drained by one goroutine, so a slow log destination
	// never stalls a request; lines that do not fit are counted and reported.
	logOut, err := logging.New(stderr, logging.Config{Format: cfg.Log.Format})
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
	if cfg.Auth.Disabled {
		log.Warn("AUTHENTICATION IS DISABLED: every caller can list and call every backend tool; use only for local development")
	}
	g, certs, err := prepare(cfg, getenv, log)
	if err != nil {
		return err
	}
	defer g.close()
	if err := g.registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "mcp_gateway_log_lines_dropped_total",
		Help: "Log lines dropped because the log destination could not keep up.",
	}, func() float64 { return float64(logOut.Dropped()) })); err != nil {
		return err
	}
	mcpSrv, adminSrv, addrs, errc, err := g.listen(cfg, certs, b)
	if err != nil {
		return err
	}

	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	go g.backends.Run(runCtx)
	g.mcpServer.Start(runCtx)
	if g.lists != nil {
		g.lists.run(runCtx)
	}
	if certs != nil {
		go certs.Run(runCtx)
	}
	g.admin.SetReady(true)
	log.Info("gateway started", "version", cfg.buildVersion(), "mcp", addrs.MCP+cfg.Server.Path,
		"admin", addrs.Admin, "upstreams", len(cfg.Upstreams))
	if started != nil {
		started <- addrs
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return drain(cfg, log, g, mcpSrv, adminSrv)
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
	mcpSrv = g.httpServer(cfg, g.mcp)
	if certs != nil {
		// Certificates are reloaded when their files change (cert-manager rotation); open
		// connections keep the certificate they were established with.
		mcpSrv.TLSConfig = certreload.ServerTLSConfig(certs)
	}
	adminSrv = g.httpServer(cfg, g.adminEcho)
	errc = make(chan error, 2)
	go func() { errc <- serveOn(mcpSrv, mcpLn) }()
	go func() { errc <- serveOn(adminSrv, adminLn) }()
	return mcpSrv, adminSrv, Listeners{MCP: mcpLn.Addr().String(), Admin: adminLn.Addr().String()}, errc, nil
}

// drain is the SIGTERM sequence. Closing idle keep-alive connections at the moment of SIGTERM
// races the load balancer reusing them, so the listener keeps serving normally, reporting
// not-ready, for DrainDelay first.
func drain(cfg *Config, log *slog.Logger, g *gateway, mcpSrv, adminSrv *http.Server) error {
	g.admin.SetReady(false)
	log.Info("draining", "delay", cfg.Server.DrainDelay)
	time.Sleep(cfg.Server.DrainDelay)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	err := mcpSrv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown deadline reached; closing remaining connections")
		err = mcpSrv.Close()
	}
	_ = adminSrv.Close()
	log.Info("stopped")
	return err
}

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

// gateway is the assembled process: every component built from configuration.
type gateway struct {
	backends  *upstreams.Registry
	mcp       *echo.Echo
	adminEcho *echo.Echo
	admin     *mcphttp.Admin
	mcpServer *mcphttp.Server // the MCP endpoint, started with the run context
	registry  *prometheus.Registry
	store     store.Store
	lists     *listChangedRelay // nil without a shared store that carries notices
	notices   store.Notices     // the shared store's notices; nil with the in-memory store
	replays   *mrtr.EpochGuard
	codec     *mrtr.Codec
	tracer    *tracing.Tracer
	log       *slog.Logger
	searchRec *metrics.ToolsetRecorder // tool search metrics (toolsets.go)
}

func build(cfg *Config, getenv func(string) string, log *slog.Logger) (g *gateway, err error) {
	g = &gateway{registry: prometheus.NewRegistry(), log: log}
	// The failure paths return a nil gateway: close the one being built, not the result.
	built := g
	defer func() {
		if err != nil {
			built.close()
		}
	}()
	rec, err := newRecorder(cfg, g.registry)
	if err != nil {
		return nil, err
	}
	if g.searchRec, err = newToolsetRecorder(cfg, g.registry); err != nil {
		return nil, err
	}
	ring, err := g.buildState(cfg, getenv, log, rec)
	if err != nil {
		return nil, err
	}
	if err := g.buildBackends(cfg, getenv, log, rec, ring); err != nil {
		return nil, err
	}
	limits, err := cfg.compileRateLimits(g.store)
	if err != nil {
		return nil, err
	}
	if g.tracer, err = cfg.Tracing.newTracer(cfg.buildVersion(), getenv, log); err != nil {
		return nil, err
	}
	cfg.Server.Toolsets = cfg.Toolsets // the top-level toolsets: block is the endpoint's
	var auth *authz.Service
	if !cfg.Auth.Disabled {
		if auth, err = authz.New(cfg.Auth.Config, authz.Options{ResourceURI: cfg.Server.PublicURL, Logger: log,
			ToolsetResourceURIs: mcphttp.ToolsetResources(cfg.serverConfig())}); err != nil {
			return nil, err
		}
	}
	approvals, err := g.buildApproval(cfg, getenv, log, g.store)
	if err != nil {
		return nil, err
	}
	srv, err := mcphttp.New(cfg.serverConfig(), mcphttp.Deps{
		Approvals:  approvals,
		Auth:       auth,
		Backends:   g.backends,
		Logger:     log,
		Version:    cfg.buildVersion(),
		Loopback:   IsLoopbackAddr(cfg.Server.Listen),
		Metrics:    rec,
		MRTR:       g.codec,
		RateLimits: limits,
		Tracer:     g.tracer,
		// Tool search metrics (docs/toolsets.md).
		ToolsetMetrics: g.searchRec,
		Keys:           ring,
		Notices:        g.notices,
		// A legacy session's log level and resource subscriptions, shared by every replica.
		SessionState: g.store,
	})
	if err != nil {
		return nil, err
	}
	explainSecret, err := cfg.Admin.Explain.resolveSecret(getenv)
	if err != nil {
		return nil, err
	}
	g.mcpServer = srv
	g.mount(cfg, srv, auth, explainSecret)
	if err := g.registerEdgeMetrics(srv); err != nil {
		return nil, err
	}
	return g, nil
}

// buildState sets up what a later request depends on: the sealing key ring (derived once, here),
// the shared store, and the requestState codec with its epoch guard.
func (g *gateway) buildState(cfg *Config, getenv func(string) string, log *slog.Logger, rec *metrics.Recorder) (*seal.KeyRing, error) {
	ring, ephemeral, err := cfg.MRTR.keyRing(getenv)
	if err != nil {
		return nil, err
	}
	if ephemeral {
		log.Warn("no mrtr.keys configured: requestState and list cursors use a random per-process key; run a single replica only")
	}
	if g.store, err = cfg.Redis.newStore(getenv, log, g.registry); err != nil {
		return nil, err
	}
	if n, ok := g.store.(store.Notices); ok {
		g.notices = n
		g.lists = newListChangedRelay(n, rec, log)
	}
	if cfg.Redis.enabled() {
		counted := countedStore{Store: g.store, rec: rec}
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
	g.codec, err = mrtr.New(ring.Sealer(seal.PurposeRequestState), mrtr.Config{TTL: cfg.MRTR.TTL}, g.replays, nil)
	return ring, err
}

// buildBackends builds the backend registry with the metrics hooks.
func (g *gateway) buildBackends(cfg *Config, getenv func(string) string, log *slog.Logger, rec *metrics.Recorder, ring *seal.KeyRing) error {
	secrets, err := cfg.resolveSecrets(getenv)
	if err != nil {
		return err
	}
	guard, err := newPinGuard(cfg, getenv, g.store, rec, log)
	if err != nil {
		return err
	}
	g.backends, err = upstreams.New(cfg.upstreamsConfig(secrets), upstreams.Options{
		Logger:  log,
		Cursors: ring.Sealer(seal.PurposeCursor),
		Observe: rec.ObserveUpstream,
		// The hooks run under the breaker lock or on the list path: the recorder's methods
		// are non-blocking.
		CircuitState: func(upstream string, state int) { rec.SetCircuitState(upstream, circuitGauge(state)) },
		CacheResult:  rec.ListCache,
		// Tool-call metrics label only names a backend published (bounded per backend).
		OnTools:       g.onTools(rec),
		OnHealth:      rec.SetUpstreamUp,
		OnListChanged: g.lists.onListChanged(),
		// Zero is upstreams' default, negative unbounded: the same meaning as in server:.
		MaxResultBytesInFlight: cfg.Server.MaxResultBytesInFlight,
		Pins:                   guard,
	})
	if err == nil && g.lists != nil {
		g.lists.apply = g.backends.ListChanged
	}
	return err
}

// mount puts the MCP endpoint and the admin routes on their echo instances.
func (g *gateway) mount(cfg *Config, srv *mcphttp.Server, auth *authz.Service, explainSecret string) {
	g.mcp = newEcho()
	srv.Register(g.mcp)
	var checks []mcphttp.Check
	if cfg.Redis.enabled() {
		checks = append(checks, mcphttp.Check{Name: "redis", Run: g.replays.Prime,
			Advisory: cfg.Admin.RedisReadiness == redisReadinessAdvisory})
	}
	g.admin = mcphttp.NewAdmin(mcphttp.AdminDeps{Backends: g.backends, Gatherer: g.registry,
		Pprof: cfg.Admin.Pprof, Checks: checks, Auth: auth, Loopback: IsLoopbackAddr(cfg.Admin.Listen),
		Explain: cfg.Admin.Explain.Enabled, ExplainSecret: explainSecret})
	g.adminEcho = newEcho()
	g.admin.Register(g.adminEcho)
}

func (g *gateway) close() {
	if g.backends != nil {
		g.backends.Close()
	}
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
// client did not read them, and the memory held by request bodies and relayed results.
func (g *gateway) registerEdgeMetrics(srv *mcphttp.Server) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "mcp_gateway_client_write_timeouts_total",
			Help: "Responses cut because the client did not read them within the write deadline.",
		}, func() float64 { return float64(srv.WriteTimeouts()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_gateway_request_body_bytes_in_flight",
			Help: "Buffer memory held by request bodies being received or served (server.maxBodyBytesInFlight).",
		}, func() float64 { return float64(srv.BodyBytesInFlight()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcp_gateway_result_bytes_in_flight",
			Help: "Buffer memory held by backend responses being relayed (server.maxResultBytesInFlight).",
		}, func() float64 { return float64(g.backends.ResultBytesInFlight()) }),
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
// bound each call.
func (g *gateway) httpServer(cfg *Config, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout,
		IdleTimeout:       cfg.Server.IdleTimeout,
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
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

// ServeOn is Serve on listeners the caller opened, for a caller that must know the addresses
// before cfg is complete (the demo, whose public URL and sign-in redirect URI name the port
// chosen for a ":0" address). cfg.Server.Listen and cfg.Admin.Listen are not used. The
// listeners are closed when ServeOn returns.
func ServeOn(ctx context.Context, cfg *Config, mcpLn, adminLn net.Listener, stdout, stderr io.Writer, started chan<- Listeners) error {
	defer mcpLn.Close()
	defer adminLn.Close()
	return serveBound(ctx, cfg, func(string) string { return "" }, bound{mcpLn, adminLn}, stdout, stderr, started)
}

// Serve runs the gateway with cfg, as `gateway serve` does, until ctx is done; started, when not
// nil, receives the listeners' addresses once both accept connections. cfg must come from
// NewConfig and have passed Complete: the demo serves through here, so it runs exactly what
// `serve` runs, defaults included.
func Serve(ctx context.Context, cfg *Config, stdout, stderr io.Writer, started chan<- Listeners) error {
	return serve(ctx, cfg, func(string) string { return "" }, stdout, stderr, started)
}
