package tracing

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkRequest is the tracing work of one forwarded request: a server span continuing the
// caller's trace, a backend span, the traceparent for the backend, and both ends. "disabled" is
// the default configuration; "enabled" batches spans to an exporter that discards them, so it
// measures the gateway's side of the SDK, not the network. Reported, never asserted.
func BenchmarkRequest(b *testing.B) {
	off, _ := New(Config{}, nil)
	on := newTracer(Config{Endpoint: "http://127.0.0.1:4318"}.WithDefaults(),
		sdktrace.NewBatchSpanProcessor(tracetest.NewNoopExporter()))
	defer func() { _ = on.Shutdown(context.Background()) }()
	for name, tr := range map[string]*Tracer{"disabled": off, "enabled": on} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rctx, end := tr.StartRequest(ctx, "tools/call", callerParent, time.Now())
				bctx, endCall := tr.StartBackend(rctx, "alpha", "tools/call")
				_ = tr.TraceParent(bctx)
				endCall("ok", nil)
				end("ok", nil)
			}
		})
	}
}
