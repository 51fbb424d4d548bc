package gateway

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestCompletionHidesResources: the values a backend offers to complete a resource template each
// name a resource (the template expanded with the value); a value naming one the caller may not
// read is not relayed, and the total no longer counts it, so completing tells a caller no more
// than resources/list would: that a hidden resource exists. A value the gateway cannot tie to
// one resource (another variable of the template left out of the client's context) is dropped
// too. The total counts the values relayed, since a backend's counts what it did not send as
// well. A prompt's argument values name no resource and pass as they are.
func TestCompletionHidesResources(t *testing.T) {
	iss := newIssuer(t)
	offered := map[string][]string{
		"mem://docs/{+path}":           {"public/a", "secret/payroll-2026", "public/../secret/x", "public/b", "PUBLIC/c"},
		"mem://shelves/{shelf}/{item}": {"ledger", "notes"},
		"greet":                        {"secret/payroll-2026"},
	}
	read := func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "x"}}}, nil
	}
	docs := mcptest.StartServer(t, "docs", mcptest.WithoutDefaults(),
		mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://docs/{+path}", Name: "docs"}, read),
		mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://shelves/{shelf}/{item}", Name: "shelves"}, read),
		mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://docs/public/{name}", Name: "public"}, read),
		mcptest.WithPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			}),
		mcptest.WithCompletion(func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			if r.Params.Ref.URI == "mem://docs/public/{name}" {
				// One page of a long list: its total counts what it does not show, hidden or not.
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x", "y"}, Total: 1000, HasMore: true}}, nil
			}
			v := offered[r.Params.Ref.URI+r.Params.Ref.Name]
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: v, Total: len(v)}}, nil
		}))
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-secret", Upstream: "docs", Resources: []string{"mem://docs/secret/**", "mem://shelves/private/**"}, Effect: authz.EffectDeny},
			{ID: "docs", Upstream: "docs", Resources: []string{"mem://docs/**", "mem://shelves/**"}, Prompts: []string{"greet"}, AnyScope: []string{"tools:use"}},
		}
	}, docs)
	defer stop()
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(mintFor(t, iss, "alice")))
	resource := func(uri string) *mcp.CompleteReference { return &mcp.CompleteReference{Type: "ref/resource", URI: uri} }
	for _, tt := range []struct {
		name    string
		ref     *mcp.CompleteReference
		arg     string
		context map[string]string
		want    []string
	}{
		{"hidden paths left out", resource("docs+mem://docs/{+path}"), "path", nil, []string{"public/a", "public/b", "PUBLIC/c"}},
		{"a readable shelf", resource("docs+mem://shelves/{shelf}/{item}"), "item", map[string]string{"shelf": "public"}, []string{"ledger", "notes"}},
		{"a hidden shelf", resource("docs+mem://shelves/{shelf}/{item}"), "item", map[string]string{"shelf": "private"}, nil},
		{"no shelf given", resource("docs+mem://shelves/{shelf}/{item}"), "item", nil, nil},
		{"a page of many: total is what is relayed", resource("docs+mem://docs/public/{name}"), "name", nil, []string{"x", "y"}},
		{"a prompt's values", &mcp.CompleteReference{Type: "ref/prompt", Name: "docs__greet"}, "name", nil, []string{"secret/payroll-2026"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: tt.arg}}
			if tt.context != nil {
				p.Context = &mcp.CompleteContext{Arguments: tt.context}
			}
			res, err := cs.Complete(context.Background(), p)
			if err != nil {
				t.Fatalf("complete: %v\n%s", err, logs.String())
			}
			if !slices.Equal(res.Completion.Values, tt.want) || res.Completion.Total != len(tt.want) {
				t.Fatalf("values %q (total %d), want %q (total %d)", res.Completion.Values, res.Completion.Total, tt.want, len(tt.want))
			}
		})
	}
	// What completion offered and left out, reading says: the first is there, the second hidden.
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "docs+mem://docs/public/a"}); err != nil {
		t.Errorf("reading an offered resource: %v", err)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "docs+mem://docs/secret/payroll-2026"}); err == nil {
		t.Error("the hidden resource was read")
	}
}
