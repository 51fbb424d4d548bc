package tracing

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/outcome"
)

// Attribute keys set on every span. Values are method names, configured upstream names and
// outcomes: never argument values, tokens or names of secrets.
const (
	KeyRPCSystem = "rpc.system"
	KeyMethod    = "mcp.method"
	KeyUpstream  = "mcp.upstream"
	KeyOutcome   = "mcp.outcome"
	// KeyErrorType classifies a failed span (OpenTelemetry semantic conventions, error.type).
	KeyErrorType = "error.type"
	// rpcSystemMCP is the rpc.system value.
	rpcSystemMCP = "mcp"
	// scopeName identifies the gateway's instrumentation.
	scopeName = "github.com/mcp-gateway/gateway"
)

// Batching of exported spans. Set explicitly so that the SDK's OTEL_BSP_* environment
// variables, which this package does not own, cannot change them.
const (
	batchTimeout   = 5 * time.Second
	batchQueueSize = 2048
	batchMaxSize   = 512
	connectTimeout = 5 * time.Second
)

// End finishes a span with the outcome of what it covered (docs/observability.md's outcome
// table). A non-nil err, or a server-side outcome, marks the span as failed; the error's text
// is not recorded, since a backend may have put caller input in it.
type End func(outcome string, err error)

// Tracer starts the gateway's spans. A nil *Tracer, or one built from a Config without an
// endpoint, is a no-op: its methods return at once without allocating.
type Tracer struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
	client   *http.Client // the exporter's; nil with the in-memory exporter of tests
}

// New returns a Tracer exporting to cfg.Endpoint over OTLP/HTTP (protobuf, gzip), or a no-op
// Tracer when cfg has no endpoint. Export failures are logged to log, never returned to a
// request. Call Shutdown on drain to flush what is batched.
func New(cfg Config, log *slog.Logger) (*Tracer, error) {
	if !cfg.Enabled() {
		return &Tracer{}, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	client := exportClient(cfg)
	exp, err := otlptracehttp.New(context.Background(), exporterOptions(cfg, client)...)
	if err != nil {
		return nil, err
	}
	proc := sdktrace.NewBatchSpanProcessor(loggedExporter{exp, log},
		sdktrace.WithBatchTimeout(batchTimeout), sdktrace.WithMaxQueueSize(batchQueueSize),
		sdktrace.WithMaxExportBatchSize(batchMaxSize), sdktrace.WithExportTimeout(cfg.Timeout))
	t := newTracer(cfg, proc)
	t.client = client
	return t, nil
}

// exportClient is the HTTP client of the exporter. It has no Proxy: a proxy would be
// configured explicitly, not taken from the environment.
func exportClient(cfg Config) *http.Client {
	d := &net.Dialer{Timeout: connectTimeout}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, ForceAttemptHTTP2: true,
			MaxIdleConns: 2, IdleConnTimeout: time.Minute, TLSHandshakeTimeout: connectTimeout},
		Timeout: cfg.Timeout,
	}
}

// exporterOptions sets every exporter setting explicitly: otherwise the exporter would read
// OTEL_EXPORTER_OTLP_* variables, and packages take their configuration from the caller only.
func exporterOptions(cfg Config, client *http.Client) []otlptracehttp.Option {
	headers := make(map[string]string, len(cfg.Headers))
	for k, v := range cfg.Headers {
		headers[k] = v
	}
	return []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(cfg.exportURL()),
		otlptracehttp.WithHeaders(headers),
		otlptracehttp.WithTimeout(cfg.Timeout),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
		otlptracehttp.WithHTTPClient(client),
	}
}

// newTracer builds an enabled Tracer around a span processor: the batching OTLP exporter in
// production, a synchronous in-memory exporter in tests.
func newTracer(cfg Config, proc sdktrace.SpanProcessor) *Tracer {
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.ServiceVersion))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		// The SDK's defaults, stated so that its OTEL_SPAN_* variables cannot change them.
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   sdktrace.DefaultAttributeValueLengthLimit,
			AttributeCountLimit:         sdktrace.DefaultAttributeCountLimit,
			EventCountLimit:             sdktrace.DefaultEventCountLimit,
			LinkCountLimit:              sdktrace.DefaultLinkCountLimit,
			AttributePerEventCountLimit: sdktrace.DefaultAttributePerEventCountLimit,
			AttributePerLinkCountLimit:  sdktrace.DefaultAttributePerLinkCountLimit,
		}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
		sdktrace.WithSpanProcessor(proc),
	)
	return &Tracer{tracer: tp.Tracer(scopeName), provider: tp}
}

// Enabled reports whether t exports spans.
func (t *Tracer) Enabled() bool { return t != nil && t.tracer != nil }

// StartRequest starts the server span of one client request, begun at start, as a child of
// the caller's span when traceparent is a valid W3C traceparent (the caller's trace is
// continued), else as a new trace. method should come from a closed set, as it names the span.
func (t *Tracer) StartRequest(ctx context.Context, method, traceparent string, start time.Time) (context.Context, End) {
	if !t.Enabled() {
		return ctx, noEnd
	}
	if sc, ok := parseTraceParent(traceparent); ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String(KeyRPCSystem, rpcSystemMCP), attribute.String(KeyMethod, method)))
	return ctx, endSpan(span)
}

// StartBackend starts the client span of one call to a backend, a child of the span in ctx.
// upstream is the configured backend name.
func (t *Tracer) StartBackend(ctx context.Context, upstream, method string) (context.Context, End) {
	if !t.Enabled() {
		return ctx, noEnd
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(KeyRPCSystem, rpcSystemMCP), attribute.String(KeyMethod, method),
			attribute.String(KeyUpstream, upstream)))
	return ctx, endSpan(span)
}

// TraceParent returns the W3C traceparent of the span in ctx, to send to a backend so its
// spans hang under the gateway's, or "" when t is disabled or ctx holds no span.
func (t *Tracer) TraceParent(ctx context.Context) string {
	if !t.Enabled() {
		return ""
	}
	return formatTraceParent(trace.SpanContextFromContext(ctx))
}

// Shutdown exports what is batched and stops exporting, within ctx.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	err := t.provider.Shutdown(ctx)
	if t.client != nil {
		t.client.CloseIdleConnections() // the exporter keeps its connections otherwise
	}
	return err
}

func noEnd(string, error) {}

func endSpan(span trace.Span) End {
	return func(outcome string, err error) {
		span.SetAttributes(attribute.String(KeyOutcome, outcome))
		if err != nil || serverSide(outcome) {
			span.SetAttributes(attribute.String(KeyErrorType, outcome))
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}

// serverSide reports the outcomes that are the gateway's or a backend's error rather than the
// client's (docs/observability.md, "Whose problem"): OpenTelemetry marks a span failed only for
// those. A backend's JSON-RPC error is one too: the call it traces returned an error.
func serverSide(o string) bool {
	switch o {
	case outcome.GatewayError, outcome.BackendError, outcome.BadResponse, outcome.Timeout, outcome.Unavailable:
		return true
	}
	return false
}

// loggedExporter reports export failures to the gateway's logger instead of the SDK's global
// error handler, which would need global state to redirect.
type loggedExporter struct {
	sdktrace.SpanExporter
	log *slog.Logger
}

// ExportSpans exports spans; a failure is logged and the batch dropped.
func (e loggedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.log.LogAttrs(ctx, slog.LevelWarn, "trace export failed", slog.Int("spans", len(spans)), slog.String("error", configerr.RedactURLs(err.Error())))
	}
	return nil
}
