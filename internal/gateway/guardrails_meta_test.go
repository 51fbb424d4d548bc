package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsProtocolMetaMembers: the _meta members the gateway reads itself (the protocol's
// version, capabilities, client description, log level and authorization context, the progress
// token, trace context) reach the backend as the client wrote them, so a credential or an
// address in any of them, or in the Baggage and Tracestate headers the backend also receives,
// is refused before the backend gets anything, like one in the arguments. They used to be
// passed over. Random handles there are not taken for credentials (high-entropy does not read
// them): a call with a random progress token, trace context and authorization context id runs.
func TestGuardrailsProtocolMetaMembers(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "params", Tools: []string{"*"},
			// Secrets redacted: these members are block-only (a value the gateway reads is
			// not rewritten under it), so a credential there refuses the call all the same.
			Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "block"}}}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	const (
		version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		caps    = `"io.modelcontextprotocol/clientCapabilities":{}`
		parent  = `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`
	)
	call := func(meta string, hdr ...string) *mcptest.Response {
		t.Helper()
		h := mcptest.RequestHeaders("tools/call", "alpha__echo")
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Set(hdr[i], hdr[i+1])
		}
		return mcptest.Do(t, "POST", url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{`+
			meta+`},"name":"alpha__echo","arguments":{"text":"hi"}}}`)
	}
	leaked := func() bool {
		for _, e := range alpha.RequestsOf("tools/call") {
			b := string(e.Body) + e.Header.Get("Baggage") + e.Header.Get("Tracestate")
			if strings.Contains(b, railAWSKey) || strings.Contains(b, railEmail) {
				return true
			}
		}
		return false
	}
	for what, tc := range map[string]struct {
		meta string
		hdr  []string
	}{
		"progressToken":            {version + "," + caps + `,"progressToken":"` + railAWSKey + `"`, nil},
		"baggage":                  {version + "," + caps + `,"baggage":"k=` + railAWSKey + `"`, nil},
		"tracestate":               {version + "," + caps + "," + parent + `,"tracestate":"k=` + railAWSKey + `"`, nil},
		"clientInfo":               {version + "," + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"` + railEmail + `"}`, nil},
		"clientCapabilities":       {version + `,"io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":"` + railAWSKey + `"}}`, nil},
		"authorization-context-id": {version + "," + caps + `,"io.modelcontextprotocol/authorization-context-id":"` + railAWSKey + `"`, nil},
		"Baggage header":           {version + "," + caps, []string{"Baggage", "k=" + railAWSKey}},
		"Tracestate header":        {version + "," + caps, []string{"Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "Tracestate", "k=" + railAWSKey}},
	} {
		alpha.Reset()
		r := call(tc.meta, tc.hdr...)
		if res := string(r.RPC.Result); r.Status != http.StatusOK || !strings.Contains(res, "Refused by guardrail") ||
			strings.Contains(res, railAWSKey) || strings.Contains(res, railEmail) {
			t.Errorf("%s: %d %s, want the call refused", what, r.Status, r.Body)
		}
		if n := len(alpha.RequestsOf("tools/call")); n != 0 || leaked() {
			t.Errorf("%s: the backend got %d calls", what, n)
		}
	}
	// The log level can hold no credential: anything but the eight level names is refused by
	// the decoder (TestMetaLogLevel), before any guardrail, without quoting it.
	alpha.Reset()
	r := call(version + "," + caps + `,"io.modelcontextprotocol/logLevel":"` + railAWSKey + `"`)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "-32602") || strings.Contains(string(r.Body), railAWSKey) {
		t.Errorf("logLevel: %d %s, want -32602 without the value", r.Status, r.Body)
	}
	if n := len(alpha.RequestsOf("tools/call")); n != 0 || leaked() {
		t.Errorf("logLevel: the backend got %d calls", n)
	}
	alpha.Reset()
	r = call(version+","+caps+","+parent+`,"tracestate":"v=8f3kQ2xZ9pL7wR4tY6uB1nM5cV0aS3dF","progressToken":"b7e4c1d2-9a3f-4e6b-8c5d-2f1a0e9b7c63",`+
		`"io.modelcontextprotocol/authorization-context-id":"ctx_Zk8Qw3Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9","io.modelcontextprotocol/clientInfo":{"name":"client","version":"1.2.3"}`,
		"Baggage", "session=Q2hlY2tUaGlzUmFuZG9tU2Vzc2lvbklk")
	if res := string(r.RPC.Result); r.Status != http.StatusOK || !strings.Contains(res, `"text":"hi"`) || strings.Contains(res, "isError") {
		t.Errorf("a call with random handles: %d %s", r.Status, r.Body)
	}
	if n := len(alpha.RequestsOf("tools/call")); n != 1 {
		t.Errorf("a call with random handles: the backend got %d calls, want 1", n)
	}
}

// TestGuardrailsTraceMetaAsForwarded: the trace context in _meta is read as the backend
// receives it, which is not always as the client wrote it: the gateway forwards the trace
// context it validated, in _meta and headers alike, the client's headers winning over its _meta,
// a value off its W3C grammar dropped and a tracestate only with the traceparent it came with.
// A credential in what the gateway drops reaches no backend and refuses nothing (it used to
// refuse the call); one in what replaces it, or in what is forwarded, refuses the call.
func TestGuardrailsTraceMetaAsForwarded(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) {
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "params", Tools: []string{"*"},
			Arguments: guardrails.DirectionConfig{Secrets: "block", PII: "block"}}}}
	}, alpha)
	url := "http://" + gw.MCP + "/mcp"
	const (
		meta      = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		parentVal = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		parent    = `"traceparent":"` + parentVal + `"`
	)
	for _, tc := range []struct {
		name, meta string
		hdr        []string
		refused    bool
	}{
		{"baggage off its grammar, dropped", `,"baggage":"` + railAWSKey + ` !"`, nil, false},
		{"traceparent off its grammar, dropped", `,"traceparent":"` + railAWSKey + `"`, nil, false},
		{"tracestate without its traceparent, dropped", `,"tracestate":"k=` + railAWSKey + `"`, nil, false},
		{"tracestate of a traceparent a header replaced, dropped", "," + parent + `,"tracestate":"k=` + railAWSKey + `"`,
			[]string{"Traceparent", "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, false},
		{"baggage a header replaced", `,"baggage":"k=` + railAWSKey + `"`, []string{"Baggage", "k=v"}, false},
		{"baggage forwarded", `,"baggage":"k=` + railAWSKey + `"`, nil, true},
		{"tracestate forwarded", "," + parent + `,"tracestate":"k=` + railAWSKey + `"`, nil, true},
		{"Baggage header replacing a clean one", `,"baggage":"k=v"`, []string{"Baggage", "k=" + railAWSKey}, true},
	} {
		alpha.Reset()
		h := mcptest.RequestHeaders("tools/call", "alpha__echo")
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			h.Set(tc.hdr[i], tc.hdr[i+1])
		}
		r := mcptest.Do(t, "POST", url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{`+meta+tc.meta+
			`},"name":"alpha__echo","arguments":{"text":"hi"}}}`)
		res := string(r.RPC.Result)
		got := alpha.RequestsOf("tools/call")
		leaked := false
		for _, e := range got {
			leaked = leaked || strings.Contains(string(e.Body)+e.Header.Get("Baggage")+e.Header.Get("Tracestate"), railAWSKey)
		}
		if leaked {
			t.Errorf("%s: the backend received the key", tc.name)
		}
		if tc.refused {
			if r.Status != http.StatusOK || !strings.Contains(res, "Refused by guardrail") || len(got) != 0 {
				t.Errorf("%s: %d %s, the backend got %d calls; want the call refused", tc.name, r.Status, r.Body, len(got))
			}
			continue
		}
		if r.Status != http.StatusOK || !strings.Contains(res, `"text":"hi"`) || strings.Contains(res, "isError") || len(got) != 1 {
			t.Errorf("%s: %d %s, the backend got %d calls; want the call forwarded", tc.name, r.Status, r.Body, len(got))
		}
	}
}
