package mcphttp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/otlptest"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/upstreams"
)

const (
	callerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID  = "00f067aa0ba902b7"
)

// traceBackend is a backend on loopback that records the trace context each tools/call
// carried, in the Traceparent header and in params._meta.
type traceBackend struct {
	mu               sync.Mutex
	header, metaSeen []string
}

func (b *traceBackend) calls() (header, meta []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.header...), append([]string(nil), b.metaSeen...)
}

func (b *traceBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Method string `json:"method"`
		Params struct {
			Meta struct {
				TraceParent string `json:"traceparent"`
			} `json:"_meta"`
		} `json:"params"`
	}
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &req)
	if req.Method == "tools/call" {
		b.mu.Lock()
		b.header = append(b.header, r.Header.Get("Traceparent"))
		b.metaSeen = append(b.metaSeen, req.Params.Meta.TraceParent)
		b.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	if req.Method == "tools/list" { // the gateway calls only what the backend lists
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"resultType":"complete"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}`)
}

// tracedGateway serves mcphttp with tracing to col in front of backend.
func tracedGateway(t *testing.T, col *otlptest.Collector, backend http.Handler) (string, *tracing.Tracer) {
	t.Helper()
	be := httptest.NewServer(backend)
	t.Cleanup(be.Close)
	tr, err := tracing.New(tracing.Config{Endpoint: col.URL, Insecure: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) }) // a test that fails early
	_, e := testServer(t, Config{}, oneBackend(be.URL+"/mcp"), upstreams.Options{}, Deps{Tracer: tr})
	return serveTest(t, e).URL + DefaultPath, tr
}

func spanOfKind(t *testing.T, spans []otlptest.Span, kind int32) otlptest.Span {
	t.Helper()
	for _, s := range spans {
		if s.Kind == kind {
			return s
		}
	}
	t.Fatalf("no span of kind %d among %+v", kind, spans)
	return otlptest.Span{}
}

// TestTracedCall: a forwarded call makes a server span continuing the caller's trace, wherever
// the caller put it, and a client span under it whose id is the parent the backend receives in
// the Traceparent header and in _meta.
func TestTracedCall(t *testing.T) {
	caller := "00-" + callerTraceID + "-" + callerSpanID + "-01"
	for _, tc := range []struct {
		name, header, meta string
		continued          bool
	}{
		{"header", caller, "", true},
		{"meta only", "", caller, true},
		{"none", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col, backend := otlptest.Start(t, 0), &traceBackend{}
			url, tr := tracedGateway(t, col, backend)
			h := with(modern("tools/call", "be__echo"), "Traceparent", tc.header)
			metaTP := ""
			if tc.meta != "" {
				metaTP = `,"traceparent":"` + tc.meta + `"`
			}
			b := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + strings.TrimSuffix(meta, "}") + metaTP +
				`},"name":"be__echo","arguments":{"text":"argument-value-secret"}}}`
			if r := do(t, http.MethodPost, url, h, b); r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := col.Spans()
			srv, cli := spanOfKind(t, spans, otlptest.KindServer), spanOfKind(t, spans, otlptest.KindClient)
			if continued := srv.TraceID == callerTraceID && srv.ParentSpanID == callerSpanID; continued != tc.continued {
				t.Errorf("server span trace %s parent %s: continued %v, want %v", srv.TraceID, srv.ParentSpanID, continued, tc.continued)
			}
			if cli.ParentSpanID != srv.SpanID || cli.TraceID != srv.TraceID || cli.Attributes[tracing.KeyUpstream] != "be" {
				t.Errorf("client span %+v is not under server span %s", cli, srv.SpanID)
			}
			want := "00-" + cli.TraceID + "-" + cli.SpanID + "-01"
			if hdr, m := backend.calls(); len(hdr) != 1 || hdr[0] != want || m[0] != want {
				t.Errorf("backend got traceparent %q / _meta %q, want %q", hdr, m, want)
			}
			for _, s := range spans {
				for k, v := range s.Attributes {
					if strings.Contains(v, "argument-value-secret") {
						t.Errorf("span %q attribute %s carries an argument value", s.Name, k)
					}
				}
			}
		})
	}
}

// TestTracedRefusal: a request refused before its body is read still gets a server span, under
// a name from the closed set.
func TestTracedRefusal(t *testing.T) {
	col := otlptest.Start(t, 0)
	url, tr := tracedGateway(t, col, &traceBackend{})
	h := with(modern("tools/call", "be__echo"), "Content-Type", "text/plain",
		"Traceparent", "00-"+callerTraceID+"-"+callerSpanID+"-01")
	if r := do(t, http.MethodPost, url, h, body("tools/call", `,"name":"be__echo"`)); r.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("status %d", r.Status)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := spanOfKind(t, col.Spans(), otlptest.KindServer)
	if srv.Name != spanOther || srv.TraceID != callerTraceID || srv.Attributes[tracing.KeyOutcome] != outcomeClientError || srv.StatusError {
		t.Errorf("refused request's span %+v", srv)
	}
}

// BenchmarkForwardToolsCallTraced is BenchmarkForwardToolsCall with tracing on, exporting in
// batches over OTLP/HTTP to a collector on loopback: the per-request cost of the two spans
// against the untraced benchmark. Reported, never asserted.
func BenchmarkForwardToolsCallTraced(b *testing.B) {
	tr, err := tracing.New(tracing.Config{Endpoint: otlptest.Start(b, 0).URL, Insecure: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	_, e := testServer(b, Config{}, oneBackend("http://127.0.0.1:9/mcp"), upstreams.Options{Transport: newCannedBackend()},
		Deps{Tracer: tr})
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"be__echo","arguments":{"text":"hello"}}}`
	h := with(modern("tools/call", "be__echo"), "Traceparent", "00-"+callerTraceID+"-"+callerSpanID+"-01")
	benchPost(b, e, h, body)
}
