package upstreams

import (
	"context"

	"github.com/mcp-gateway/gateway/upstreams/legacy"
)

// ClientRequests carries a pre-2026 backend's mid-call request (elicitation/create,
// sampling/createMessage, roots/list) to the client of the call and returns the client's
// result. An error that is a *jsonrpc.Error reaches the backend as it is.
type ClientRequests = legacy.ClientRequests

// WithClientRequests makes the elicitation, sampling and roots requests that a pre-2026
// backend sends during a call made under ctx reach the call's client through f. Only a client
// that can be sent requests while its call runs (a pre-2026 client, on its response stream)
// has one; without it such requests are refused, since an MRTR round cannot carry a request
// made in the middle of a backend's call.
func WithClientRequests(ctx context.Context, f ClientRequests) context.Context {
	return legacy.WithClientRequests(ctx, f)
}

// ClientRequestsOf returns the ClientRequests of ctx, nil when the calls made under it have
// none: the guardrails wrap it to check what goes to the client and what comes back.
func ClientRequestsOf(ctx context.Context) ClientRequests {
	return legacy.ClientRequestsOf(ctx)
}
