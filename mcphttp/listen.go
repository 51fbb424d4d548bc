package mcphttp

// listen serves subscriptions/listen (digest §5.5): a long-lived SSE stream on which the
// registry first acknowledges, then forwards the backends' list_changed and resources/updated
// notifications tagged with this request's id. Closing the stream ends the subscription.
// Identical listens share their backend streams (upstreams.Listens): an idle listen then costs
// the gateway little more than the client's connection.
func (x *exchange) listen() error {
	x.armKeepAlive()
	err := x.s.listens.Listen(x.ctx, x.req.ID, x.req.Params, x.passHeaders(), func(msg []byte) error {
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
