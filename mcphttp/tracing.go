package mcphttp

import (
	"github.com/mcp-gateway/gateway/internal/logging"
)

// spanOther names the span of a request whose method the gateway does not serve, or could not
// read: span names come from a closed set, like metric labels.
const spanOther = "_other"

// startSpan starts the request's server span, backdated to the request's start. It runs once
// the body is decoded, since only then is the caller's trace context known: _meta may carry
// it (SEP-414). Requests refused before decoding get theirs from endRequestSpan. With tracing
// off it does nothing.
func (x *request) startSpan() {
	t := x.s.tracer
	if !t.Enabled() || x.endSpan != nil {
		return
	}
	method := spanOther
	if x.in.req != nil && x.s.handlers[x.in.req.Method] != nil {
		method = x.in.req.Method
	}
	x.ctx, x.endSpan = t.StartRequest(x.ctx, method, traceFrom(x.hdr, x.in.meta).parent, x.start)
	x.spanParent = t.TraceParent(x.ctx)
	// Log lines then carry the span's trace id, also when the gateway started the trace.
	x.ctx = logging.WithRequest(x.ctx, x.requestID, traceID(x.spanParent))
}

// endRequestSpan ends the request's span with its outcome.
func (x *request) endRequestSpan() {
	x.startSpan()
	if x.endSpan != nil {
		x.endSpan(x.client.outcome, nil)
	}
}

// trace is the trace context sent to backends: the caller's, except that with tracing on the
// parent is the gateway's own span (the backend span during a call), so the backend's spans
// hang under the gateway's.
func (x *request) trace() traceContext {
	tc := traceFrom(x.hdr, x.in.meta)
	if x.spanParent != "" {
		tc.parent = x.spanParent
	}
	return tc
}
