package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestTraceMetaOffGrammarNotForwarded: a trace member in _meta that the gateway does not forward
// as a header (a traceparent off the W3C grammar, and the tracestate that came with it; a
// tracestate or baggage off its grammar; a tracestate without a traceparent, or with another
// traceparent than the one the headers carry; a traceparent of a later version longer than the
// bound of every trace value) is not forwarded in _meta either: the backend
// starts a new trace rather than reading what the caller wrote, for clients of both eras and
// backends of both eras. A request-phase
// interceptor is shown exactly what the backend gets, so a validator refusing the member's
// text never fires. A trace that keeps to its grammars still reaches the backend in the headers
// and in _meta.
func TestTraceMetaOffGrammarNotForwarded(t *testing.T) {
	const mark = "kmark7" // in every member that must not reach the backend
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	longParent := "01" + tp[2:] + "-" + mark + strings.Repeat("x", 8192)
	alpha := mcptest.StartServer(t, "alpha")
	old := mcptest.StartLegacyServer(t, "old")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf(mark, "the member reached the interceptor")},
	})
	gw := startTestGateway(t, func(c *Config) {
		guard := interceptorEntry("guard", ics.URL(), intercept.TypeValidation, []string{"echo"}, "request")
		guard.Rules[0].Upstream = "*"
		c.Interceptors = []InterceptorConfig{guard}
	}, alpha, old)
	url := "http://" + gw.MCP + "/mcp"
	const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`
	body := func(id int, tool, meta string, modern bool) string {
		if modern {
			meta = modernMeta + meta
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{%s},"name":%q,"arguments":{"text":"hi"}}}`, id, meta, tool)
	}
	cases := []struct {
		name string
		hdr  http.Header
		meta string
	}{
		{"traceparent off its grammar", nil, `"traceparent":"00-` + mark + `-00f067aa0ba902b7-01"`},
		{"traceparent in upper case, its tracestate with it", nil,
			`"traceparent":"` + strings.ToUpper(tp) + `","tracestate":"k=` + mark + `"`},
		{"traceparent version ff", nil, `"traceparent":"ff` + tp[2:] + `","baggage":"b=1","tracestate":"k=` + mark + `"`},
		{"tracestate off its grammar", nil, `"traceparent":"` + tp + `","tracestate":"Vendor=` + mark + `;x"`},
		{"tracestate without traceparent", nil, `"tracestate":"k=` + mark + `"`},
		{"baggage off its grammar", nil, `"baggage":"note=` + mark + ` in words"`},
		{"baggage with a quote", nil, `"baggage":"k=\"` + mark + `\""`},
		{"tracestate of another traceparent than the header's", http.Header{"Traceparent": {tp}},
			`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"k=` + mark + `"`},
		{"baggage under an invalid Baggage header", http.Header{"Baggage": {"a b"}}, `"baggage":"k=` + mark + `"`},
		// A later version may append fields, but not without bound: each would be a header of
		// the body's size to the backend, and to each interceptor.
		{"traceparent of a later version over 8192 bytes", nil, `"traceparent":"` + longParent + `","tracestate":"k=v"`},
		{"Traceparent header of a later version over 8192 bytes", http.Header{"Traceparent": {longParent}}, `"baggage":"b=1"`},
	}
	for _, era := range []string{"2026-07-28", legacyclient.Version} {
		modern := era == "2026-07-28"
		var raw *legacyclient.Raw
		var sid string
		if !modern {
			raw = &legacyclient.Raw{}
			sid = raw.Initialize(t, url)
		}
		call := func(t *testing.T, id int, be *mcptest.Server, hdr http.Header, meta string) (int, string) {
			t.Helper()
			tool := be.Name() + "__echo"
			if modern {
				h := modernHeaders("tools/call", tool)
				for k, v := range hdr {
					h[k] = v
				}
				status, _, b := post(t, url, h, body(id, tool, meta, true))
				return status, b
			}
			raw.Header = hdr
			r := raw.Post(t, url, sid, body(id, tool, meta, false))
			return r.Status, r.Body
		}
		for _, be := range []*mcptest.Server{alpha, old} {
			for i, tc := range cases {
				t.Run(era+"/"+be.Name()+"/"+tc.name, func(t *testing.T) {
					be.Reset()
					status, got := call(t, i+1, be, tc.hdr, tc.meta)
					if status != http.StatusOK || strings.Contains(got, "refused") || strings.Contains(got, "rror") {
						t.Fatalf("%d %.300s", status, got)
					}
					calls := bodyCalls(be)
					if len(calls) != 1 {
						t.Fatalf("the backend received %d calls", len(calls))
					}
					if strings.Contains(string(calls[0].Body), mark) || strings.Contains(fmt.Sprint(calls[0].Header), mark) {
						t.Fatalf("the backend received the member: %v %s", calls[0].Header, calls[0].Body)
					}
				})
			}
		}
		t.Run(era+"/a trace in its grammars propagates", func(t *testing.T) {
			alpha.Reset()
			status, got := call(t, 100, alpha, nil, `"traceparent":"`+tp+`","tracestate":"k=v","baggage":"b=2"`)
			if status != http.StatusOK || strings.Contains(got, "refused") {
				t.Fatalf("%d %.300s", status, got)
			}
			calls := alpha.RequestsOf("tools/call")
			if len(calls) != 1 {
				t.Fatalf("the backend received %d calls", len(calls))
			}
			h, b := calls[0].Header, string(calls[0].Body)
			if h.Get("Traceparent") != tp || h.Get("Tracestate") != "k=v" || h.Get("Baggage") != "b=2" ||
				!strings.Contains(b, `"traceparent":"`+tp+`"`) || !strings.Contains(b, `"tracestate":"k=v"`) || !strings.Contains(b, `"baggage":"b=2"`) {
				t.Fatalf("the backend received %v %s", h, b)
			}
		})
	}
}

// TestTraceMetaFindTools: find_tools fetches the tool catalog from the backends with the trace
// context the gateway accepted, as a tools/list does: a baggage off its grammar in the call's
// _meta reaches no backend.
func TestTraceMetaFindTools(t *testing.T) {
	const mark = "kmark7"
	alpha := mcptest.StartServer(t, "alpha")
	gw := startTestGateway(t, func(c *Config) { c.Server.Search = mcphttp.SearchConfig{Enabled: true} }, alpha)
	alpha.Reset()
	status, r := postCall(t, gw, "", "find_tools", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{},"baggage":"note=`+mark+` in words"},"name":"find_tools","arguments":{"query":"echo"}`)
	if status != http.StatusOK || r.Error != nil {
		t.Fatalf("find_tools: %d %+v", status, r.Error)
	}
	lists := alpha.RequestsOf("tools/list")
	if len(lists) == 0 {
		t.Fatal("find_tools fetched no catalog")
	}
	for _, l := range lists {
		if strings.Contains(string(l.Body), mark) || strings.Contains(fmt.Sprint(l.Header), mark) {
			t.Fatalf("the backend's tools/list carried the member: %v %s", l.Header, l.Body)
		}
	}
}

// bodyCalls are the tools/call requests be received, read from their bodies: a pre-2026 backend
// gets no Mcp-Method header to tell them by.
func bodyCalls(be *mcptest.Server) []mcptest.Exchange {
	var out []mcptest.Exchange
	for _, e := range be.Requests() {
		if strings.Contains(string(e.Body), `"method":"tools/call"`) {
			out = append(out, e)
		}
	}
	return out
}
