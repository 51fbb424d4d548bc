package legacy

import (
	"context"
	"encoding/json"
)

// ClientRequests carries one request a pre-2026 backend sent mid-call (elicitation/create,
// sampling/createMessage or roots/list) to the client whose call it is, and returns that
// client's result, as the backend reads it. An error that is a *jsonrpc.Error goes back to the
// backend as it is; any other error as an internal error. It is set by whoever can reach the
// client (the edge, for a pre-2026 client, which can be sent such requests on its response
// stream); without it the backend's request is refused, as a 2026-07-28 client cannot be asked
// anything mid-call.
type ClientRequests func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// clientRequestsKey is the context key of a call's ClientRequests.
type clientRequestsKey struct{}

// WithClientRequests makes the requests a backend sends during the calls made under ctx reach
// the client through f.
func WithClientRequests(ctx context.Context, f ClientRequests) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, clientRequestsKey{}, f)
}

// ClientRequestsOf returns the ClientRequests of ctx, nil when none.
func ClientRequestsOf(ctx context.Context) ClientRequests {
	f, _ := ctx.Value(clientRequestsKey{}).(ClientRequests)
	return f
}

// WithoutClientRequests is ctx with no ClientRequests: what a backend asks under it is refused.
// The gateway's own requests are made under it, whoever's request made the gateway send them:
// what a backend (or an interceptor) asks while answering the gateway is not part of a call, and
// must not reach the client of one.
func WithoutClientRequests(ctx context.Context) context.Context {
	if ClientRequestsOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, clientRequestsKey{}, ClientRequests(nil))
}
