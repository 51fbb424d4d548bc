package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/otlptest"
	"github.com/mcp-gateway/gateway/internal/tracing"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestTracingExport runs the real gateway with tracing on against a collector on loopback that
// decodes the OTLP/HTTP protobuf: one tools/call from a caller with a traceparent yields a
// server span in the caller's trace, under the caller's span, and a client span under it whose
// id is the parent the backend received, in the Traceparent header and in _meta.
func TestTracingExport(t *testing.T) {
	const (
		traceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerID = "00f067aa0ba902b7"
		argument = "tracing-argument-value"
	)
	col := otlptest.Start(t, 0)
	alpha := mcptest.StartServer(t, "alpha")
	// The gateway runs inside the subtest: its cleanup drains it, which flushes the spans.
	t.Run("call", func(t *testing.T) {
		gw := startTestGateway(t, func(c *Config) {
			c.Tracing = TracingConfig{Config: tracing.Config{Endpoint: col.URL, Insecure: true, ServiceName: "gw-test"},
				Headers: map[string]Secret{"X-Collector-Key": {Value: "collector-key"}}}
		}, alpha)
		h := modernHeaders("tools/call", "alpha__echo")
		h.Set("Traceparent", "00-"+traceID+"-"+callerID+"-01")
		status, _, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`+
			`"name":"alpha__echo","arguments":{"text":"`+argument+`"}}}`)
		if status != 200 {
			t.Fatalf("call: %d %s", status, body)
		}
	})

	var server, client *otlptest.Span
	for _, s := range col.Spans() {
		switch {
		case s.Kind == otlptest.KindServer && s.Name == "tools/call":
			server = &s
		case s.Kind == otlptest.KindClient:
			client = &s
		}
		if s.Resource["service.name"] != "gw-test" {
			t.Errorf("span %q resource %v", s.Name, s.Resource)
		}
		// docs/observability.md: tool names and argument values are never recorded.
		if strings.Contains(s.Name, "echo") {
			t.Errorf("span %q is named after the tool", s.Name)
		}
		for k, v := range s.Attributes {
			if strings.Contains(v, argument) || strings.Contains(v, "echo") {
				t.Errorf("span %q attribute %s=%q carries the argument value or the tool name", s.Name, k, v)
			}
		}
	}
	if server == nil || client == nil {
		t.Fatalf("want a server and a client span, got %+v", col.Spans())
	}
	if server.TraceID != traceID || server.ParentSpanID != callerID || server.Attributes[tracing.KeyOutcome] != "ok" {
		t.Errorf("server span %+v does not continue the caller's span", server)
	}
	if client.TraceID != traceID || client.ParentSpanID != server.SpanID || client.Attributes[tracing.KeyUpstream] != "alpha" {
		t.Errorf("client span %+v is not under the server span %s", client, server.SpanID)
	}
	checkBackendParent(t, alpha, "00-"+traceID+"-"+client.SpanID+"-01")
	if reqs := col.Requests(); len(reqs) == 0 || reqs[0].Header.Get("X-Collector-Key") != "collector-key" {
		t.Errorf("the collector header did not arrive: %+v", reqs)
	}
}

// checkBackendParent: the backend's one tools/call carried want as Traceparent and in _meta.
func checkBackendParent(t *testing.T, backend *mcptest.Server, want string) {
	t.Helper()
	calls := backend.RequestsOf("tools/call")
	if len(calls) != 1 {
		t.Fatalf("backend received %d tools/call requests", len(calls))
	}
	var sent struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(calls[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if got := calls[0].Header.Get("Traceparent"); got != want || sent.Params.Meta["traceparent"] != want {
		t.Errorf("backend got Traceparent %q and _meta.traceparent %v, want %q (the client span)", got, sent.Params.Meta["traceparent"], want)
	}
}

func TestTracingConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  TracingConfig
		want []string
	}{
		{"off", TracingConfig{}, nil},
		{"on", TracingConfig{Config: tracing.Config{Endpoint: "https://otel.example.com"}, Headers: map[string]Secret{"Api-Key": {Env: "OTEL_KEY"}}}, nil},
		{"headers without endpoint", TracingConfig{Headers: map[string]Secret{"Api-Key": {Value: "v"}}}, []string{"without tracing.endpoint"}},
		{"two sources", TracingConfig{Config: tracing.Config{Endpoint: "https://otel.example.com"}, Headers: map[string]Secret{"Api-Key": {Value: "v", Env: "E"}}},
			[]string{"tracing.headers.Api-Key: exactly one"}},
		{"plain http", TracingConfig{Config: tracing.Config{Endpoint: "http://collector:4318", SampleRatio: 2}}, []string{"tracing.insecure", "sampleRatio"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The block in a configuration that is valid otherwise: its secrets are checked
			// with every other secret.
			c := newConfig()
			c.Auth.Disabled, c.Server.Listen = true, "127.0.0.1:0"
			c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "a", URL: "http://127.0.0.1:1/mcp"}}}
			c.Tracing = tc.cfg
			c.applyDefaults()
			errs := configerr.List(c.validate())
			got := ""
			for _, e := range errs {
				got += e.Error() + "\n"
			}
			if (len(tc.want) == 0) != (len(errs) == 0) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("errors %q lack %q", got, w)
				}
			}
		})
	}
}
