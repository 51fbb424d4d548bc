package mcphttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLargeResultHasContentLength: a JSON result past net/http's 2 KiB buffer (a page of tools)
// goes out with its Content-Length, not chunked; a small one still gets its length from
// net/http.
func TestLargeResultHasContentLength(t *testing.T) {
	var opts []mcptest.Option
	for i := range 40 {
		opts = append(opts, mcptest.WithTool(&mcp.Tool{Name: fmt.Sprintf("tool_%02d", i),
			Description: strings.Repeat("Does one thing well. ", 5), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			}))
	}
	be := mcptest.StartServer(t, "be", opts...)
	gw := startGateway(t, Config{}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, tt := range []struct {
		name, method, toolName, body string
		large                        bool
	}{
		{"tools/list", "tools/list", "", body("tools/list", ""), true},
		{"tools/call", "tools/call", "be__echo", body("tools/call", `,"name":"be__echo","arguments":{"text":"hi"}`), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, gw.URL, strings.NewReader(tt.body))
			req.Header = modern(tt.method, tt.toolName)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
			}
			if (len(b) > chunkingThreshold) != tt.large {
				t.Fatalf("body of %d bytes; the test needs it large=%v", len(b), tt.large)
			}
			if res.ContentLength != int64(len(b)) || len(res.TransferEncoding) != 0 {
				t.Errorf("Content-Length %d, Transfer-Encoding %v for a %d-byte body", res.ContentLength, res.TransferEncoding, len(b))
			}
		})
	}
}
