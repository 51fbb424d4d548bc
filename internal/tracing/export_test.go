package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/otlptest"
	"github.com/mcp-gateway/gateway/internal/tracing"
)

// TestExportOTLP sends spans over real OTLP/HTTP (protobuf, gzip) to a collector on loopback,
// which decodes them: the span, its trace, its attributes, the resource and the configured
// header all arrive, and Shutdown flushes the batch.
func TestExportOTLP(t *testing.T) {
	col := otlptest.Start(t, 0)
	tr, err := tracing.New(tracing.Config{Endpoint: col.URL, Insecure: true, ServiceVersion: "v-test",
		Headers: map[string]string{"X-Collector-Key": "k-123"}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const tid = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx, end := tr.StartRequest(context.Background(), "tools/call", "00-"+tid+"-00f067aa0ba902b7-01", time.Now())
	_, endCall := tr.StartBackend(ctx, "alpha", "tools/call")
	endCall("ok", nil)
	end("ok", nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	spans := col.Spans()
	if len(spans) != 2 {
		t.Fatalf("collector received %d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if s.TraceID != tid || s.Resource["service.name"] != tracing.DefaultServiceName || s.Resource["service.version"] != "v-test" {
			t.Errorf("span %q: trace %s, resource %v", s.Name, s.TraceID, s.Resource)
		}
		if s.Kind == otlptest.KindClient && (s.Attributes[tracing.KeyUpstream] != "alpha" || s.Attributes[tracing.KeyOutcome] != "ok") {
			t.Errorf("client span attributes %v", s.Attributes)
		}
	}
	reqs := col.Requests()
	if len(reqs) == 0 || reqs[0].Path != otlptest.TracesPath || reqs[0].Header.Get("X-Collector-Key") != "k-123" ||
		reqs[0].Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("export requests %+v", reqs)
	}
}

// TestExportFailureLogged: a collector that refuses the batch costs the request nothing; the
// failure is logged through the gateway's logger, without the header's secret value.
func TestExportFailureLogged(t *testing.T) {
	col := otlptest.Start(t, http.StatusBadRequest)
	var logs bytes.Buffer
	tr, err := tracing.New(tracing.Config{Endpoint: col.URL + "/", Insecure: true,
		Headers: map[string]string{"Authorization": "Bearer collector-secret"}}, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, end := tr.StartRequest(context.Background(), "tools/list", "", time.Now())
	end("ok", nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if len(col.Spans()) != 1 {
		t.Fatalf("collector decoded %d spans, want 1", len(col.Spans()))
	}
	if !strings.Contains(logs.String(), "trace export failed") || strings.Contains(logs.String(), "collector-secret") {
		t.Errorf("log output: %s", logs.String())
	}
}

// TestNewRefusesInvalid: New validates, so a bad configuration fails at start-up.
func TestNewRefusesInvalid(t *testing.T) {
	if _, err := tracing.New(tracing.Config{Endpoint: "http://127.0.0.1:4318"}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("plain http without insecure accepted")
	}
}
