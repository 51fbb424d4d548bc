package logging

import (
	"context"
	"log/slog"
)

// Keys of the attributes the context handler adds.
const (
	KeyRequestID = "request_id"
	KeyTraceID   = "trace_id"
)

type requestKey struct{}

type requestInfo struct {
	requestID, traceID string
}

// requestCtx is ctx carrying a requestInfo: what context.WithValue would build, in one
// allocation instead of two (the context and the boxed value), since every request makes one.
type requestCtx struct {
	context.Context
	info requestInfo
}

// Value returns a pointer to the request's info for requestKey, without boxing a copy.
func (c *requestCtx) Value(key any) any {
	if _, ok := key.(requestKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// WithRequest returns ctx carrying the request id and W3C trace id (either may be empty), so
// every line logged with it, by any package, names the request it belongs to.
func WithRequest(ctx context.Context, requestID, traceID string) context.Context {
	return &requestCtx{Context: ctx, info: requestInfo{requestID, traceID}}
}

// contextHandler adds request_id and trace_id from the context to each record that does not
// carry them already.
type contextHandler struct {
	next slog.Handler
}

// NewContextHandler wraps next so that records logged with a context from WithRequest carry
// request_id and trace_id. A record that sets either key itself keeps its own value. Inside a
// WithGroup the added attributes land in the group, as any attribute would.
func NewContextHandler(next slog.Handler) slog.Handler {
	return contextHandler{next: next}
}

// Enabled reports whether the wrapped handler handles level.
func (h contextHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds the request attributes the record lacks and passes it on.
func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	info, ok := ctx.Value(requestKey{}).(*requestInfo)
	if !ok {
		return h.next.Handle(ctx, r)
	}
	hasID, hasTrace := info.requestID == "", info.traceID == ""
	r.Attrs(func(a slog.Attr) bool {
		hasID = hasID || a.Key == KeyRequestID
		hasTrace = hasTrace || a.Key == KeyTraceID
		return !hasID || !hasTrace
	})
	if !hasID {
		r.AddAttrs(slog.String(KeyRequestID, info.requestID))
	}
	if !hasTrace {
		r.AddAttrs(slog.String(KeyTraceID, info.traceID))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns the wrapped handler's WithAttrs, still wrapped.
func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{next: h.next.WithAttrs(attrs)}
}

// WithGroup returns the wrapped handler's WithGroup, still wrapped.
func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{next: h.next.WithGroup(name)}
}
