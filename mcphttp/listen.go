package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// errTokenExpired is the cause that ends a listen when the caller's token expires.
var errTokenExpired = errors.New("mcphttp: the caller's access token expired")

// untilTokenExpires is ctx, ended when p's token would no longer be accepted (its expiry plus
// the clock skew allowed, authz.Service.ValidUntil), for what may outlast it: a listen. A token
// is verified when a request arrives, so without this a stream opened with it would go on
// relaying notifications for hours after the token expired, or after the caller lost the
// access its identity provider then stops granting, which a bearer token's expiry is the only
// way to learn of. now is the server's clock.
func untilTokenExpires(ctx context.Context, auth *authz.Service, p *authz.Principal, now time.Time) (context.Context, context.CancelFunc) {
	if auth == nil || p == nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, auth.ValidUntil(p).Sub(now), errTokenExpired)
}

// tokenExpired ends a listen whose token expired: a 401's error, so the client listens again
// with a fresh token.
func tokenExpired() *Error {
	return &Error{Status: http.StatusUnauthorized, Outcome: outcomeDenied,
		RPC: jsonrpc.NewError(jsonrpc.CodeUnauthorized, "Unauthorized: the access token expired; listen again with a fresh one")}
}

// listen serves subscriptions/listen
// (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): a
// long-lived SSE stream on which the registry first acknowledges, then forwards the backends'
// list_changed and resources/updated notifications tagged with this request's id, each only if
// this client subscribed to it and, for a resource, the caller's policy lets it read it.
// Closing the stream ends the subscription; a client that falls too far behind has it ended
// with upstreams.ListenOverflow. Identical listens share their backend streams
// (upstreams.Listens): an idle listen then costs the gateway little more than the client's
// connection.
func (x *request) listen() error {
	if x.s.rails != nil {
		if err := x.s.rails.checkListen(x); err != nil {
			return err
		}
	}
	x.out.KeepAlive(true)
	// The params outlive the request's body for as long as the listen lasts: a copy of these
	// few hundred bytes lets the body's buffer go (shed).
	params, hdr := bytes.Clone(x.in.req.Params), x.passHeaders()
	visible, _ := x.visibility() // subscriptions and every resources/updated follow the caller's policy
	caller := upstreams.ListenCaller{Visible: visible, Dropped: x.s.metrics.ListenDropped}
	x.shed()
	ctx, cancel := untilTokenExpires(x.ctx, x.s.auth, x.caller.principal, x.s.now())
	defer cancel()
	err := x.s.listens.ListenFor(ctx, x.in.req.ID, params, hdr, caller, func(msg []byte) error {
		// The registry hands over the acknowledgement first and, when every backend stream
		// has ended, the listen's result last; the stream starts with the first message, so
		// an invalid request is still answered with a plain JSON error.
		return x.out.Event(msg, nil)
	})
	x.out.KeepAlive(false)
	switch {
	case x.ctx.Err() != nil:
		x.client.SetOutcome(outcomeCanceled)
		return nil
	case context.Cause(ctx) == errTokenExpired:
		return tokenExpired()
	case err != nil:
		return err
	}
	x.client.SetOutcome(outcomeOK)
	return nil
}

// shed lets go of what the pipeline decoded once nothing but the request's id and method will be
// read again, so an idle stream does not keep its request body and decoded params alive for
// hours: 2,000 idle listens hold about a megabyte less.
func (x *request) shed() {
	x.in.req = &jsonrpc.Request{ID: bytes.Clone(x.in.req.ID), Method: x.in.req.Method}
	x.in.body, x.in.params, x.in.meta = nil, nil, nil
	x.in.bodyBuf.Release() // a listen's buffer is detached (run): this only drops it
}
