package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/testsupport/dpopclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadEndsDPoPStreamsItRefuses: a pre-2026 GET stream opened with a DPoP-bound token and
// its proof is judged at a reload as its opening request would be now. The judgement verified
// the token alone, as a bearer token but without the refusal of bound tokens and without the
// proof: a reload that turned DPoP off, for every issuer or for the token's issuer, or no longer
// accepted the proof's algorithm, left the stream running though the new configuration answers
// the same request 401. Now such a stream ends, and one the new configuration still accepts
// (DPoP made required) runs on and delivers.
func TestReloadEndsDPoPStreamsItRefuses(t *testing.T) {
	iss, other := newDPoPIssuer(t), newIssuer(t)
	dc := dpopclient.Start(t)
	caller := newDPoPCaller(t, dc, iss, testResource)
	config := func(dpopYAML, issuersYAML, extra string, alpha *mcptest.Server) string {
		y := authYAML(iss.URL(), `["echo"]`, extra, alpha)
		if issuersYAML != "" {
			y = strings.Replace(y, `issuers: [{issuer: "`+iss.URL()+`"}]`, "issuers: "+issuersYAML, 1)
		}
		return strings.Replace(y, "auth:\n", "auth:\n  dpop: "+dpopYAML+"\n", 1)
	}
	for _, tc := range []struct {
		name, issuers, extra, dpop string
	}{
		{"DPoP turned off", "", "", "{mode: off}"},
		{"the proof's algorithm no longer accepted", "", "", "{mode: allowed, algorithms: [EdDSA, Ed25519]}"},
		{"DPoP turned off for the token's issuer", `[{issuer: "` + iss.URL() + `", dpop: "off"}, {issuer: "` + other.URL() + `"}]`,
			`, issuers: ["` + iss.URL() + `", "` + other.URL() + `"]`, "{mode: allowed}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha")
			f := startReloadGateway(t, "1h", config("{mode: allowed}", "", "", alpha))
			s := openDPoPStream(t, f.url(), testResource, caller)
			if err := f.reload(t, "1h", config(tc.dpop, tc.issuers, tc.extra, alpha)); err != nil {
				t.Fatalf("reload: %v", err)
			}
			s.wantEnded(t, "the stream of a DPoP-bound token outlived a reload that refuses its request")
			h := dpopSessionHeaders(t, caller, testResource)
			if status, _, body := post(t, f.url(), h, legacyInitialize); status != http.StatusUnauthorized {
				t.Fatalf("a new session with the same token and a fresh proof: %d %s, want 401", status, body)
			}
		})
	}
	// Judged with the proof's htu against its endpoint's URL: the gateway's, or a tool set's.
	const roYAML = "toolsets: [{name: ro, path: /ro/mcp, include: [{upstream: alpha}]}]\n"
	for _, tc := range []struct{ endpoint, path, htu string }{
		{"the gateway's endpoint", "/mcp", testResource},
		{"a tool set's endpoint", "/ro/mcp", "https://mcp.test.invalid/ro/mcp"},
	} {
		t.Run("DPoP made required: the stream runs on, at "+tc.endpoint, func(t *testing.T) {
			alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
			f := startReloadGateway(t, "1h", roYAML+config("{mode: allowed}", "", "", alpha))
			s := openDPoPStream(t, "http://"+f.gw.MCP+tc.path, tc.htu, caller)
			waitBackendAcknowledgesListen(t, alpha)
			if err := f.reload(t, "1h", roYAML+config("{mode: required}", "", "", alpha)); err != nil {
				t.Fatalf("reload: %v", err)
			}
			alpha.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			s.wantLine(t, "notifications/tools/list_changed")
		})
	}
}

// legacyInitialize is a 2025-11-25 client's initialize.
const legacyInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// dpopSessionHeaders are a pre-2026 POST's headers with c's token as DPoP and a fresh proof for
// the public URL htu.
func dpopSessionHeaders(t *testing.T, c *dpopCaller, htu string) http.Header {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	h.Set("Authorization", dpop.Scheme+" "+c.token)
	h.Set(dpop.Header, c.proof(t, http.MethodPost, htu, nil))
	return h
}

// openDPoPStream initializes a 2025-11-25 session at url, whose public URL is htu, with c's
// DPoP-bound token and opens its GET stream, each request with a proof of its own method.
func openDPoPStream(t *testing.T, url, htu string, c *dpopCaller) *legacyStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reloadWait)
	t.Cleanup(cancel)
	sid := legacySessionAt(t, url, dpopSessionHeaders(t, c, htu), "2025-11-25")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}, "Mcp-Session-Id": {sid}}
	req.Header.Set("Authorization", dpop.Scheme+" "+c.token)
	req.Header.Set(dpop.Header, c.proof(t, http.MethodGet, htu, nil))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return readLegacyStream(t, ctx, res)
}
