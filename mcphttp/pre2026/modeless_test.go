package pre2026

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestElicitationDeclaredBeforeModes: a client of 2025-06-18, whose revision gives elicitation
// no modes, declares it with an elicitation object of any content: one holding "url" (a member
// that revision does not define, which an SDK that also speaks 2025-11-25 may send) has
// elicitation, and is asked the gateway's confirmation as a form, the only kind its revision
// has. Before, it was read as declaring URL mode alone, which 2025-06-18 lacks, so as having no
// elicitation at all: every call needing a confirmation failed with "requires elicitation,
// which this client did not declare". A client that wrote its capabilities for 2025-11-25 and
// was answered 2025-06-18 (a gateway serving only that) declared URL mode only, which its
// session cannot use, and is still not asked.
func TestElicitationDeclaredBeforeModes(t *testing.T) {
	var runs atomic.Int32
	be := mcptest.StartServer(t, "be", destructiveTool(&runs))
	gw, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	call := &mcp.CallToolParams{Name: "be__wipe", Arguments: map[string]any{}}
	for _, caps := range []*mcp.ClientCapabilities{
		{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
	} {
		before := runs.Load()
		cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion("2025-06-18"), mcptest.WithCapabilities(caps),
			mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
		res, err := cs.CallTool(t.Context(), call)
		if err != nil || res.IsError || mcptest.ResultText(res) != "wiped" || runs.Load() != before+1 {
			t.Errorf("2025-06-18 client declaring elicitation %+v: %v %+v, runs %d", caps.Elicitation, err, res, runs.Load()-before)
		}
	}

	only0618, _ := startAskingGateway(t, gwSpec{Server: mcphttp.Config{ConfirmDestructiveTools: true}, Edge: Config{Versions: []string{"2025-06-18"}}},
		upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	before := runs.Load()
	cs := mcptest.Connect(t, only0618.URL, mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithCapabilities(&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
	res, err := cs.CallTool(t.Context(), call)
	if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "requires elicitation") || runs.Load() != before {
		t.Errorf("a 2025-11-25 client declaring URL mode only, answered 2025-06-18: %v %+v, runs %d", err, res, runs.Load()-before)
	}
}
