package gateway

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsPrivateKeyInBase64: a PEM private key block in base64, as a Kubernetes
// Secret's data holds it, is a private key: redacted in a tools/call result's text and
// structuredContent and in a resources/read's contents, and an argument holding one refused
// and never forwarded, in both eras (and to the TypeScript SDK's client); a certificate in
// base64 beside it is relayed as it is.
// Before, the base64 run (longer than the 256 characters the entropy check reads) passed
// every detector.
func TestGuardrailsPrivateKeyInBase64(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(railPrivKey))
	cert := base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----\n"))
	secret := `{"kind":"Secret","data":{"tls.crt":"` + cert + `","tls.key":"` + key + `"}}`
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "get_secret", InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: secret}},
					StructuredContent: map[string]any{"tls.crt": cert, "tls.key": key}}, nil
			}),
		mcptest.WithResource(&mcp.Resource{URI: "k8s://secrets/tls", Name: "tls"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: secret}}}, nil
		}))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "keys", Tools: []string{"*"}, Resources: []string{"*"},
			Arguments: guardrails.DirectionConfig{Secrets: "block"}, Results: guardrails.DirectionConfig{Secrets: "redact"}}}}
	}, be)
	want := `{"kind":"Secret","data":{"tls.crt":"` + cert + `","tls.key":"[REDACTED:private-key]"}}`
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__get_secret"})
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		if got := mcptest.ResultText(res); got != want || sc["tls.key"] != "[REDACTED:private-key]" || sc["tls.crt"] != cert {
			t.Errorf("%s, tools/call: %q %v", version, got, res.StructuredContent)
		}
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "be+k8s://secrets/tls"})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != want {
			t.Errorf("%s, resources/read: %v %+v", version, err, rr)
		}
		be.Reset()
		res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "be__get_secret", Arguments: map[string]any{"key": key}})
		if got := mcptest.ResultText(res); err != nil || !res.IsError || !strings.Contains(got, "private-key") || strings.Contains(got, "LS0t") ||
			len(be.RequestsOf("tools/call")) != 0 {
			t.Errorf("%s, an argument: %v %q, %d forwarded", version, err, got, len(be.RequestsOf("tools/call")))
		}
	}
	steps := legacyclient.RunTS(t, legacyclient.Scenario{URL: "http://" + gw.MCP + "/mcp",
		Tools: legacyclient.Tools{Echo: "be__get_secret"}, Steps: []string{"connect", "call_tool"},
		Arguments: map[string]map[string]any{"call_tool": {}}})
	if s := steps["call_tool"]; !s.OK || strings.Contains(s.Text, key[:40]) || !strings.Contains(s.Text, "[REDACTED:private-key]") {
		t.Errorf("TypeScript client: %s", s)
	}
}
