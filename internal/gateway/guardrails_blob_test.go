package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestGuardrailsBlobsReadAsText: a secret in base64 binary content whose bytes are text (a
// resource blob of a textual mimeType, an image whose mimeType lies) is found as in a text
// block, in both eras: redacted in a tools/call's embedded resource and image, a resources/read
// blob and a prompts/get message's embedded resource, the client decoding the blob to the text
// with the marker; and a text blob in a charset the detectors do not read is withheld. The
// backend is the Go SDK's, the clients the Go SDK's at 2026-07-28 and 2025-11-25.
func TestGuardrailsBlobsReadAsText(t *testing.T) {
	secret := []byte("deploy:\n  key: " + railAWSKey + "\n")
	const want = "deploy:\n  key: [REDACTED:aws-access-key]\n"
	open := &jsonschema.Schema{Type: "object"}
	doc := func(mime string) *mcp.ResourceContents {
		return &mcp.ResourceContents{URI: "mem://deploy.yaml", MIMEType: mime, Blob: secret}
	}
	result := func(c ...mcp.Content) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: c}, nil
		}
	}
	be := mcptest.StartServer(t, "be",
		mcptest.WithTool(&mcp.Tool{Name: "export", InputSchema: open}, result(&mcp.EmbeddedResource{Resource: doc("application/yaml; charset=utf-8")})),
		mcptest.WithTool(&mcp.Tool{Name: "snapshot", InputSchema: open}, result(&mcp.ImageContent{MIMEType: "image/png", Data: secret})),
		mcptest.WithTool(&mcp.Tool{Name: "utf16", InputSchema: open}, result(&mcp.EmbeddedResource{Resource: doc("text/plain; charset=utf-16")})),
		mcptest.WithResource(&mcp.Resource{URI: "mem://deploy.yaml", Name: "deploy"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{doc("TEXT/X-YAML")}}, nil
		}),
		mcptest.WithPrompt(&mcp.Prompt{Name: "brief"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.EmbeddedResource{Resource: doc("")}}}}, nil
		}))
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "all", Tools: []string{"*"}, Prompts: []string{"*"},
			Resources: []string{"*"}, Results: guardrails.DirectionConfig{Secrets: "redact"}}}}
	}, be)
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version))
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__export"})
			if er, ok := contentOf(res, err).(*mcp.EmbeddedResource); !ok || string(er.Resource.Blob) != want {
				t.Errorf("embedded resource: %v %+v", err, contentOf(res, err))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__snapshot"})
			if img, ok := contentOf(res, err).(*mcp.ImageContent); !ok || string(img.Data) != want {
				t.Errorf("image: %v %+v", err, contentOf(res, err))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__utf16"})
			if err != nil || (!res.IsError || !strings.Contains(mcptest.ResultText(res), "charset other than UTF-8) at /content/0/resource/blob")) {
				t.Errorf("a UTF-16 text blob: %v %+v", err, contentOf(res, err))
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "be+mem://deploy.yaml"})
			if err != nil || len(read.Contents) != 1 || string(read.Contents[0].Blob) != want {
				t.Errorf("resources/read: %v %+v", err, read)
			}
			p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "be__brief"})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("prompts/get: %v %+v", err, p)
			}
			if er, ok := p.Messages[0].Content.(*mcp.EmbeddedResource); !ok || string(er.Resource.Blob) != want {
				t.Errorf("prompt message: %+v", p.Messages[0].Content)
			}
		})
	}
}

// contentOf is a tool result's first content block, nil when there is none.
func contentOf(res *mcp.CallToolResult, err error) mcp.Content {
	if err != nil || res == nil || len(res.Content) == 0 {
		return nil
	}
	return res.Content[0]
}
