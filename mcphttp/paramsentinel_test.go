package mcphttp

import (
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestParamHeaderSentinelEdges: two values at the edge of the base64 sentinel, through the
// gateway to a Go SDK and a TypeScript SDK backend that each check Mcp-Param-Region against the
// argument region.
//
// The empty string: the gateway sent it as an empty header, which the Go SDK server (v1.8.0)
// takes for a header not sent, so a valid call with region "" was refused by the backend with
// 400/-32020. It now travels as "=?base64??=", which both servers decode to "" and run.
//
// "=?base64?=" (the prefix and the suffix share a '?'): the TypeScript SDK reads it as the
// sentinel of "" and the Go SDK as the text itself, so the gateway, which took it as the text,
// passed a header that something in front of it reading headers as the TypeScript SDK does
// reads as another value than the argument. It is now refused with 400/-32020 and reaches no
// backend; the argument "=?base64?=" in the sentinel form is served.
func TestParamHeaderSentinelEdges(t *testing.T) {
	goBE := mcptest.StartServer(t, "go", mcptest.WithRegionTool())
	tsURL := tsnames.StartBackend(t, tsnames.Names{RegionTool: true})
	gw := startGateway(t, Config{},
		upstreams.UpstreamConfig{Name: "go", URL: goBE.URL()}, upstreams.UpstreamConfig{Name: "ts", URL: tsURL})
	for _, be := range []string{"go", "ts"} {
		tool := be + "__region"
		call := func(region, header string) *response {
			h := modern("tools/call", tool)
			h["Mcp-Param-Region"] = []string{header} // an empty one too
			return do(t, "POST", gw.URL, h,
				body("tools/call", `,"name":"`+tool+`","arguments":{"region":`+region+`}`))
		}
		for _, header := range []string{"", "=?base64??="} {
			goBE.Reset()
			r := call(`""`, header)
			if r.Status != 200 || r.RPC.Error != nil || strings.Contains(string(r.RPC.Result), `"isError":true`) {
				t.Errorf("%s: region \"\" with header %q: %d %s", be, header, r.Status, r.Body)
				continue
			}
			want := `region=\"\"` // the TypeScript tool's answer: the argument it ran with
			if be == "go" {
				want = "region==?base64??= " // the Go tool's: the header it received, checked by its server
			}
			if !strings.Contains(string(r.RPC.Result), want) {
				t.Errorf("%s: region \"\" with header %q: %s, want %s", be, header, r.RPC.Result, want)
			}
		}
		goBE.Reset()
		if r := call(`"=?base64?="`, "=?base64?="); r.Status != 400 || r.RPC.Error == nil || r.RPC.Error.Code != -32020 ||
			!strings.Contains(r.RPC.Error.Message, "Mcp-Param-Region header value is not validly encoded") {
			t.Errorf("%s: region =?base64?= with the plain header: %d %s, want 400 -32020", be, r.Status, r.Body)
		}
		if n := len(goBE.RequestsOf("tools/call")); n != 0 {
			t.Errorf("%s: the Go backend got %d calls", be, n)
		}
		if r := call(`"=?base64?="`, "=?base64?PT9iYXNlNjQ/PQ==?="); r.Status != 200 || r.RPC.Error != nil || strings.Contains(string(r.RPC.Result), `"isError":true`) {
			t.Errorf("%s: region =?base64?= in the sentinel form: %d %s", be, r.Status, r.Body)
		}
	}
}
