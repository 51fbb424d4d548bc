package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// newTestTracer is the test-only constructor: an enabled Tracer whose spans land, as they end,
// in an in-memory exporter.
func newTestTracer(t *testing.T, cfg Config) (*Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	cfg.Endpoint = "http://127.0.0.1:4318"
	tr := newTracer(cfg.WithDefaults(), sdktrace.NewSimpleSpanProcessor(exp))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.SpanKind == kind {
			return s
		}
	}
	t.Fatalf("no %v span among %d", kind, len(spans))
	return tracetest.SpanStub{}
}

func attrs(s tracetest.SpanStub) map[attribute.Key]string {
	m := make(map[attribute.Key]string, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

// TestRequestAndBackendSpans: a request span continues the caller's trace, the backend span is
// its child, and the traceparent for the backend names the backend span.
func TestRequestAndBackendSpans(t *testing.T) {
	tr, exp := newTestTracer(t, Config{})
	start := time.Now().Add(-time.Second)
	ctx, endReq := tr.StartRequest(context.Background(), "tools/call", callerParent, start)
	bctx, endCall := tr.StartBackend(ctx, "alpha", "tools/call")
	sent := tr.TraceParent(bctx)
	endCall("ok", nil)
	endReq("ok", nil)

	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	srv, cli := spanNamed(t, spans, trace.SpanKindServer), spanNamed(t, spans, trace.SpanKindClient)
	if got := srv.SpanContext.TraceID().String(); got != callerTrace {
		t.Errorf("server span trace id %s, want the caller's %s", got, callerTrace)
	}
	if got := srv.Parent.SpanID().String(); got != callerSpan || !srv.Parent.IsRemote() {
		t.Errorf("server span parent %s (remote %v), want the caller's span %s", got, srv.Parent.IsRemote(), callerSpan)
	}
	if !srv.StartTime.Equal(start) {
		t.Errorf("server span starts %v, want the request's start %v", srv.StartTime, start)
	}
	if cli.Parent.SpanID() != srv.SpanContext.SpanID() || cli.SpanContext.TraceID() != srv.SpanContext.TraceID() {
		t.Errorf("backend span parent %s, want the server span %s", cli.Parent.SpanID(), srv.SpanContext.SpanID())
	}
	if want := "00-" + callerTrace + "-" + cli.SpanContext.SpanID().String() + "-01"; sent != want {
		t.Errorf("TraceParent = %q, want %q", sent, want)
	}
	if a := attrs(cli); a[KeyRPCSystem] != "mcp" || a[KeyMethod] != "tools/call" || a[KeyUpstream] != "alpha" || a[KeyOutcome] != "ok" {
		t.Errorf("backend span attributes %v", a)
	}
	if srv.Name != "tools/call" || srv.Status.Code == codes.Error {
		t.Errorf("server span %q status %v", srv.Name, srv.Status)
	}
}

// TestRequestParent covers the caller's traceparent forms: absent or invalid ones start a new
// trace, a later version's extra fields are ignored, and an unsampled caller is not exported
// but still propagated.
func TestRequestParent(t *testing.T) {
	for _, tc := range []struct {
		name, traceparent string
		wantExported      bool
		wantTrace         string // "" for a new trace id
	}{
		{"none", "", true, ""},
		{"invalid", "00-" + callerTrace + "-0000000000000000-01", true, ""},
		{"version ff", "ff-" + callerTrace + "-" + callerSpan + "-01", true, ""},
		{"later version", "01-" + callerTrace + "-" + callerSpan + "-01-extra", true, callerTrace},
		{"unsampled", "00-" + callerTrace + "-" + callerSpan + "-00", false, callerTrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, exp := newTestTracer(t, Config{})
			ctx, end := tr.StartRequest(context.Background(), "tools/list", tc.traceparent, time.Now())
			tp := tr.TraceParent(ctx)
			end("ok", nil)
			if got := len(exp.GetSpans()) == 1; got != tc.wantExported {
				t.Fatalf("exported %v, want %v", got, tc.wantExported)
			}
			sc, ok := parseTraceParent(tp)
			if !ok {
				t.Fatalf("TraceParent %q does not parse", tp)
			}
			if tc.wantTrace != "" && sc.TraceID().String() != tc.wantTrace {
				t.Errorf("trace id %s, want %s", sc.TraceID(), tc.wantTrace)
			}
			if tc.wantTrace == "" && sc.TraceID().String() == callerTrace {
				t.Errorf("an invalid traceparent was continued")
			}
			if sc.IsSampled() != tc.wantExported {
				t.Errorf("propagated sampled=%v, want %v", sc.IsSampled(), tc.wantExported)
			}
		})
	}
}

// TestOutcomeStatus: server-side outcomes and errors mark a span failed; client-side ones do
// not, and the error's text is never recorded.
func TestOutcomeStatus(t *testing.T) {
	for _, tc := range []struct {
		outcome string
		err     error
		failed  bool
	}{
		{"ok", nil, false},
		{"client_error", nil, false},
		{"denied", nil, false},
		{"backend_error", nil, true},
		{"bad_response", nil, true},
		{"error", nil, true},
		{"rate_limited", nil, false},
		{"input_required", nil, false},
		{"timeout", nil, true},
		{"unavailable", errors.New("dial 127.0.0.1:1: refused, argument secret-argument-value"), true},
		{"canceled", context.Canceled, true},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			tr, exp := newTestTracer(t, Config{})
			ctx, end := tr.StartRequest(context.Background(), "tools/call", "", time.Now())
			_, endCall := tr.StartBackend(ctx, "alpha", "tools/call")
			endCall(tc.outcome, tc.err)
			end(tc.outcome, nil)
			cli := spanNamed(t, exp.GetSpans(), trace.SpanKindClient)
			if got := cli.Status.Code == codes.Error; got != tc.failed {
				t.Errorf("failed = %v, want %v", got, tc.failed)
			}
			if tc.failed && attrs(cli)[KeyErrorType] != tc.outcome {
				t.Errorf("error.type %q, want %q", attrs(cli)[KeyErrorType], tc.outcome)
			}
			assertNoLeak(t, exp.GetSpans(), "secret-argument-value")
		})
	}
}

// assertNoLeak fails if any attribute key outside the gateway's own set, or any value, event or
// status containing leak, appears on the spans.
func assertNoLeak(t *testing.T, spans tracetest.SpanStubs, leak string) {
	t.Helper()
	allowed := map[attribute.Key]bool{KeyRPCSystem: true, KeyMethod: true, KeyUpstream: true, KeyOutcome: true, KeyErrorType: true}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if !allowed[kv.Key] || strings.Contains(kv.Value.String(), leak) {
				t.Errorf("span %q carries attribute %s=%q", s.Name, kv.Key, kv.Value.String())
			}
		}
		if len(s.Events) > 0 || strings.Contains(s.Status.Description, leak) || strings.Contains(s.Name, leak) {
			t.Errorf("span %q records events %v or status %q", s.Name, s.Events, s.Status.Description)
		}
	}
}

// TestDisabled: without an endpoint, and for a nil Tracer, every method is a no-op that
// allocates nothing and leaves the context alone.
func TestDisabled(t *testing.T) {
	off, err := New(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, tr := range map[string]*Tracer{"no endpoint": off, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Now()
			allocs := testing.AllocsPerRun(100, func() {
				rctx, end := tr.StartRequest(ctx, "tools/call", callerParent, start)
				bctx, endCall := tr.StartBackend(rctx, "alpha", "tools/call")
				if tr.TraceParent(bctx) != "" || rctx != ctx || bctx != ctx {
					t.Fatal("a disabled tracer changed the context or made a traceparent")
				}
				endCall("ok", nil)
				end("ok", nil)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per request, want 0", allocs)
			}
			if tr.Enabled() || tr.Shutdown(ctx) != nil {
				t.Error("a disabled tracer reports enabled or fails to shut down")
			}
		})
	}
}

func TestTraceParentRoundTrip(t *testing.T) {
	for _, tp := range []string{callerParent, "00-" + callerTrace + "-" + callerSpan + "-00", "00-" + callerTrace + "-" + callerSpan + "-03"} {
		sc, ok := parseTraceParent(tp)
		if !ok || formatTraceParent(sc) != tp {
			t.Errorf("%q: parsed %v, formatted %q", tp, ok, formatTraceParent(sc))
		}
	}
	for _, bad := range []string{"", "00-" + callerTrace + "-" + callerSpan, "00-" + strings.ToUpper(callerTrace) + "-" + callerSpan + "-01x",
		"00-00000000000000000000000000000000-" + callerSpan + "-01", "00-" + callerTrace + "-" + callerSpan + "-zz"} {
		if _, ok := parseTraceParent(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
