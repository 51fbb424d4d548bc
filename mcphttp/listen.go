package mcphttp

import (
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// listen serves subscriptions/listen (digest §5.5): a long-lived SSE stream on which the
// registry first acknowledges, then forwards the backends' list_changed and resources/updated
// notifications tagged with this request's id. Closing the stream ends the subscription.
func (x *exchange) listen() error {
	x.startSSE()
	err := x.s.backends.Listen(x.ctx, x.req.ID, x.req.Params, x.passHeaders(), x.writeEvent)
	if x.ctx.Err() != nil {
		x.outcome = outcomeCanceled
		return nil
	}
	if err != nil {
		return err
	}
	// Every backend ended its stream: end ours gracefully with the listen's result.
	res := []byte(`{"resultType":"complete","_meta":{"` + jsonrpc.MetaSubscriptionID + `":`)
	res = append(append(res, x.req.ID...), "}}"...)
	x.outcome = outcomeOK
	return x.writeEvent(jsonrpc.AppendResult(nil, x.req.ID, res))
}
