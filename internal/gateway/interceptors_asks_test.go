//lint:file-ignore SA1019 pre-2026 clients and backends still use sampling, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// asksEntry is an interceptor over every backend's tools, in one phase.
func asksEntry(name, url, typ, phase string) InterceptorConfig {
	return InterceptorConfig{Config: intercept.Config{Name: name, URL: url, Type: typ,
		Rules: []intercept.RuleConfig{{Tools: []string{"asks*", "ask_name"}, Prompts: []string{"askp"}, Phases: []string{phase}}}}}
}

// askInvocations are the invocations of phase whose payload carries a request to the client
// (an input_required result's inputRequests) or a client's answer (inputResponses).
func askInvocations(ics *intercepttest.Server, phase, member string) []intercepttest.Invocation {
	var out []intercepttest.Invocation
	for _, inv := range ics.Invocations() {
		if inv.Phase == phase && strings.Contains(string(inv.Payload), `"`+member+`"`) {
			out = append(out, inv)
		}
	}
	return out
}

// askTwice is a 2025-11-25 backend's tool that elicits its argument "text" twice (with "<key>"
// replaced by a credential of its own), whatever the first answer was, and reports both
// answers (or errors) on got.
func askTwice(got chan<- string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		msg := strings.ReplaceAll(in.Text, "<key>", railAWSKey)
		var out []string
		for range 2 {
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: &jsonschema.Schema{Type: "object"}})
			out = append(out, fmt.Sprint(err))
		}
		got <- strings.Join(out, "; ")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	}
}

// roundMethods are the methods of the requests an invocation's payload carries, when it is an
// input_required result; nil otherwise.
func roundMethods(inv intercepttest.Invocation) []string {
	var r struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(inv.Payload, &r) != nil || r.ResultType != "input_required" {
		return nil
	}
	var out []string
	for _, q := range r.InputRequests {
		out = append(out, q.Method)
	}
	return out
}

// TestInterceptorsLegacyAsks: a pre-2026 backend's requests mid-call (elicitation, sampling,
// roots), which the pre-2026 edge carries to a pre-2026 client outside the call's stream, cross
// the interceptors as a 2026-07-28 backend's round does: the request in the call's response
// phase, shown as an input_required result carrying it, the client's answer in the call's
// request phase, shown as the call's inputResponses. A request the interceptors refuse is not
// asked, an answer they refuse is not given, and the backend gets an error in its place while
// the call's result is withheld; a mutated request is what the client is asked, after the
// guardrails checked it as mutated; a mutation of an answer is refused as the retry's is (a
// failure: closed). A 2026-07-28 client is never asked (the backend's request is refused before
// any interceptor), and a pre-2026 client asked by the gateway for a 2026-07-28 backend's round
// reads the request through the same response phase, in the same shape. The go-sdk client
// pinned to 2025-11-25, 2025-06-18 and 2025-03-26 (sampling and roots: it has no elicitation), and
// the TypeScript SDK v1.
func TestInterceptorsLegacyAsks(t *testing.T) {
	got := make(chan string, 4)
	old := mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "asks", InputSchema: &jsonschema.Schema{Type: "object"}}, askTool(got)),
		mcptest.WithTool(&mcp.Tool{Name: "asks_twice", InputSchema: &jsonschema.Schema{Type: "object"}}, askTwice(got)),
		mcptest.WithPrompt(&mcp.Prompt{Name: "askp"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "forbidden", RequestedSchema: &jsonschema.Schema{Type: "object"}})
			got <- fmt.Sprint(err)
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
		}))
	alpha := mcptest.StartServer(t, "alpha")
	ics := intercepttest.Start(t, []intercepttest.Interceptor{
		{Name: "askguard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("forbidden", "no")},
		{Name: "askedit", Type: intercept.TypeMutation, Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			s := strings.NewReplacer("secret-123", "[hidden]", "plant-key", railAWSKey, "your name?", "your NAME?").Replace(string(p))
			if s == string(p) {
				return nil
			}
			return json.RawMessage(s)
		})},
		{Name: "answerguard", Type: intercept.TypeValidation, Handle: intercepttest.DenyIf("ann-private", "no")},
		{Name: "answeredit", Type: intercept.TypeMutation, Handle: replaceIn("Eve-original", "Eve")},
	})
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Upstreams[0].Protocol = "2025-11-25"
		c.Interceptors = []InterceptorConfig{
			asksEntry("askguard", ics.URL(), intercept.TypeValidation, "response"),
			asksEntry("askedit", ics.URL(), intercept.TypeMutation, "response"),
			asksEntry("answerguard", ics.URL(), intercept.TypeValidation, "request"),
			asksEntry("answeredit", ics.URL(), intercept.TypeMutation, "request"),
		}
		// After the interceptors: the request the client is asked is checked as mutated.
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{
			{ID: "redact", Tools: []string{"asks"}, Results: guardrails.DirectionConfig{Secrets: "redact"}},
			{ID: "block", Tools: []string{"asks_twice"}, Results: guardrails.DirectionConfig{Secrets: "block"}}}}
	}, old, alpha)
	const (
		refusedAsk    = "The result of old__asks was withheld by the gateway's interceptor askguard, which refused the backend's request to the client."
		refusedAnswer = "The result of old__asks was withheld by the gateway's interceptor answerguard, which refused the client's answer to the backend's request."
	)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			asked := make(chan string, 1)
			var answer string
			cs := connectAsked(t, gw, version, &answer, asked, mcptest.WithRoots(&mcp.Root{URI: "file:///home/ann-private"}))
			for _, tt := range []struct {
				what, text, answer  string
				asked, got, refusal string // what the client read ("-": not asked), the backend got, the result's text
			}{
				{"elicit", "hello secret-123 plant-key", "Ada", "hello [hidden] [REDACTED:aws-access-key]", "Ada", "done"},
				{"sample", "summarise secret-123", "Ada", "summarise [hidden]", "Ada", "done"},
				{"sample", "forbidden words", "Ada", "-", "refused by the gateway's interceptors", refusedAsk},
				{"elicit", "your e-mail?", "ann-private@example.com", "your e-mail?", "refused by the gateway's interceptors", refusedAnswer},
				{"roots", "", "", "-", "refused by the gateway's interceptors", refusedAnswer},
				{"elicit", "your name?", "Eve-original", "your NAME?", "the gateway's interceptors could not decide", ""},
			} {
				if version == "2025-03-26" && tt.what == "elicit" {
					continue // a revision without elicitation: sampling and roots only
				}
				answer = tt.answer
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "old__asks",
					Arguments: map[string]any{"what": tt.what, "text": tt.text}})
				a := "-"
				select {
				case a = <-asked:
				default:
				}
				if a != tt.asked {
					t.Errorf("%s %q: the client read %q, want %q", tt.what, tt.text, a, tt.asked)
				}
				if g := reported(t, got); g != tt.got && !(strings.HasPrefix(g, "error: ") && strings.HasSuffix(g, tt.got)) {
					t.Errorf("%s %q: the backend got %q, want %q", tt.what, tt.text, g, tt.got)
				}
				switch {
				case tt.refusal == "":
					if !couldNotDecide(err) {
						t.Errorf("%s %q: a mutated answer: %v, want the result withheld as a failure", tt.what, tt.text, err)
					}
				case err != nil:
					t.Errorf("%s %q: %v", tt.what, tt.text, err)
				case mcptest.ResultText(res) != tt.refusal || res.IsError != (tt.refusal != "done"):
					t.Errorf("%s %q: the result %q (error %v), want %q", tt.what, tt.text, mcptest.ResultText(res), res.IsError, tt.refusal)
				}
			}
		})
	}
	// The interceptors saw each request as a 2026-07-28 backend's round shows it: an
	// input_required result whose one request is the backend's, in the call's response phase.
	asks := askInvocations(ics, "response", "inputRequests")
	if len(asks) == 0 {
		t.Fatal("no interceptor saw a backend's request to the client")
	}
	if m := roundMethods(asks[0]); asks[0].Event != "tools/call" || len(m) != 1 || m[0] != "elicitation/create" {
		t.Errorf("a backend's request was shown as %s %s", asks[0].Event, asks[0].Payload)
	}

	// A backend that asks again after a refusal is refused at once: the result is withheld
	// already, and the interceptors are not invoked again.
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithElicitation(mcptest.Accept(map[string]any{})))
	for _, tt := range []struct {
		text, refusedBy, backendGot string
		shown                       int // the response-phase invocations on the requests
	}{
		{"forbidden", "interceptor askguard", "refused by the gateway's interceptors", 1}, // askguard refused the first
		{"key <key>", `guardrail rule "block"`, "refused by the gateway's guardrails", 2}, // askguard and askedit let the first through
	} {
		ics.Reset()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "old__asks_twice", Arguments: map[string]any{"text": tt.text}})
		if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), tt.refusedBy) {
			t.Errorf("asked %q twice: %v %v", tt.text, res, err)
		}
		if g := reported(t, got); strings.Count(g, tt.backendGot) != 2 {
			t.Errorf("asked %q twice, the backend got %q", tt.text, g)
		}
		if n := len(askInvocations(ics, "response", "inputRequests")); n != tt.shown {
			t.Errorf("asked %q twice, the interceptors were shown %d requests, want %d: the first one only", tt.text, n, tt.shown)
		}
	}
	// A prompt's backend asking is governed by the prompt's interceptors, and its result
	// withheld as a prompt's refused result is (403).
	_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "old__askp"})
	if err == nil || !strings.Contains(err.Error(), "The result of old__askp was withheld by the gateway's interceptor askguard, which refused the backend's request to the client.") {
		t.Errorf("a prompt's request refused: %v", err)
	}
	if g := reported(t, got); !strings.Contains(g, "refused by the gateway's interceptors") {
		t.Errorf("the prompt's backend got %q", g)
	}

	t.Run("2026-07-28", func(t *testing.T) {
		// Such a client cannot be asked mid-call: the backend's request is refused, and no
		// interceptor is shown it.
		ics.Reset()
		cs := connectEra(t, gw, "2026-07-28", mcptest.WithElicitation(mcptest.Accept(map[string]any{"name": "Ada"})))
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "old__asks", Arguments: map[string]any{"what": "elicit", "text": "hi"}})
		if err != nil || mcptest.ResultText(res) != "done" {
			t.Fatalf("%v %v", res, err)
		}
		if g := reported(t, got); !strings.HasPrefix(g, "error: ") {
			t.Errorf("the backend got %q from a client that cannot be asked", g)
		}
		if n := len(askInvocations(ics, "response", "inputRequests")); n != 0 {
			t.Errorf("%d interceptors were shown a request never asked", n)
		}
	})

	t.Run("gateway round", func(t *testing.T) {
		// A 2026-07-28 backend's round, which the pre-2026 edge asks its client itself: the
		// same response phase, the same shape, the mutation what the client reads.
		ics.Reset()
		var asked string
		cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion("2025-11-25"),
			mcptest.WithElicitation(func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = r.Params.Message
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}))
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__ask_name"}); err != nil {
			t.Fatal(err)
		}
		if asked != "What is your NAME?" {
			t.Errorf("the client read %q, want the mutated request", asked)
		}
		rounds := askInvocations(ics, "response", "inputRequests")
		if len(rounds) == 0 || rounds[0].Event != asks[0].Event || !slices.Equal(roundMethods(rounds[0]), roundMethods(asks[0])) {
			t.Errorf("the round was shown as %v, a pre-2026 backend's request as %s", rounds, asks[0].Payload)
		}
	})

	// The TypeScript SDK v1 client is asked the mutated request, and answers it.
	steps := legacyclient.RunTS(t, legacyclient.Scenario{URL: "http://" + gw.MCP + "/mcp",
		Steps: []string{"connect", "elicitation"}, Tools: legacyclient.Tools{Ask: "old__asks"},
		Arguments: map[string]map[string]any{"elicitation": {"what": "elicit", "text": "ts secret-123"}}})
	if st := steps["elicitation"]; !st.OK || st.IsError || st.Text != "done" || len(st.Elicited) != 1 || st.Elicited[0].Message != "ts [hidden]" {
		t.Errorf("TS v1: %+v", st)
	}
	if g := reported(t, got); g != "Ada" {
		t.Errorf("TS v1: the backend got %q", g)
	}
}

// reported is what the asking backend reported receiving, which it reports before it answers;
// a change that stops it reporting fails the test here rather than hanging the package.
func reported(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case g := <-got:
		return g
	case <-time.After(30 * time.Second):
		t.Fatal("the backend reported nothing of what it received")
		return ""
	}
}
