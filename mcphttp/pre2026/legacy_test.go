package pre2026

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// legacyVersions are the two pre-2026 versions every client test runs with.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// testKeyRing is a key ring for legacy session ids; keys lets a test rotate them.
func testKeyRing(tb testing.TB, keys ...seal.Key) *seal.KeyRing {
	tb.Helper()
	if len(keys) == 0 {
		keys = []seal.Key{{ID: "t", Secret: bytes.Repeat([]byte("l"), 32)}}
	}
	ring, err := seal.New(seal.Config{Keys: keys})
	if err != nil {
		tb.Fatal(err)
	}
	return ring
}

// legacyHeaders are the headers of a pre-2026 client's POST: no Mcp-Method, no Mcp-Name.
func legacyHeaders(version, session string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	return h
}

func initBody(version, caps string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"1"}}}`
}

// legacyInit runs the handshake by hand and returns the session id.
func legacyInit(t *testing.T, url, version, caps string, extra ...string) (string, *response) {
	t.Helper()
	h := legacyHeaders("", "")
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	r := do(t, "POST", url, h, initBody(version, caps))
	if r.Status != 200 {
		t.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id; %s", r.Body)
	}
	return sid, r
}

// TestLegacyGoSDKClients: the go-sdk v1.8.0 client pinned to each pre-2026 version connects
// through the gateway to a 2026-07-28 backend and uses every list, a tool call, a prompt, a
// resource read and completion.
func TestLegacyGoSDKClients(t *testing.T) {
	for _, v := range legacyVersions {
		t.Run(v, func(t *testing.T) {
			be := mcptest.StartServer(t, "be")
			gw, _ := startLegacyGateway(t, gwSpec{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
			cs := mcptest.Connect(t, gw.URL, mcptest.WithProtocolVersion(v))
			ctx := t.Context()
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %q, want %q", got, v)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v %+v", err, tools)
			}
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				t.Fatalf("prompts/list: %v", err)
			}
			resources, err := cs.ListResources(ctx, nil)
			if err != nil || len(resources.Resources) == 0 {
				t.Fatalf("resources/list: %v", err)
			}
			if res, err := cs.ListResourceTemplates(ctx, nil); err != nil || len(res.ResourceTemplates) == 0 {
				t.Fatalf("resources/templates/list: %v", err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || mcptest.ResultText(res) != "hi" {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
			sum, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__add", Arguments: map[string]any{"a": 2, "b": 3}})
			wantSum := "5"
			if v == "2025-03-26" {
				// No structured output in 2025-03-26: a text block carries it.
				wantSum = `5{"sum":5}`
			}
			if err != nil || sum.IsError || mcptest.ResultText(sum) != wantSum || (v == "2025-03-26") != (sum.StructuredContent == nil) {
				t.Fatalf("tools/call add: %v %+v", err, sum)
			}
			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "be__greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("prompts/get: %v %+v", err, p)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.Resources[0].URI})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != mcptest.ReadmeText {
				t.Fatalf("resources/read: %v %+v", err, rr)
			}
			c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "be__greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
			if err != nil || len(c.Completion.Values) != 2 {
				t.Fatalf("completion/complete: %v %+v", err, c)
			}
			// Every request reached the backend as a 2026-07-28 one.
			for _, ex := range be.Forwarded() {
				if ex.Header.Get("Mcp-Protocol-Version") != mcphttp.ProtocolVersion || !strings.Contains(string(ex.Body), `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
					t.Errorf("backend got a non-2026 request: %v %s", ex.Header, ex.Body)
				}
			}
			if got := be.RequestsOf("initialize"); len(got) != 0 {
				t.Errorf("the backend saw %d initialize requests", len(got))
			}
		})
	}
}
