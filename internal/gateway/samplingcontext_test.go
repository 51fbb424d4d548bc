//lint:file-ignore SA1019 includeContext, sampling and elicitation's 2025 clients are deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/nodecache"
)

// What a backend's request for input may draw from the client (docs/protocol.md §3, "Sampling
// context"; §9.5): behind the gateway the client's "server" is every backend at once, so a
// backend's sampling request that asks the client to include context reaches the client asking
// for none, unless the operator trusts that backend with it; and a form whose requestedSchema
// is not flat is asked of no client.
//
//	go test -race -count=1 -run 'TestSamplingContext|TestNestedFormSchema' ./internal/gateway

// contextState is the requestState of the 2026-07-28 backend's sampling round.
const contextState = "sample-1"

// contextIn is the argument of the context tools: the includeContext to ask with.
type contextIn struct {
	Context string `json:"context"`
}

// modernContextTool is a 2026-07-28 backend's tool whose input_required round asks the client
// for a sampling with includeContext as its argument says, and reports the model's answer.
func modernContextTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in contextIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	// The go-sdk decodes every sampling answer as the tool-enabled result.
	if r, ok := req.Params.InputResponses["s"].(*mcp.CreateMessageWithToolsResult); ok && req.Params.RequestState == contextState && len(r.Content) == 1 {
		text, _ := r.Content[0].(*mcp.TextContent)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled " + text.Text}}}, nil
	}
	return &mcp.CallToolResult{RequestState: contextState, InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{
		IncludeContext: in.Context, MaxTokens: 10,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarise"}}}}}}, nil
}

// oldContextTool is a 2025-11-25 backend's tool that asks the client, in the middle of the
// call, for a sampling with includeContext as its argument says, and reports the answer.
func oldContextTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in contextIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{IncludeContext: in.Context, MaxTokens: 10,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarise"}}}})
	if err != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "error: " + err.Error()}}}, nil
	}
	text, _ := res.Content.(*mcp.TextContent)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled " + text.Text}}}, nil
}

// contextBackends starts the 2026-07-28 backend "modern" and the 2025-11-25 backend "old", each
// with the tool sample (their context tool); modern has the tool form too (formTool).
func contextBackends(t *testing.T) (modern, old *mcptest.Server) {
	t.Helper()
	in := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"context": {Type: "string"}}}
	modern = mcptest.StartServer(t, "modern", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "sample", InputSchema: in}, modernContextTool),
		mcptest.WithTool(&mcp.Tool{Name: "form", InputSchema: in}, formTool))
	old = mcptest.StartLegacyServer(t, "old", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "sample", InputSchema: in}, oldContextTool))
	return modern, old
}

// contextGatewayURL is the MCP endpoint of contextGateway.
func contextGatewayURL(t *testing.T, modern, old *mcptest.Server, trusted ...string) string {
	t.Helper()
	return "http://" + contextGateway(t, modern, old, trusted...).MCP + "/mcp"
}

// contextGateway starts a gateway over modern and old (old pinned to 2025-11-25) trusting the
// backends named in trusted with sampling context.
func contextGateway(t *testing.T, modern, old *mcptest.Server, trusted ...string) Listeners {
	t.Helper()
	return startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Legacy.Enabled = true
		for i := range c.Upstreams {
			if c.Upstreams[i].Name == "old" {
				c.Upstreams[i].Protocol = "2025-11-25"
			}
			for _, name := range trusted {
				c.Upstreams[i].SamplingContext = c.Upstreams[i].SamplingContext || c.Upstreams[i].Name == name
			}
		}
	}, modern, old)
}

// sampledContexts records the includeContext of each sampling request a client was asked.
type sampledContexts struct {
	mu   sync.Mutex
	seen []string
}

func (s *sampledContexts) sample(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	s.mu.Lock()
	s.seen = append(s.seen, req.Params.IncludeContext)
	s.mu.Unlock()
	return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
}

// take returns what was recorded since the last take.
func (s *sampledContexts) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.seen
	s.seen = nil
	return got
}

// connectSampling connects a go-sdk client of version (2026-07-28 when "") to url that declares
// sampling with context and records what it is asked on rec.
func connectSampling(t *testing.T, url, version string, rec *sampledContexts) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, url, mcptest.WithProtocolVersion(version), mcptest.WithSampling(rec.sample),
		mcptest.WithCapabilities(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{Context: &mcp.SamplingContextCapabilities{}}}))
}

// callContext calls backend's sample tool asking with includeContext value and returns its text.
func callContext(t *testing.T, cs *mcp.ClientSession, backend, value string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: backend + "__sample", Arguments: map[string]any{"context": value}})
	if err != nil {
		t.Fatalf("%s %s: %v", backend, value, err)
	}
	return mcptest.ResultText(res)
}

// TestSamplingContextAskedOfNoClient: a backend's sampling request with includeContext
// "thisServer" or "allServers" (a 2026-07-28 backend's input_required round, a 2025-11-25
// backend's request in the middle of its call, which only a pre-2026 client can be asked)
// reaches every client asking for no context: the go-sdk client at 2026-07-28, at 2025-11-25
// and at 2025-06-18, each declaring sampling with context, is asked with includeContext "none",
// and the backend gets the answer. A backend the
// configuration trusts with context (samplingContext) has its request reach the client as
// written, and only that backend: the other's is still "none". Without the rewrite every
// client was asked for the context, and the model would have read the client's exchanges with
// the other backend.
func TestSamplingContextAskedOfNoClient(t *testing.T) {
	modern, old := contextBackends(t)
	for _, trusted := range []string{"", "modern", "old"} {
		url := contextGatewayURL(t, modern, old, trusted)
		for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
			t.Run(fmt.Sprintf("trusting %q, client %q", trusted, version), func(t *testing.T) {
				rec := &sampledContexts{}
				cs := connectSampling(t, url, version, rec)
				for _, backend := range []string{"modern", "old"} {
					if backend == "old" && version == "" {
						continue // a 2025 backend's mid-call request reaches pre-2026 clients only
					}
					for _, value := range []string{"thisServer", "allServers"} {
						if got := callContext(t, cs, backend, value); got != "sampled ok" {
							t.Fatalf("%s %s: the backend got %q, want the model's answer", backend, value, got)
						}
						want := "none"
						if backend == trusted {
							want = value
						}
						if seen := rec.take(); len(seen) != 1 || seen[0] != want {
							t.Errorf("%s %s: the client was asked with includeContext %q, want %q", backend, value, seen, want)
						}
					}
				}
			})
		}
	}
}

// TestSamplingContextTypeScriptClient: the TypeScript SDK v1 client (2025-11-25) declaring
// sampling with context is asked with includeContext "none" by both backends, and by the
// trusted one as it asked.
func TestSamplingContextTypeScriptClient(t *testing.T) {
	modern, old := contextBackends(t)
	url := contextGatewayURL(t, modern, old, "old")
	node, sdk := nodecache.Require(t, "the TypeScript sampling client", "legacy-client", "node_modules/@modelcontextprotocol/sdk/package.json")
	calls := []map[string]string{
		{"tool": "modern__sample", "context": "thisServer"},
		{"tool": "modern__sample", "context": "allServers"},
		{"tool": "old__sample", "context": "allServers"},
	}
	arg, _ := json.Marshal(map[string]any{"url": url, "calls": calls})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(nodecache.CallerDir(t), "testdata", "sampling", "client.mjs"), string(arg))
	cmd.Env = append(cmd.Environ(), "LEGACY_CLIENT_SDK="+sdk)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	var got []struct {
		Tool, Text string
		Seen       []string
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var g struct {
			Tool, Text string
			Seen       []string
		}
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			t.Fatalf("the TypeScript client printed %q: %v", line, err)
		}
		got = append(got, g)
	}
	want := []string{"none", "none", "allServers"}
	if len(got) != len(want) {
		t.Fatalf("the TypeScript client reported %d calls, want %d: %s", len(got), len(want), out)
	}
	for i, g := range got {
		if g.Text != "sampled ok" || len(g.Seen) != 1 || g.Seen[0] != want[i] {
			t.Errorf("%s: text %q, asked with includeContext %q; want \"sampled ok\" and %q", g.Tool, g.Text, g.Seen, want[i])
		}
	}
}

// formSchemas are the requestedSchemas formTool asks with, by the name its argument gives.
var formSchemas = map[string]any{
	// Every primitive the specification allows: a string with a format, a number with bounds, an
	// integer, a boolean with a default, an enum, a titled enum, a multi-select enum and a titled
	// multi-select one.
	"flat": map[string]any{"type": "object", "required": []string{"email"}, "properties": map[string]any{
		"email":  map[string]any{"type": "string", "format": "email", "title": "E-mail"},
		"age":    map[string]any{"type": "number", "minimum": 0, "maximum": 150},
		"count":  map[string]any{"type": "integer"},
		"ok":     map[string]any{"type": "boolean", "default": false},
		"size":   map[string]any{"type": "string", "enum": []string{"s", "m"}},
		"colour": map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "r", "title": "Red"}}},
		"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"a", "b"}}},
		"picks":  map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "x", "title": "X"}}}},
	}},
	"nested object": map[string]any{"type": "object", "properties": map[string]any{
		"address": map[string]any{"type": "object", "properties": map[string]any{"street": map[string]any{"type": "string"}}}}},
	"array of objects": map[string]any{"type": "object", "properties": map[string]any{
		"people": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}},
	"reference": map[string]any{"type": "object", "$defs": map[string]any{"a": map[string]any{"type": "object"}},
		"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/a"}}},
	"composition": map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"allOf": []any{map[string]any{"type": "object", "properties": map[string]any{}}}}}},
	"case-folded keyword": map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string", "Properties": map[string]any{"b": map[string]any{"type": "string"}}}}},
	"not an object": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
}

// formTool is a 2026-07-28 backend's tool whose round asks for a form of the requestedSchema
// formSchemas names by its argument "context", and reports what the person answered.
func formTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in contextIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, err
	}
	if r, ok := req.Params.InputResponses["f"].(*mcp.ElicitResult); ok && req.Params.RequestState == "form-1" {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered " + r.Action}}}, nil
	}
	return &mcp.CallToolResult{RequestState: "form-1", InputRequests: mcp.InputRequestMap{"f": &mcp.ElicitParams{
		Mode: "form", Message: "Tell us", RequestedSchema: formSchemas[in.Context]}}}, nil
}

// TestNestedFormSchema: a backend's form whose requestedSchema is not the flat object of
// primitive properties elicitation allows (a nested object, an array of objects, a $ref, a
// composition, a case-folded keyword a client may read, a root that is not an object) is asked
// of no client: the go-sdk client at 2026-07-28 gets -32010 naming the requestedSchema, at
// 2025-11-25 the gateway's "Backend sent an invalid response", and neither's form handler runs. Every primitive the specification
// allows passes, and the backend gets the answer. Before, the round was relayed for the client
// to judge.
func TestNestedFormSchema(t *testing.T) {
	modern, old := contextBackends(t)
	gw := contextGateway(t, modern, old)
	url := "http://" + gw.MCP + "/mcp"
	for _, version := range []string{"", "2025-11-25"} {
		asked := 0
		var mu sync.Mutex
		cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion(version),
			mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked++
				mu.Unlock()
				return &mcp.ElicitResult{Action: "decline"}, nil
			}))
		for shape := range formSchemas {
			t.Run(fmt.Sprintf("%s client %q", shape, version), func(t *testing.T) {
				mu.Lock()
				asked = 0
				mu.Unlock()
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "modern__form", Arguments: map[string]any{"context": shape}})
				mu.Lock()
				n := asked
				mu.Unlock()
				if shape == "flat" {
					if err != nil || mcptest.ResultText(res) != "answered decline" || n != 1 {
						t.Fatalf("%v %v, asked %d times; want the form asked once and answered", res, err, n)
					}
					return
				}
				if n != 0 {
					t.Errorf("the client was asked the form")
				}
				if err == nil && (res == nil || !res.IsError) {
					t.Errorf("got %v; want an error", res)
				}
				if version != "" {
					// The go-sdk client refuses such a schema itself: the error must be the
					// gateway's, before the client was sent anything.
					if err == nil || !strings.Contains(err.Error(), "Backend sent an invalid response") {
						t.Errorf("got %+v, %v; want the gateway's invalid response", res, err)
					}
					return
				}
				// What the go-sdk client does not show: the gateway's -32010 names the schema.
				_, r := postCall(t, gw, "", "modern__form", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
					`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"modern__form","arguments":{"context":"`+shape+`"}`)
				if r.Error == nil || r.Error.Code != -32010 || !strings.Contains(r.Error.Message, "requestedSchema") {
					t.Errorf("got %+v %+v; want -32010 naming the requestedSchema", r.Result, r.Error)
				}
			})
		}
	}
}

// TestSamplingContext20250326: a 2025-03-26 client, whose revision has no flag for context and
// which reads includeContext whenever it declares sampling, is asked by either backend with
// includeContext "none" (read on the wire, as it gets the request on its call's stream), and the
// backend gets its answer.
func TestSamplingContext20250326(t *testing.T) {
	modern, old := contextBackends(t)
	url := contextGatewayURL(t, modern, old)
	raw := &legacyclient.Raw{Protocol: "2025-03-26"}
	r := raw.Post(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26",`+
		`"capabilities":{"sampling":{}},"clientInfo":{"name":"raw-0326","version":"1"}}}`)
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s", r)
	}
	if n := raw.Post(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", n)
	}
	for _, backend := range []string{"modern", "old"} {
		for _, value := range []string{"thisServer", "allServers"} {
			st := raw.Open(t, url, sid, raw.CallArgs(backend+"__sample", `{"context":"`+value+`"}`))
			req := st.NextRequest(t, "sampling/createMessage")
			var p struct {
				IncludeContext *string `json:"includeContext"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil || p.IncludeContext == nil || *p.IncludeContext != "none" {
				t.Errorf("%s %s: the client was asked %s, want includeContext none", backend, value, req.Params)
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}}`, req.ID)
			if a := raw.Post(t, url, sid, answer); a.Status != http.StatusAccepted {
				t.Fatalf("%s %s: answer: %s", backend, value, a)
			}
			res := st.NextResult(t)
			if got := legacyclient.ResultText([]json.RawMessage{json.RawMessage(`{"result":` + string(res.Result) + `}`)}); got != "sampled ok" {
				t.Errorf("%s %s: result %s error %s, want the backend to have got the answer", backend, value, res.Result, res.Error)
			}
		}
	}
}

// TestSamplingContextMutatedAsk: a response-phase interceptor that puts context into a
// backend's sampling request (includeContext "none" mutated to "allServers") does not get it to
// the client, for a 2026-07-28 backend's round and a 2025-11-25 backend's mid-call request
// alike: the rewrite comes after the interceptors. The go-sdk client at 2025-11-25 declaring
// sampling with context is asked with "none" both times.
func TestSamplingContextMutatedAsk(t *testing.T) {
	modern, old := contextBackends(t)
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "ctx", Type: intercept.TypeMutation,
		Handle: intercepttest.Mutate(func(_ string, p json.RawMessage) json.RawMessage {
			if !strings.Contains(string(p), `"includeContext":"none"`) {
				return nil
			}
			return json.RawMessage(strings.ReplaceAll(string(p), `"includeContext":"none"`, `"includeContext":"allServers"`))
		})}})
	gw := startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Legacy.Enabled = true
		for i := range c.Upstreams {
			if c.Upstreams[i].Name == "old" {
				c.Upstreams[i].Protocol = "2025-11-25"
			}
		}
		c.Interceptors = []InterceptorConfig{{Config: intercept.Config{Name: "ctx", URL: ics.URL(), Type: intercept.TypeMutation,
			Rules: []intercept.RuleConfig{{Tools: []string{"sample"}, Phases: []string{"response"}}}}}}
	}, modern, old)
	rec := &sampledContexts{}
	cs := connectSampling(t, "http://"+gw.MCP+"/mcp", "2025-11-25", rec)
	for _, backend := range []string{"modern", "old"} {
		if got := callContext(t, cs, backend, "none"); got != "sampled ok" {
			t.Fatalf("%s: the backend got %q, want the model's answer", backend, got)
		}
		if seen := rec.take(); len(seen) != 1 || seen[0] != "none" {
			t.Errorf("%s: the client was asked with includeContext %q, want none", backend, seen)
		}
	}
	mutated := 0
	for _, inv := range ics.Invocations() {
		if strings.Contains(string(inv.Payload), `"includeContext":"none"`) {
			mutated++
		}
	}
	if mutated < 2 {
		t.Fatalf("the interceptor saw %d sampling requests, want both backends'", mutated)
	}
}
