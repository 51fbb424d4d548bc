package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/loopback"
	"github.com/mcp-gateway/gateway/internal/useroauth"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Check is one readiness dependency, such as the shared store.
type Check struct {
	// Name labels the check in /readyz.
	Name string
	// Run returns nil when the dependency is usable.
	Run func(ctx context.Context) error
	// Advisory checks are reported in /readyz but do not make the replica not ready.
	Advisory bool
}

// AdminDeps are what the admin listener reports on.
type AdminDeps struct {
	// Backends supplies per-backend health detail. Optional.
	Backends *upstreams.Registry
	// Gatherer is scraped on /metrics. Optional.
	Gatherer prometheus.Gatherer
	// Checks must all pass for /readyz to answer 200.
	Checks []Check
	// Pprof mounts net/http/pprof under /debug/pprof/.
	Pprof bool
	// Auth answers POST /authz/explain; nil when authentication is disabled.
	Auth *authz.Service
	// Loopback says the admin listener is bound to a loopback address only. Requests must
	// then name a loopback host: another name resolving to 127.0.0.1 is DNS rebinding, a web
	// page reaching the listener through the user's browser.
	Loopback bool
	// Explain mounts POST /authz/explain. Off by default: the answer carries the whole policy
	// and the claims of any token sent to it.
	Explain bool
	// ExplainSecret, when set, is the bearer secret /authz/explain requires
	// (Authorization: Bearer <secret>); the admin Token is accepted there too.
	ExplainSecret string
	// Token is the admin credential (Authorization: Bearer <token>) every endpoint but /healthz
	// and the bare status of /readyz requires (adminauth.go). Empty means none, which only a
	// loopback-only listener may do: on any other listener those endpoints are then refused.
	Token string
	// UserOAuth mounts POST /useroauth/revoke, the operator's revocation of per-user OAuth
	// tokens by caller or backend. Nil: not mounted.
	UserOAuth *useroauth.Service
}

// Admin serves /healthz, /readyz and /metrics on the admin listener, apart from MCP traffic.
type Admin struct {
	deps  AdminDeps
	ready atomic.Bool
}

// NewAdmin returns an admin server that reports not ready until SetReady(true).
func NewAdmin(deps AdminDeps) *Admin { return &Admin{deps: deps} }

// SetReady flips readiness: true once serving, false when draining after SIGTERM so the load
// balancer stops sending new requests while in-flight ones finish.
func (a *Admin) SetReady(ready bool) { a.ready.Store(ready) }

// Register adds the admin routes to e, behind the admin listener's request checks. /healthz and
// /readyz answer anyone (kubelet probes carry no credential), /readyz with its detail only to
// the admin; everything else asks for the admin credential (requireAdmin).
func (a *Admin) Register(e *echo.Echo) {
	e.Use(a.checkRequest)
	probe(e, "/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") })
	probe(e, "/readyz", a.readyz)
	if a.deps.Backends != nil && a.deps.Backends.PinGuard() != nil {
		only(e, []string{http.MethodGet, http.MethodHead}, "/pins", a.pinDrift, a.requireAdmin)
	}
	if a.deps.UserOAuth != nil {
		only(e, []string{http.MethodPost}, "/useroauth/revoke", a.revokeUserTokens, a.requireAdmin)
	}
	if a.deps.Explain {
		only(e, []string{http.MethodPost}, "/authz/explain", a.explain)
	}
	if a.deps.Gatherer != nil {
		only(e, []string{http.MethodGet, http.MethodHead}, "/metrics", echo.WrapHandler(promhttp.HandlerFor(a.deps.Gatherer,
			promhttp.HandlerOpts{EnableOpenMetrics: true})), a.requireAdmin)
	}
	if a.deps.Pprof {
		get := []string{http.MethodGet, http.MethodHead}
		only(e, get, "/debug/pprof/*", echo.WrapHandler(http.HandlerFunc(pprof.Index)), a.requireLoopback, a.requireAdmin)
		only(e, get, "/debug/pprof/profile", echo.WrapHandler(http.HandlerFunc(pprof.Profile)), a.requireLoopback, a.requireAdmin)
		only(e, get, "/debug/pprof/trace", echo.WrapHandler(http.HandlerFunc(pprof.Trace)), a.requireLoopback, a.requireAdmin)
	}
}

// probe serves a probe's answer to GET, HEAD and OPTIONS alike. Probes use all three:
// HAProxy's `option httpchk /readyz` sends OPTIONS (its default method), other balancers send
// HEAD; echo would answer OPTIONS itself with 204 whatever the replica's state, keeping a
// replica that is not ready in rotation, and HEAD with 405.
func probe(e *echo.Echo, path string, h echo.HandlerFunc) {
	only(e, []string{http.MethodGet, http.MethodHead, http.MethodOptions}, path, h)
}

// only routes path's methods to h and answers every other method, OPTIONS included, with 405
// and an Allow header naming exactly those methods (echo's own answer lists the methods of
// every route at the path and answers OPTIONS with 204). A GET route takes HEAD too:
// net/http sends a HEAD's headers and drops its body.
func only(e *echo.Echo, methods []string, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	e.Match(methods, path, h, m...)
	allow := strings.Join(methods, ", ")
	e.RouteNotFound(path, func(c echo.Context) error {
		c.Response().Header().Set("Allow", allow)
		return c.NoContent(http.StatusMethodNotAllowed)
	})
}

// checkRequest applies the admin listener's own rules before any route: on a loopback listener
// the Host must be a loopback name (DNS rebinding, as on the MCP listener); nothing here is for
// browsers, so a request that carries an Origin is refused; and a body, when there is one, must
// be declared application/json, once and with no content coding (jsonBody), which a cross-origin page cannot send without a CORS preflight
// that this listener never grants.
func (a *Admin) checkRequest(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		// No Host at all is an HTTP/1.0 request, as load balancers' health checks send
		// (HAProxy's httpchk); a browser, which DNS rebinding needs, always sends one.
		if a.deps.Loopback && r.Host != "" && !loopback.HostPort(r.Host) {
			return c.JSON(http.StatusForbidden, map[string]string{"error": "host not allowed on a loopback listener"})
		}
		if len(r.Header.Values("Origin")) > 0 {
			return c.JSON(http.StatusForbidden, map[string]string{"error": "the admin listener does not serve browsers"})
		}
		if e := jsonBody(r.Header); hasBody(r) && e != nil {
			for k, v := range e.Header {
				c.Response().Header()[k] = v
			}
			return c.JSON(e.Status, map[string]string{"error": e.RPC.Message})
		}
		return next(c)
	}
}

// hasBody reports whether a request carries (or may carry) a body: a declared or unknown
// (chunked) length, or a method that takes one.
func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return r.ContentLength != 0
}

type readiness struct {
	Ready     bool               `json:"ready"`
	Draining  bool               `json:"draining"`
	Checks    map[string]string  `json:"checks,omitempty"`
	Upstreams []upstreams.Status `json:"upstreams,omitempty"`
}

// echoJSONDecoder decodes a small admin request body strictly.
func echoJSONDecoder(c echo.Context) *json.Decoder {
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 64<<10))
	dec.DisallowUnknownFields()
	return dec
}

// readyz answers 200 when the replica is ready and 503 otherwise. The checks' messages and the
// backends' health (names, URLs, errors) go only to the admin (authorized); a probe without the
// credential gets the status alone.
func (a *Admin) readyz(c echo.Context) error {
	r := readiness{Ready: a.ready.Load(), Draining: !a.ready.Load()}
	var ok bool
	r.Checks, ok = a.runChecks(c.Request().Context())
	r.Ready = r.Ready && ok
	status := http.StatusOK
	if !r.Ready {
		status = http.StatusServiceUnavailable
	}
	if !a.authorized(c.Request()) {
		return c.JSON(status, readiness{Ready: r.Ready, Draining: r.Draining})
	}
	if a.deps.Backends != nil {
		r.Upstreams = a.deps.Backends.Health()
	}
	return c.JSON(status, r)
}

// ReadyTimeout bounds how long /readyz waits for its checks, which run at once. It sits well
// inside the readiness probe's timeout (the chart's probes.readiness.timeoutSeconds, at least
// 2 s): a dependency that does not answer (a Redis whose packets are dropped) must give the probe
// the check's verdict, not a timeout, which fails the probe whatever the verdict; with
// admin.redisReadiness advisory that would take every replica out of the load balancer at once.
const ReadyTimeout = time.Second

// runChecks runs every check at once within ReadyTimeout and returns each one's result ("ok" or
// its error) and whether every required one passed. A check still running when the time is up
// fails with errCheckTimeout; it is left to end on its own.
func (a *Admin) runChecks(ctx context.Context) (map[string]string, bool) {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	type result struct {
		i   int
		err error
	}
	results := make(chan result, len(a.deps.Checks)) // buffered: a late check never blocks
	for i, ch := range a.deps.Checks {
		go func() { results <- result{i, ch.Run(ctx)} }()
	}
	errs := make([]error, len(a.deps.Checks))
	for i := range errs {
		errs[i] = errCheckTimeout
	}
	for range a.deps.Checks {
		select {
		case r := <-results:
			errs[r.i] = r.err
			continue
		case <-ctx.Done():
		}
		break
	}
	out, ready := make(map[string]string, len(errs)), true
	for i, ch := range a.deps.Checks {
		if errs[i] != nil {
			ready = ready && ch.Advisory
			out[ch.Name] = configerr.RedactURLs(errs[i].Error()) // a client's error repeats its URL whole
			continue
		}
		out[ch.Name] = "ok"
	}
	return out, ready
}

// errCheckTimeout is the result of a check that did not answer within ReadyTimeout.
var errCheckTimeout = errors.New("no answer within " + ReadyTimeout.String())
