package mcphttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/callerkey"
	"github.com/mcp-gateway/gateway/internal/clientaddr"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/metrics"
)

// clients bounds the work one client address makes this replica do before it is authenticated
// (docs/client-bounds.md): its requests in flight until their token is verified (a body still
// arriving included), their bodies' share of the body budget, and the rate of its failed
// authentications, past which only tokens verified before are accepted from it. The address is the TCP peer's, or the
// one the trusted proxies name (server.trustedProxies). Nil when both bounds are off and the
// access log does not write the address and authentication is on; limit is nil when the
// bounds are off.
type clients struct {
	resolve *clientaddr.Resolver
	limit   *clientaddr.Limiter
	metrics *metrics.Recorder
	log     *slog.Logger
	drafts  *drafts
	// serve are the route paths whose handler is Server.serve, which takes and gives back the
	// slot itself (given back as soon as the caller is authenticated); hold holds every other
	// route's for its whole request.
	serve map[string]bool
	// warned is set once the log said that proxy headers arrive and no proxy is trusted.
	warned atomic.Bool
	// keys are the keys of the client address groups seen lately (key), so that a request
	// without authentication allocates none; at most maxClientKeys, all forgotten at once past
	// that.
	keysMu sync.Mutex
	keys   map[netip.Prefix]string
}

// maxClientKeys bounds clients.keys: about 100 bytes each, 400 KiB in all.
const maxClientKeys = 4096

// Messages of the per-client refusals.
const (
	msgClientBusy   = "Too many unauthenticated requests in flight from this client; retry later"
	msgClientFailed = "Too many failed authentications from this client; retry later"
	msgClientBytes  = "Too many request bytes in flight from this client; retry later"
)

// clientBusyRetryAfter is the Retry-After of a client over its unauthenticated in-flight share:
// a slot frees as soon as one of its requests is authenticated or ends.
const clientBusyRetryAfter = time.Second

func newClients(cfg Config, deps Deps, d *drafts, bodies *bodyread.Budget, now func() time.Time) (*clients, error) {
	lc := cfg.PerClient.limiterConfig()
	if lc.Off() && !cfg.LogClientAddress && deps.Auth != nil {
		// Without authentication the client's address is needed in any case: it is what the
		// per-caller bounds are charged to (request.bound).
		return nil, nil
	}
	r, err := clientaddr.New(cfg.resolverConfig())
	if err != nil {
		return nil, err
	}
	c := &clients{resolve: r, metrics: deps.Metrics, log: deps.Logger, drafts: d, serve: map[string]bool{},
		keys: map[netip.Prefix]string{}}
	switch {
	case lc.Off():
	case deps.ClientLimiter != nil:
		c.limit = deps.ClientLimiter
	default:
		c.limit = clientaddr.NewLimiter(lc, bodies, now)
	}
	return c, nil
}

// enter finds x's client and takes one of its unauthenticated slots (x.unauth), or refuses the
// request with 429. Nothing on a nil receiver.
func (c *clients) enter(x *request) error {
	if c == nil {
		return nil
	}
	x.peer = c.resolve.Client(x.r)
	slot, e := c.take(x.r, x.peer)
	if e != nil {
		return e
	}
	x.unauth = slot
	return nil
}

// take takes one of the unauthenticated slots of r's client, whose address is peer, or returns
// the 429 of a client that holds all of them: for the endpoint's requests (enter) and for every
// other route's (hold) alike.
func (c *clients) take(r *http.Request, peer netip.Addr) (clientaddr.Slot, *Error) {
	c.warnUntrustedHeaders(r)
	slot, ok := c.limit.Enter(c.resolve.Key(peer))
	if !ok {
		c.metrics.ClientRefusal(metrics.ClientRefusalInFlight)
		return slot, c.drafts.limited(clientBusyRetryAfter, msgClientBusy)
	}
	return slot, nil
}

// warnUntrustedHeaders says once, when no proxy is trusted, that requests come with a proxy's
// client header: every client behind that proxy then shares one client's bounds.
func (c *clients) warnUntrustedHeaders(r *http.Request) {
	if c.resolve.TrustsProxies() || c.warned.Load() {
		return
	}
	if len(r.Header[clientaddr.HeaderXForwardedFor]) == 0 && len(r.Header[clientaddr.HeaderForwarded]) == 0 {
		return
	}
	if c.warned.CompareAndSwap(false, true) {
		c.log.Warn("requests carry X-Forwarded-For or Forwarded but server.trustedProxies is empty: " +
			"the headers are ignored, and every client behind a proxy shares the per-client bounds of the proxy's address")
	}
}

// authContext is the context x's token is verified under: KnownOnly while x's client is over
// its rate of failed authentications, so only a token verified before is accepted.
func (c *clients) authContext(x *request) context.Context {
	if c == nil {
		return x.ctx
	}
	if ok, _ := c.limit.MayVerify(c.resolve.Key(x.peer)); ok {
		return x.ctx
	}
	return authz.KnownOnly(x.ctx)
}

// failed counts a failed authentication against x's client, or answers the refusal of a token
// not checked (authz.ErrNotVerified); nil for any other error.
func (c *clients) failed(x *request, err error) *Error {
	if c == nil {
		return nil
	}
	key := c.resolve.Key(x.peer)
	if errors.Is(err, authz.ErrNotVerified) {
		c.metrics.ClientRefusal(metrics.ClientRefusalFailedAuth)
		_, wait := c.limit.MayVerify(key)
		return c.drafts.limited(max(wait, time.Second), msgClientFailed)
	}
	if countsAsFailure(err) {
		c.limit.Failed(key)
	}
	return nil
}

// bodiesBusy answers a body refused because its client's share of the body budget is spent.
func (c *clients) bodiesBusy() *Error {
	c.metrics.ClientRefusal(metrics.ClientRefusalBodyBytes)
	return c.drafts.limited(clientBusyRetryAfter, msgClientBytes)
}

// countsAsFailure reports whether err is a token refused on its merits (signature, key,
// issuer, audience, expiry, claims, a DPoP proof), which the client could have avoided. A
// missing token, an identity provider or replay store that cannot answer, and the DPoP nonce
// challenge every DPoP client meets in the normal course do not count.
func countsAsFailure(err error) bool {
	if !errors.Is(err, authz.ErrInvalidToken) {
		return false
	}
	return authz.Reason(err) != authz.ReasonDPoPNonce
}

// hold holds a slot of the client's unauthenticated share for the whole of a request to any
// path Server.serve does not handle: the protected resource metadata, the approval and connect
// pages (sign-in, callbacks), the Server Cards, unknown paths; or refuses it with 429.
func (c *clients) hold(ec echo.Context, next echo.HandlerFunc) error {
	r := ec.Request()
	if c.limit == nil || c.serve[echo.GetPath(r)] {
		return next(ec)
	}
	slot, e := c.take(r, c.resolve.Client(r))
	if e != nil {
		for k, v := range e.Header {
			ec.Response().Header()[k] = v
		}
		return ec.Blob(e.Status, echo.MIMEApplicationJSON, jsonrpc.AppendError(nil, nil, e.RPC))
	}
	defer slot.Release()
	return next(ec)
}

// key is what a request from peer, which has no caller, is charged to as a caller: its client
// address group's key (callerkey.Client); the key of an unknown address on a nil receiver,
// which only a server with authentication has, whose requests all have a caller.
func (c *clients) key(peer netip.Addr) string {
	if c == nil {
		return callerkey.Client(netip.Prefix{})
	}
	g := c.resolve.Key(peer)
	c.keysMu.Lock()
	defer c.keysMu.Unlock()
	k, ok := c.keys[g]
	if !ok {
		if len(c.keys) >= maxClientKeys {
			clear(c.keys)
		}
		k = callerkey.Client(g)
		c.keys[g] = k
	}
	return k
}

// clientAttr is the access log's client attribute: the client's address, written only where
// the operator turned it on (server.logClientAddress), as an address is personal data in some
// jurisdictions.
func clientAttr(a netip.Addr) slog.Attr {
	if !a.IsValid() {
		return slog.String("client", "")
	}
	return slog.String("client", a.String())
}

// authenticated gives back what x held as its client's before authentication: its slot, and
// its body's charge to the client's share of the body budget, which moves to the caller's share
// of it (callerBodyShare) until the request ends, the replica's budget charged once all along.
// Its caller is bounded as a caller from here on. It returns the 429 of a caller whose
// share cannot hold the body: one identity from several addresses, each within its own share,
// would otherwise hold the whole budget.
func authenticated(x *request) error {
	x.unauth.Release()
	key := x.subject()
	if key == "" || x.in.bodyBuf == nil || x.s.callerBodies == nil {
		_ = x.in.bodyBuf.Settle(nil)
		return nil
	}
	x.bodyShare = key
	if x.in.bodyBuf.Settle(x.s.callerBodies.Take(key)) != nil {
		return x.s.drafts.limited(clientBusyRetryAfter, msgCallerBytes)
	}
	return nil
}

// msgCallerBytes is the refusal of a body its caller's share of the body budget cannot hold.
const msgCallerBytes = "Too many request bytes in flight from this caller; retry later"

// callerBodyShare is one authenticated caller's share of server.maxBodyBytesInFlight: a quarter
// of it, or twice server.maxBodyBytes if that is more, never more than all of it; the share a
// client address has before authentication by default, so that a caller is held to what one
// address is, from however many addresses it sends. 0 (no share) with the budget off.
func callerBodyShare(cfg Config) int64 {
	if cfg.MaxBodyBytesInFlight <= 0 {
		return 0
	}
	return min(max(cfg.MaxBodyBytesInFlight/4, 2*cfg.MaxBodyBytes), cfg.MaxBodyBytesInFlight)
}
