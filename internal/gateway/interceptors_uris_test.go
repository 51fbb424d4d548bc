package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestInterceptorMutatedURIsChecked: the resource URIs a response-phase interceptor writes into
// a result are held to the caller's resource policy as the backend's are: a read whose contents
// a mutation moves to a resource the caller may not read is answered as that hidden resource is,
// a resource link or embedded resource moved onto a denied resource is dropped from a tool
// result, and one moved onto a resource the caller may read reaches it, in both eras.
func TestInterceptorMutatedURIsChecked(t *testing.T) {
	iss := newIssuer(t)
	links := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see"},
			&mcp.ResourceLink{URI: "mem://items/alpha", Name: "one"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://items/alpha", Text: "one"}}}}, nil
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithTool(&mcp.Tool{Name: "links", InputSchema: map[string]any{"type": "object"}}, links))
	// Moves every resource the backend names to mem://items/beta (denied) or, for the readme's
	// read, to mem://items/gamma (allowed).
	moves := strings.NewReplacer(`alpha+mem://items/alpha"`, `alpha+mem://items/beta"`,
		`alpha+`+mcptest.ResourceReadme+`"`, `alpha+mem://items/gamma"`)
	move := intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
		if out := moves.Replace(string(p)); out != string(p) {
			return json.RawMessage(out)
		}
		return nil
	})
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "move", Type: intercept.TypeMutation, Handle: move}})
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "no-two", Upstream: "*", Resources: []string{"mem://items/beta"}, Effect: "deny"},
			{ID: "use", Upstream: "alpha", Tools: []string{"*"}, Resources: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "move", URL: ics.URL(), Type: intercept.TypeMutation,
			Rules: []intercept.RuleConfig{{Upstream: "alpha", Tools: []string{"links"}, Resources: []string{"*"}, Phases: []string{"response"}}}}}}
	}, alpha)
	tok := mint(t, iss, devissuer.Claims{"sub": "reader", "scope": "tools:use"})
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era, mcptest.WithBearer(tok))
			_, denied := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://items/beta"})
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://items/alpha"})
			// Answered as the read of the denied resource is, naming the URI asked for.
			if err == nil || denied == nil || err.Error() != strings.Replace(denied.Error(), "items/beta", "items/alpha", 1) {
				t.Errorf("a read moved onto a denied resource: %v, a read of it: %v", err, denied)
			}
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+" + mcptest.ResourceReadme})
			if err != nil || len(res.Contents) != 1 || res.Contents[0].URI != "alpha+mem://items/gamma" {
				t.Errorf("a read moved onto a readable resource: %v %+v", err, res)
			}
			call, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__links", Arguments: map[string]any{}})
			if err != nil || call.IsError {
				t.Fatalf("links: %v %+v", err, call)
			}
			if len(call.Content) != 1 || mcptest.ResultText(call) != "see" {
				t.Errorf("a tool result's resources moved onto a denied resource reached the client: %+v", call.Content)
			}
		})
	}
}

// TestInterceptorsSeeTheURIRead: a request-phase interceptor is shown the resource URI in the
// normal form the backend receives, not as the client spelt it: a validator refusing reads of
// mem://items/beta refuses them however the client writes that URI (an upper-case scheme, an
// escaped unreserved character, a dot segment, a decomposed letter), and none reaches the
// backend; in both eras.
func TestInterceptorsSeeTheURIRead(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf(`"alpha+mem://items/beta"`, "no")},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "guard", URL: ics.URL(), Type: intercept.TypeValidation,
			Rules: []intercept.RuleConfig{{Upstream: "alpha", Resources: []string{"*"}, Phases: []string{"request"}}}}}}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			alpha.Reset()
			for _, uri := range []string{"alpha+mem://items/beta", "alpha+MEM://items/beta", "alpha+mem://items/%62eta",
				"alpha+mem://items/x/../beta", "alpha+mem://items//beta"} {
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil ||
					!strings.Contains(err.Error(), "interceptor") {
					t.Errorf("a read of %s: %v, want the interceptor's refusal", uri, err)
				}
			}
			if n := len(alpha.RequestsOf("resources/read")); n != 0 {
				t.Errorf("the backend received %d refused reads", n)
			}
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://items/alpha"}); err != nil {
				t.Errorf("a read the interceptor allows: %v", err)
			}
		})
	}
}

// TestInterceptorsSeeTheURIAnswered: the client's answer to a pre-2026 backend's request in the
// middle of a read is shown to the read's request phase with the resource URI as that phase
// showed it, in the normal form the backend receives: a validator refusing answers given within
// reads of mem://x/beta refuses them however the client wrote the URI, and the read's result is
// withheld.
func TestInterceptorsSeeTheURIAnswered(t *testing.T) {
	answered := make(chan string, 1)
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "sure?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		answered <- fmt.Sprint(err)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "beta"}}}, nil
	}
	old := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithResource(&mcp.Resource{URI: "mem://x/beta", Name: "beta"}, read))
	// Refuses an answer (a payload with inputResponses) given within a read of mem://x/beta;
	// the read itself, which carries none, is allowed.
	guard := func(_ context.Context, inv *intercepttest.Invocation) (json.RawMessage, error) {
		p := string(inv.Payload)
		return intercepttest.Validation(inv, !strings.Contains(p, `"inputResponses"`) || !strings.Contains(p, `"old+mem://x/beta"`), "no"), nil
	}
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "guard", Type: intercept.TypeValidation, Handle: guard}})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Upstreams[0].Protocol = "2025-11-25"
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "guard", URL: ics.URL(), Type: intercept.TypeValidation,
			Rules: []intercept.RuleConfig{{Upstream: "old", Resources: []string{"*"}, Phases: []string{"request"}}}}}}
	}, old)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{})))
	for _, uri := range []string{"old+mem://x/beta", "old+MEM://x/beta", "old+mem://x/%62eta", "old+mem://x/y/../beta"} {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "withheld by the gateway's interceptor guard") {
			t.Errorf("a read of %s whose answer the interceptor refuses: %v, want the result withheld", uri, err)
		}
		if g := <-answered; !strings.Contains(g, "refused by the gateway's interceptors") {
			t.Errorf("a read of %s: the backend got %q for its request, want the refusal", uri, g)
		}
	}
}

// TestInterceptorLinesLeaveOutFoundURI: the log lines of a request leave out a resource URI in
// which the guardrails find something, those written before stage guardrails too: an
// interceptor's audit lines in both phases (the read goes on where the rule only logs) and for
// a read the rule refuses, in both eras.
func TestInterceptorLinesLeaveOutFoundURI(t *testing.T) {
	keys := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a key"}}}, nil
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://keys/{id}", Name: "keys"}, keys))
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "look", Type: intercept.TypeValidation, Handle: intercepttest.Allow()}})
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{
			{ID: "keys", Resources: []string{"mem://keys/*"}, Arguments: guardrails.DirectionConfig{Secrets: "log"}},
			{ID: "uris", Resources: []string{"*"}, Arguments: guardrails.DirectionConfig{Secrets: "block"}}}}
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "look", URL: ics.URL(), Type: intercept.TypeValidation,
			Rules: []intercept.RuleConfig{{Upstream: "alpha", Resources: []string{"*"}}}}}}
	}, alpha)
	defer stop()
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://keys/" + railGHToken})
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "a key" {
				t.Fatalf("a read the rule logs: %v %+v", err, res)
			}
			_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+file:///x?token=" + railAWSKey})
			if err == nil || !strings.Contains(err.Error(), `guardrail rule "uris"`) {
				t.Fatalf("a read the rule refuses: %v", err)
			}
		})
	}
	stop()
	out := logs.String()
	if n := strings.Count(out, `"msg":"interceptor","request_id"`); n != 6 {
		t.Errorf("%d interceptor audit lines, want 6 (two reads in two phases, two refused reads in one)", n)
	}
	for _, s := range []string{railGHToken, railAWSKey} {
		if i := strings.Index(out, s); i >= 0 {
			t.Error("a log line holds a matched value:", out[max(0, i-300):min(len(out), i+100)])
		}
	}
}

// TestInterceptorsSeeTheMutatedURIRead: a mutator that writes a read's URI in another spelling
// (an upper-case scheme, an escaped unreserved character, a dot segment) does not carry the
// read past a validator: the validators are shown the URI as the gateway reads it, the normal
// form the backend receives, as they are the client's. A validator refusing mem://items/beta
// refuses a read of mem://items/alpha that a mutator respelt into it, and the backend never
// reads beta. Before, the validators of the mutator's pass judged its spelling, and the call
// renamed into beta was not shown to them again, as they had "seen" it.
func TestInterceptorsSeeTheMutatedURIRead(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	var respell atomic.Value
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "guard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf(`"alpha+mem://items/beta"`, "no")},
		{Name: "respell", Type: intercept.TypeMutation, Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			from := `"alpha+mem://items/alpha"`
			if !strings.Contains(string(p), from) {
				return nil
			}
			return json.RawMessage(strings.Replace(string(p), from, `"`+respell.Load().(string)+`"`, 1))
		})},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		rule := []intercept.RuleConfig{{Upstream: "alpha", Resources: []string{"*"}, Phases: []string{"request"}}}
		c.Interceptors = []InterceptorConfig{
			{Config: intercept.Config{Name: "guard", URL: ics.URL(), Type: intercept.TypeValidation, Rules: rule}},
			{Config: intercept.Config{Name: "respell", URL: ics.URL(), Type: intercept.TypeMutation, Rules: rule}}}
	}, alpha)
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era)
			alpha.Reset()
			for _, uri := range []string{"alpha+MEM://items/beta", "alpha+mem://items/%62eta", "alpha+mem://items/x/../beta"} {
				respell.Store(uri)
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://items/alpha"}); err == nil ||
					!strings.Contains(err.Error(), "interceptor guard") {
					t.Errorf("a read respelt into %s: %v, want the interceptor's refusal", uri, err)
				}
			}
			if reads := alpha.RequestsOf("resources/read"); len(reads) != 0 {
				t.Errorf("the backend received %d refused reads: %s", len(reads), reads[0].Body)
			}
			respell.Store("alpha+mem://items/alpha")
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "alpha+mem://items/alpha"}); err != nil {
				t.Errorf("a read the interceptors allow: %v", err)
			}
		})
	}
}
