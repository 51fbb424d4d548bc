package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorsSeeTheForwardedTrace: the backend receives the caller's W3C trace context
// (Baggage and Tracestate headers, and the same values in the forwarded _meta, the headers
// winning over the client's _meta), so a request-phase interceptor is shown it in the payload's
// _meta: a validator refusing a secret finds it in baggage sent as a header, in _meta, and in a
// header that overrides a harmless _meta value, and the backend receives none of those calls;
// a clean trace still reaches the backend.
func TestInterceptorsSeeTheForwardedTrace(t *testing.T) {
	const secret = "trace-secret-42"
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf(secret, "no secrets")},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Interceptors = []InterceptorConfig{interceptorEntry("guard", ics.URL(), intercept.TypeValidation, []string{"echo"}, "request")}
	}, alpha)
	const meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	call := func(hdr map[string]string, extraMeta string) (int, string) {
		h := modernHeaders("tools/call", "alpha__echo")
		h.Set("Traceparent", parent)
		for k, v := range hdr {
			h.Set(k, v)
		}
		status, _, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{`+
			meta+extraMeta+`},"name":"alpha__echo","arguments":{"text":"hi"}}}`)
		return status, body
	}
	for name, tc := range map[string]struct {
		hdr  map[string]string
		meta string
	}{
		"Baggage header":              {map[string]string{"Baggage": "k=" + secret}, ""},
		"Tracestate header":           {map[string]string{"Tracestate": "vendor=" + secret}, ""},
		"baggage in _meta":            {nil, `,"baggage":"k=` + secret + `"`},
		"header over a clean _meta":   {map[string]string{"Baggage": "k=" + secret}, `,"baggage":"k=clean"`},
		"second Baggage header value": {map[string]string{"Baggage": "a=1,k=" + secret}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			alpha.Reset()
			status, body := call(tc.hdr, tc.meta)
			if status != http.StatusOK || !strings.Contains(body, "refused by the gateway's interceptor guard") {
				t.Fatalf("%d %.300s", status, body)
			}
			if n := toolCalls(alpha); n != 0 {
				t.Fatalf("the backend received the refused call: %s", lastCallBody(alpha))
			}
		})
	}
	t.Run("clean trace propagates", func(t *testing.T) {
		alpha.Reset()
		status, body := call(map[string]string{"Baggage": "k=v", "Tracestate": "vendor=x"}, "")
		if status != http.StatusOK || strings.Contains(body, "refused") {
			t.Fatalf("%d %.300s", status, body)
		}
		calls := alpha.RequestsOf("tools/call")
		if len(calls) != 1 {
			t.Fatalf("the backend received %d calls", len(calls))
		}
		h := calls[0].Header
		if h.Get("Traceparent") != parent || h.Get("Baggage") != "k=v" || h.Get("Tracestate") != "vendor=x" ||
			!strings.Contains(string(calls[0].Body), `"baggage":"k=v"`) {
			t.Fatalf("the backend received %v %s", h, calls[0].Body)
		}
	})
}
