package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/guardrails"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// What the guardrails backend puts in its answers: a credential, personal data and injection
// markers, none of which may reach a client where a rule redacts or blocks it, nor any log.
const (
	railAWSKey  = "AKIAIOSFODNN7EXAMPLE"
	railEmail   = "alice.smith@mail.example.org"
	railPrivKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAuVx3yX8m0Z+QWd0TnKp3lB3d8s2aRkT1Zf9t0Yb1Wk5H9sdf\n-----END RSA PRIVATE KEY-----"
	railGHToken = "ghp_R2d2C3poB8bYodaL3ia0rganaSolo12345ab"
)

// railBackend is a go-sdk server whose tools, prompt and resource answer with what the
// guardrails look for; echo_args answers with the arguments it received, so a test sees what
// the backend acted on.
func railBackend(t *testing.T) *mcptest.Server { return mcptest.StartServer(t, "be", railOptions()...) }

// railOptions are railBackend's tools, prompt and resource.
func railOptions() []mcptest.Option {
	obj := func(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
	}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	echoArgs := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text(string(req.Params.Arguments))}, nil
	}
	leak := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text("key " + railAWSKey + " owner " + railEmail +
			" see https://evil.test/x\u202e")}, nil
	}
	structured := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Bad  bool
			Mode string
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		var sc any = map[string]any{"count": 3}
		if in.Bad {
			sc = map[string]any{"count": "three"}
		}
		switch in.Mode {
		case "missing": // a result without the structuredContent its outputSchema requires
			return &mcp.CallToolResult{Content: text("counted")}, nil
		case "error": // a tool error, whose structuredContent is not checked
			return &mcp.CallToolResult{Content: text("tool failed"), IsError: true, StructuredContent: sc}, nil
		}
		return &mcp.CallToolResult{Content: text("counted"), StructuredContent: sc}, nil
	}
	progress := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1,
				Message: "token " + railGHToken})
		}
		return &mcp.CallToolResult{Content: text("done")}, nil
	}
	return []mcptest.Option{
		mcptest.WithTool(&mcp.Tool{Name: "echo_args", InputSchema: obj(map[string]*jsonschema.Schema{
			"n": {Type: "integer"}, "note": {Type: "string"}}, "n")}, echoArgs),
		mcptest.WithTool(&mcp.Tool{Name: "mirror", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"note": map[string]any{"type": "string", "x-mcp-header": "Note"}}}}, echoArgs),
		mcptest.WithTool(&mcp.Tool{Name: "strict_note", InputSchema: obj(map[string]*jsonschema.Schema{
			"note": {Type: "string", Pattern: "^key [A-Z0-9]+$"}})}, echoArgs),
		mcptest.WithTool(&mcp.Tool{Name: "leak", InputSchema: obj(nil)}, leak),
		mcptest.WithTool(&mcp.Tool{Name: "structured", InputSchema: obj(map[string]*jsonschema.Schema{"bad": {Type: "boolean"}, "mode": {Type: "string"}}),
			OutputSchema: obj(map[string]*jsonschema.Schema{"count": {Type: "integer"}}, "count")}, structured),
		mcptest.WithTool(&mcp.Tool{Name: "progress_leak", InputSchema: obj(nil)}, progress),
		mcptest.WithTool(&mcp.Tool{Name: "progress_block", InputSchema: obj(nil)}, progress),
		mcptest.WithPrompt(&mcp.Prompt{Name: "contact", Arguments: []*mcp.PromptArgument{{Name: "who"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "mail " + railEmail}}}}, nil
		}),
		mcptest.WithResource(&mcp.Resource{URI: "mem://deploy-key", Name: "deploy-key"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: railPrivKey}}}, nil
		}),
	}
}

// railRules are the rules of the guardrails end-to-end tests.
func railRules() guardrails.Config {
	return guardrails.Config{AllowedHosts: []string{"*.example.com"}, Rules: []guardrails.RuleConfig{
		{ID: "schema", Tools: []string{"echo_args", "structured*", "mirror", "strict_note"},
			Validate:  guardrails.ValidateConfig{Arguments: "block", StructuredContent: "block"},
			Arguments: guardrails.DirectionConfig{Secrets: "redact", PII: "block"}},
		{ID: "results", Tools: []string{"leak", "progress_leak"},
			Results: guardrails.DirectionConfig{Secrets: "redact", PII: "redact", Injection: "flag"}},
		{ID: "strict", Tools: []string{"progress_block"}, Results: guardrails.DirectionConfig{Secrets: "block"}},
		{ID: "prompts", Prompts: []string{"*"}, Arguments: guardrails.DirectionConfig{Secrets: "block"},
			Results: guardrails.DirectionConfig{PII: "redact"}},
		{ID: "keys", Resources: []string{"mem://deploy-*"}, Results: guardrails.DirectionConfig{Secrets: "block"}},
	}}
}

// TestGuardrails drives the built-in guardrails through the gateway with the go-sdk client in
// both eras (2026-07-28, and 2025-11-25 through the pre-2026 edge) in front of a go-sdk
// backend: arguments validated and redacted before forwarding, results, prompts and resources
// redacted, flagged or blocked before the client sees them, progress checked too, and nothing
// matched in any log line.
func TestGuardrails(t *testing.T) {
	be := railBackend(t)
	old := mcptest.StartLegacyServer(t, "old", railOptions()...) // a 2025-11-25 backend
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Legacy.Enabled = true
		c.Guardrails = railRules()
	}, be, old)
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			progress := make(chan string, 16)
			cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithProtocolVersion(version),
				mcptest.WithProgress(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params.Message
				}))
			railChecks(ctx, t, cs, be, progress)
		})
	}
	metrics := get(t, "http://"+gw.Admin+"/metrics")
	for _, want := range []string{
		`mcp_gateway_guardrail_findings_total{action="redact",detector="aws-access-key",direction="result",guardrail="secrets"} 4`,
		`mcp_gateway_guardrail_findings_total{action="block",detector="github-token",direction="notification",guardrail="secrets"} 2`,
		`mcp_gateway_guardrail_checks_total{direction="arguments",guardrail="schema",verdict="blocked"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	stop()
	if t.Failed() {
		t.Log(logs.String())
	}
	for _, secret := range []string{railAWSKey, railEmail, "MIIEowIBAAKCAQEA", railGHToken, "three"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("a log line holds matched or argument text %q", secret)
		}
	}
	if !strings.Contains(logs.String(), `"rule":"results"`) || !strings.Contains(logs.String(), "aws-access-key:redact:1") {
		t.Errorf("no audit line names the rule and the kind of finding:\n%s", logs.String())
	}
	checkRailAuditLines(t, logs.String())
	if !strings.Contains(metrics, `mcp_gateway_guardrail_duration_seconds_count{check="content",direction="result"}`) ||
		!strings.Contains(metrics, `mcp_gateway_guardrail_duration_seconds_count{check="schema",direction="arguments"}`) {
		t.Error("metrics lack the guardrails' check durations")
	}
}

// checkRailAuditLines holds the audit lines to docs/guardrails.md: a check that redacts or flags
// writes "guardrail finding" at info, one that blocks "guardrail refused" at warn, each naming
// the rule, direction, action and findings, and neither a path nor any other member.
func checkRailAuditLines(t *testing.T, logs string) {
	t.Helper()
	levels := map[string]string{}
	for _, line := range strings.Split(logs, "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || !strings.HasPrefix(fmt.Sprint(l["msg"]), "guardrail ") {
			continue
		}
		msg := l["msg"].(string)
		levels[msg] = fmt.Sprint(l["level"])
		for _, k := range []string{"request_id", "rule", "direction", "action", "findings"} {
			if s, _ := l[k].(string); s == "" {
				t.Errorf("%s line without %s: %s", msg, k, line)
			}
		}
		for k := range l {
			switch k {
			case "time", "level", "msg", "request_id", "subject", "upstream", "name", "rule", "direction", "action", "findings", "error":
			default:
				t.Errorf("%s line has %q: %s", msg, k, line)
			}
		}
	}
	if levels["guardrail finding"] != "INFO" || levels["guardrail refused"] != "WARN" {
		t.Errorf("audit line levels %v, want guardrail finding at INFO and guardrail refused at WARN", levels)
	}
}

func railChecks(ctx context.Context, t *testing.T, cs *mcp.ClientSession, be *mcptest.Server, progress <-chan string) {
	call := func(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "be__" + name, Arguments: args}
		p.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	t.Run("arguments against the input schema", func(t *testing.T) {
		be.Reset()
		res := call(t, "echo_args", map[string]any{"n": "seven"})
		if got := mcptest.ResultText(res); !res.IsError || got != `Refused by guardrail rule "schema": the arguments fail the tool's schema at /n: must be integer, not string` {
			t.Fatalf("a call breaking the schema: %+v %q", res.IsError, got)
		}
		if n := len(be.RequestsOf("tools/call")); n != 0 {
			t.Fatalf("a refused call reached the backend %d times", n)
		}
		if res := call(t, "echo_args", map[string]any{"n": 7}); res.IsError {
			t.Fatalf("a valid call was refused: %q", mcptest.ResultText(res))
		}
	})
	t.Run("a tool the backend does not list is refused", func(t *testing.T) {
		be.Reset()
		// Not in the backend's list: an unknown tool, refused before the guardrails, which
		// would have no schema to check the call against.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "be__structured_unlisted", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("got %+v %v, want unknown tool", res, err)
		}
		if n := len(be.RequestsOf("tools/call")); n != 0 {
			t.Fatalf("the backend got %d calls", n)
		}
	})
	t.Run("secrets in arguments redacted before forwarding", func(t *testing.T) {
		res := call(t, "echo_args", map[string]any{"n": 1, "note": "use " + railAWSKey})
		got := mcptest.ResultText(res)
		if res.IsError || strings.Contains(got, railAWSKey) || !strings.Contains(got, "[REDACTED:aws-access-key]") {
			t.Fatalf("the backend got %q", got)
		}
	})
	t.Run("a mirrored argument's header says what the body says", func(t *testing.T) {
		if _, err := cs.ListTools(ctx, nil); err != nil { // the client mirrors what the list declares
			t.Fatal(err)
		}
		be.Reset()
		if res := call(t, "mirror", map[string]any{"note": "key " + railAWSKey}); res.IsError {
			t.Fatalf("mirror: %q", mcptest.ResultText(res))
		}
		reqs := be.RequestsOf("tools/call")
		if len(reqs) != 1 {
			t.Fatalf("the backend got %d calls", len(reqs))
		}
		h, err := mcpheader.Decode(reqs[0].Header.Get("Mcp-Param-Note"))
		if err != nil || h != "key [REDACTED:aws-access-key]" || strings.Contains(string(reqs[0].Body), railAWSKey) {
			t.Fatalf("the backend got header %q (%v) and body %s", h, err, reqs[0].Body)
		}
	})
	t.Run("arguments validated as they are forwarded, redacted", func(t *testing.T) {
		be.Reset()
		// The client's value matches the pattern; the redacted one, which the backend would
		// get, does not.
		res := call(t, "strict_note", map[string]any{"note": "key " + railAWSKey})
		if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "/note") || strings.Contains(got, railAWSKey) {
			t.Fatalf("got %v %q", res.IsError, got)
		}
		if n := len(be.RequestsOf("tools/call")); n != 0 {
			t.Fatalf("the backend got %d calls", n)
		}
	})
	t.Run("personal data in arguments blocked", func(t *testing.T) {
		res := call(t, "echo_args", map[string]any{"n": 1, "note": "mail " + railEmail})
		// The refusal as docs/guardrails.md shows it: rule, guardrail, detector and pointer.
		if got := mcptest.ResultText(res); !res.IsError || got != `Refused by guardrail rule "schema": found pii (email) in the arguments at /note` {
			t.Fatalf("got %v %q", res.IsError, got)
		}
	})
	t.Run("result redacted and flagged", func(t *testing.T) {
		res := call(t, "leak", nil)
		got := mcptest.ResultText(res)
		if strings.Contains(got, railAWSKey) || strings.Contains(got, railEmail) ||
			!strings.Contains(got, "[REDACTED:aws-access-key]") || !strings.Contains(got, "[REDACTED:email]") {
			t.Fatalf("result %q", got)
		}
		meta, _ := json.Marshal(res.Meta[guardrails.MetaKey])
		for _, want := range []string{`"rule":"results"`, `"detector":"link"`, `"action":"flag"`, `"detector":"bidi"`, `"detector":"email"`} {
			if !strings.Contains(string(meta), want) {
				t.Errorf("annotation %s lacks %s", meta, want)
			}
		}
	})
	t.Run("a pre-2026 backend's result redacted", func(t *testing.T) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "old__leak"})
		if err != nil {
			t.Fatal(err)
		}
		if got := mcptest.ResultText(res); strings.Contains(got, railAWSKey) || !strings.Contains(got, "[REDACTED:aws-access-key]") {
			t.Fatalf("result %q", got)
		}
	})
	t.Run("structured content against the output schema", func(t *testing.T) {
		if res := call(t, "structured", map[string]any{"bad": false}); res.IsError {
			t.Fatalf("a conforming result was refused: %q", mcptest.ResultText(res))
		}
		res := call(t, "structured", map[string]any{"bad": true})
		if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "/structuredContent/count") || strings.Contains(got, "three") {
			t.Fatalf("got %v %q", res.IsError, got)
		}
		// docs/guardrails.md: a result without structuredContent from a tool that declares an
		// outputSchema fails; a tool error is not checked.
		res = call(t, "structured", map[string]any{"mode": "missing"})
		if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "the result fails the tool's schema at /structuredContent") || got == "counted" {
			t.Fatalf("a result without structuredContent: %v %q", res.IsError, got)
		}
		res = call(t, "structured", map[string]any{"bad": true, "mode": "error"})
		if got := mcptest.ResultText(res); !res.IsError || got != "tool failed" {
			t.Fatalf("a tool error was checked: %v %q", res.IsError, got)
		}
	})
	t.Run("progress redacted, and no way around a block", func(t *testing.T) {
		next := func() string {
			t.Helper()
			select {
			case m := <-progress:
				return m
			case <-time.After(5 * time.Second):
				t.Fatal("no progress notification")
			}
			return ""
		}
		if res := call(t, "progress_leak", nil); res.IsError {
			t.Fatalf("progress_leak: %q", mcptest.ResultText(res))
		}
		if m := next(); m != "token [REDACTED:github-token]" {
			t.Fatalf("progress reached the client as %q", m)
		}
		res := call(t, "progress_block", nil)
		if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "notification") || !strings.Contains(got, "github-token") ||
			strings.Contains(got, railGHToken) {
			t.Fatalf("a blocked notification let the result through: %v %q", res.IsError, got)
		}
		// The blocked notification never comes: the next one is the next call's.
		call(t, "progress_leak", nil)
		if m := next(); m != "token [REDACTED:github-token]" {
			t.Fatalf("after a blocked notification the client saw %q", m)
		}
	})
	t.Run("prompt messages redacted", func(t *testing.T) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "be__contact"})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "mail [REDACTED:email]" {
			t.Fatalf("prompt message %q", got)
		}
	})
	t.Run("prompt arguments blocked", func(t *testing.T) {
		be.Reset()
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "be__contact", Arguments: map[string]string{"who": railAWSKey}})
		if err == nil || strings.Contains(err.Error(), railAWSKey) || !strings.Contains(err.Error(), "aws-access-key") ||
			!strings.Contains(err.Error(), "/who") || rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Fatalf("got %v, want -32602", err)
		}
		if n := len(be.RequestsOf("prompts/get")); n != 0 {
			t.Fatalf("the backend got %d prompts/get", n)
		}
	})
	t.Run("resource contents blocked", func(t *testing.T) {
		var uri string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(r.URI, "deploy-key") {
				uri = r.URI
			}
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			t.Fatalf("a private key was read: %+v", res.Contents[0])
		}
		if msg := err.Error(); strings.Contains(msg, "MIIEow") || !strings.Contains(msg, "private-key") || rpcCode(err) != jsonrpc.CodeInternalError {
			t.Fatalf("refusal %q, want -32603", msg)
		}
	})
}

// rpcCode is the JSON-RPC error code of an SDK client's error (0: none).
func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TestGuardrailsTypeScriptClient: the TypeScript SDK v1 client (2025-11-25) reads a result the
// guardrails redacted, through the pre-2026 edge.
func TestGuardrailsTypeScriptClient(t *testing.T) {
	t.Parallel()
	be := railBackend(t)
	gw := startTestGateway(t, func(c *Config) {
		c.Legacy.Enabled = true
		c.Guardrails = railRules()
	}, be)
	steps := legacyclient.RunTS(t, legacyclient.Scenario{URL: "http://" + gw.MCP + "/mcp",
		Tools: legacyclient.Tools{Echo: "be__leak"}, Steps: []string{"connect", "call_tool"},
		Arguments: map[string]map[string]any{"call_tool": {}}})
	s := steps["call_tool"]
	if !s.OK || strings.Contains(s.Text, railAWSKey) || !strings.Contains(s.Text, "[REDACTED:aws-access-key]") {
		t.Fatalf("call_tool: %s", s)
	}
}

// TestGuardrailsPinnedSchema: with pinning on, arguments are validated against the pinned
// inputSchema, not the one the backend lists now: a backend that widens its schema (a drift the
// operator lets through, logged) does not widen what the guardrail lets the tool receive.
func TestGuardrailsPinnedSchema(t *testing.T) {
	redis := testredis.Start(t)
	limited := func(max float64) *mcp.Tool {
		return &mcp.Tool{Name: "count", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": max}}}}
	}
	be := mcptest.StartServer(t, "be", mcptest.WithoutDefaults(), mcptest.WithTool(limited(10), noopTool))
	pc := &pins.Config{Mode: pins.ModeTOFU, Actions: map[pins.Class]pins.Action{
		pins.ClassInputSchemaWidened: pins.ActionLog, pins.ClassOtherChanged: pins.ActionLog}}
	r := startPinned(t, pc, func(c *Config) {
		c.Redis.URL = redis.URL()
		c.Guardrails = guardrails.Config{Rules: []guardrails.RuleConfig{{ID: "count", Tools: []string{"*"},
			Validate: guardrails.ValidateConfig{Arguments: "block"}}}}
	}, be)
	if names := listNames(t, r.gw, "tools/list"); !slices.Equal(names, []string{"be__count"}) {
		t.Fatalf("first contact: %v", names)
	}
	be.MCP().AddTool(limited(1000), noopTool)
	if names := listNames(t, r.gw, "tools/list"); !slices.Equal(names, []string{"be__count"}) {
		t.Fatalf("after the drift: %v\n%s", names, r.log.String())
	}
	cs := mcptest.Connect(t, "http://"+r.gw.MCP+"/mcp")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "be__count", Arguments: map[string]any{"n": 500}})
	if err != nil || !res.IsError || !strings.Contains(mcptest.ResultText(res), "/n") {
		t.Fatalf("a call the pinned schema refuses: %v %+v\n%s", err, res, r.log.String())
	}
	if n := len(be.RequestsOf("tools/call")); n != 0 {
		t.Fatalf("the backend got %d calls", n)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "be__count", Arguments: map[string]any{"n": 5}}); err != nil || res.IsError {
		t.Fatalf("a call within the pinned schema: %v %+v", err, res)
	}
}
