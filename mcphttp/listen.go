package mcphttp

import (
	"bytes"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// listen serves subscriptions/listen (digest §5.5): a long-lived SSE stream on which the
// registry first acknowledges, then forwards the backends' list_changed and resources/updated
// notifications tagged with this request's id. Closing the stream ends the subscription.
// Identical listens share their backend streams (upstreams.Listens): an idle listen then costs
// the gateway little more than the client's connection.
func (x *exchange) listen() error {
	x.armKeepAlive()
	params, hdr := x.req.Params, x.passHeaders()
	visible, _ := x.s.visibility(x) // resource subscriptions follow the caller's policy
	x.shed()
	err := x.s.listens.Listen(x.ctx, x.req.ID, params, hdr, visible, func(msg []byte) error {
		// The registry emits the acknowledgement first and, when every backend stream has
		// ended, the listen's final result; the stream starts with the first message, so an
		// invalid request is still answered with a plain JSON error.
		return x.send(msg, 0, false)
	})
	x.stopKeepAlive()
	switch {
	case x.ctx.Err() != nil:
		x.outcome = outcomeCanceled
		return nil
	case err != nil:
		return err
	}
	x.outcome = outcomeOK
	return nil
}

// shed lets go of what the pipeline decoded once nothing but the request's id and method will be
// read again, so an idle stream does not keep its request body and decoded params alive for
// hours: 2,000 idle listens hold about a megabyte less.
func (x *exchange) shed() {
	x.req = &jsonrpc.Request{ID: bytes.Clone(x.req.ID), Method: x.req.Method}
	x.body, x.params, x.meta = nil, nil, nil
}
