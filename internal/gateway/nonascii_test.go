package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/tsnames"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Names outside plain ASCII in Mcp-Name, with both official SDKs at both ends. SEP-2243 carries
// such a name in the =?base64?…?= form; the TypeScript SDK v2 client sends that, the Go SDK
// client (v1.8.0) sends the raw UTF-8, and the Go SDK server compares the header undecoded.
// Every pairing must list the names as the backend spells them and reach them by those names.
//
//	go test -count=1 -run 'TestNonASCIINames' ./internal/gateway

// The family: accents, CJK, an emoji (a 4-byte sequence), a space, a quote, a name that reads
// like the sentinel, and plain ASCII as the control.
var (
	nonASCIITools   = []string{"résumé", "工具", "🚀launch", "two words", `say "hi"`, "=?base64?eA==?=", "plain"}
	nonASCIIPrompts = []string{"grüße", "提示"}
	// Resources as the go-sdk backend lists them: a non-ASCII path and a percent-encoded space.
	nonASCIIResources = []string{"mem://docs/é", "mem://docs/a%20b"}
	// The TypeScript SDK server looks a read up by the URI's percent-encoded form, so a resource
	// it lists raw cannot be read even directly: it lists the encoded spelling.
	tsResources = []string{"mem://other/%C3%A9", "mem://docs/a%20b"}
)

// startGoNamesBackend is a go-sdk server offering the family.
func startGoNamesBackend(t *testing.T) *mcptest.Server {
	t.Helper()
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for _, name := range nonASCIITools {
		opts = append(opts, mcptest.WithTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name}}}, nil
			}))
	}
	for _, name := range nonASCIIPrompts {
		opts = append(opts, mcptest.WithPrompt(&mcp.Prompt{Name: name},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "ran " + req.Params.Name}}}}, nil
			}))
	}
	for _, uri := range nonASCIIResources {
		opts = append(opts, mcptest.WithResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read " + req.Params.URI}}}, nil
			}))
	}
	return mcptest.StartServer(t, "gosdk", opts...)
}

// namesVia are the gateway's names for the family behind upstream up, which lists resources:
// the names it lists (resources in the gateway's normal form, which spells a percent-encoded
// UTF-8 sequence as the text), and every spelling a client may read a resource by.
func namesVia(t *testing.T, up string, resources []string) (listed tsnames.Names, reads []string) {
	for _, x := range nonASCIITools {
		listed.Tools = append(listed.Tools, up+"__"+x)
	}
	for _, x := range nonASCIIPrompts {
		listed.Prompts = append(listed.Prompts, up+"__"+x)
	}
	for _, x := range resources {
		norm, err := resuri.Normalize(x)
		if err != nil {
			t.Fatal(err)
		}
		listed.Resources = append(listed.Resources, up+"+"+norm)
		reads = append(reads, up+"+"+norm)
		// The other spelling: the encoded one of a resource listed as text, and the reverse.
		if enc := strings.ReplaceAll(norm, "é", "%C3%A9"); enc != norm {
			reads = append(reads, up+"+"+enc)
		}
	}
	return listed, reads
}

func TestNonASCIINamesRealClients(t *testing.T) {
	t.Parallel()
	goBackend := startGoNamesBackend(t)
	tsBackend := tsnames.StartBackend(t, tsnames.Names{Tools: nonASCIITools, Prompts: nonASCIIPrompts, Resources: tsResources})
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ts", URL: tsBackend, Timeout: 10 * time.Second}})
	}, goBackend)
	url := "http://" + gw.MCP + "/mcp"

	for up, resources := range map[string][]string{"gosdk": nonASCIIResources, "ts": tsResources} {
		want, reads := namesVia(t, up, resources)
		t.Run("go-sdk client to "+up, func(t *testing.T) {
			cs := mcptest.Connect(t, url)
			listed := toolNames(t, cs)
			for _, name := range want.Tools {
				if !slices.Contains(listed, name) {
					t.Errorf("tools/list lacks %q: %q", name, listed)
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil {
					t.Errorf("call %q: %v", name, err)
					continue
				}
				if got := res.Content[0].(*mcp.TextContent).Text; res.IsError || got != "ran "+name[len(up)+2:] {
					t.Errorf("call %q: %q (isError %v)", name, got, res.IsError)
				}
			}
			for _, name := range want.Prompts {
				res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name})
				if err != nil {
					t.Errorf("get %q: %v", name, err)
					continue
				}
				if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "ran "+name[len(up)+2:] {
					t.Errorf("get %q: %q", name, got)
				}
			}
			for _, uri := range reads {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Errorf("read %q: %v", uri, err)
					continue
				}
				if got := res.Contents[0].Text; got == "" {
					t.Errorf("read %q: empty", uri)
				}
			}
		})
		t.Run("typescript client to "+up, func(t *testing.T) {
			r := tsnames.RunClient(t, url, tsnames.Names{Tools: want.Tools, Prompts: want.Prompts, Resources: reads})
			for _, name := range want.Tools {
				if !slices.Contains(r.Tools, name) {
					t.Errorf("tools/list lacks %q: %q", name, r.Tools)
				}
			}
			for _, name := range want.Prompts {
				if !slices.Contains(r.Prompts, name) {
					t.Errorf("prompts/list lacks %q: %q", name, r.Prompts)
				}
			}
			for _, uri := range want.Resources {
				if !slices.Contains(r.Resources, uri) {
					t.Errorf("resources/list lacks %q: %q", uri, r.Resources)
				}
			}
			if len(r.Calls) != len(want.Tools)+len(want.Prompts)+len(reads) {
				t.Fatalf("calls: %+v", r.Calls)
			}
			for _, c := range r.Calls {
				switch {
				case c.Error != "" || c.IsError:
					t.Errorf("%s %q: %s (isError %v)", c.Kind, c.Name, c.Error, c.IsError)
				case c.Kind != "resource" && c.Text != "ran "+c.Name[len(up)+2:]:
					t.Errorf("%s %q: %q", c.Kind, c.Name, c.Text)
				case c.Kind == "resource" && c.Text == "":
					t.Errorf("read %q: empty", c.Name)
				}
			}
			// The TypeScript client used the sentinel form for what is not plain ASCII.
			if !slices.Contains(r.Sent, "=?base64?"+"Z29zZGtfX3LDqXN1bcOp"+"?=") && !slices.Contains(r.Sent, "=?base64?dHNfX3LDqXN1bcOp?=") {
				t.Errorf("the TypeScript client sent no sentinel for résumé: %q", r.Sent)
			}
		})
	}
}
