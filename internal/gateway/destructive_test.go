package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestConfirmDestructiveTools: with server.confirmDestructiveTools, a tool annotated
// destructiveHint (the demo's notes delete_note) is confirmed before it runs; other tools are not.
func TestConfirmDestructiveTools(t *testing.T) {
	ctx := context.Background()
	backends, err := demo.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backends.Close() })
	gw := startTestGateway(t, func(c *Config) {
		c.Server.ConfirmDestructiveTools = true
		c.MRTR.Keys = testKeys
		for _, b := range backends.List() {
			c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: b.Name, URL: b.URL}})
		}
	})
	var asked atomic.Int32
	var approve atomic.Bool
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithElicitation(
		func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve.Load()}}, nil
		}))
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	call("notes__add_note", map[string]any{"title": "keep me"})
	if n := asked.Load(); n != 0 {
		t.Fatalf("a non-destructive tool was confirmed %d times", n)
	}
	if res := call("notes__delete_note", map[string]any{"id": "1"}); !res.IsError || asked.Load() != 1 {
		t.Fatalf("declined delete: asked %d, result %+v", asked.Load(), res)
	}
	if got := mcptest.ResultText(call("notes__get_note", map[string]any{"id": "1"})); !strings.Contains(got, "keep me") {
		t.Fatalf("the declined delete ran: get_note = %q", got)
	}
	approve.Store(true)
	if res := call("notes__delete_note", map[string]any{"id": "1"}); res.IsError || asked.Load() != 2 {
		t.Fatalf("approved delete: asked %d, result %+v", asked.Load(), res)
	}
	if res := call("notes__get_note", map[string]any{"id": "1"}); !res.IsError {
		t.Fatalf("the approved delete did not run: %+v", res)
	}
	// The README: a tool the backend's list does not show is not called at all: an unknown
	// tool, with no one asked.
	approve.Store(false)
	before := asked.Load()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__not_listed", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") || asked.Load() != before {
		t.Fatalf("a tool the list does not show: asked %d times, result %+v %v", asked.Load()-before, res, err)
	}
}

// TestConfirmDestructiveToolsTokenExchange: behind a backend that takes exchanged tokens, the
// destructive hints are read with the caller's token exchanged for that backend (the gateway has
// no token of its own there). Before, the hint list could not reach such a backend, and with no
// other backend every call failed with 502; with others, every one of its tools would have been
// confirmed as unknown.
func TestConfirmDestructiveToolsTokenExchange(t *testing.T) {
	ctx := context.Background()
	iss := newExchangeIssuer(t)
	backends, err := demo.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backends.Close() })
	notes := backends.List()[0]
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.ConfirmDestructiveTools = true
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		u := UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: notes.Name, URL: notes.URL}}
		u.Auth.AuthConfig = upstreams.AuthConfig{Type: upstreams.AuthTokenExchange, TokenURL: iss.TokenURL(),
			ClientID: "mcp-gateway", Audience: notes.URL}
		u.Auth.ClientSecret = Secret{Value: "gw-secret"}
		c.Upstreams = []UpstreamConfig{u}
	})
	var asked atomic.Int32
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(mintFor(t, iss, "alice")), mcptest.WithElicitation(
		func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		}))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: notes.Name + "__add_note", Arguments: map[string]any{"title": "t"}})
	if err != nil || res.IsError {
		stop()
		t.Fatalf("add_note: %v %+v\n%s", err, res, logs.String())
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("a non-destructive tool behind token exchange was confirmed %d times", n)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: notes.Name + "__delete_note", Arguments: map[string]any{"id": "1"}}); err != nil || !res.IsError || asked.Load() != 1 {
		t.Fatalf("declined delete_note: asked %d, %v %+v", asked.Load(), err, res)
	}
}

// TestConfirmDestructiveToolsExactMembers: a tool whose annotations say destructiveHint true
// is confirmed even when the backend lists other spellings that only a case-insensitive reader
// would take ("DestructiveHint": false after the hint; another tool listed later with "NAME"
// naming it): the gateway reads the hint and the name clients are shown.
func TestConfirmDestructiveToolsExactMembers(t *testing.T) {
	edit := strings.NewReplacer(`"destructiveHint":true`, `"destructiveHint":true,"DestructiveHint":false`,
		`"name":"touch"`, `"name":"touch","NAME":"files__delete"`,
		`"idempotentHint":true`, `"idempotentHint":true,"destructiveHint":"true"`)
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithJSONResponse(),
		mcptest.WithTool(deleteTool(true), noopTool), mcptest.WithTool(tool("touch", "Touch a file.", nil, nil), noopTool),
		mcptest.WithTool(tool("wipe", "Wipe a file.", nil, &mcp.ToolAnnotations{IdempotentHint: true}), noopTool),
		mcptest.WithMiddleware(rewriteLists(edit)))
	p := startPinned(t, nil, func(c *Config) { c.Server.ConfirmDestructiveTools = true }, files)
	// A hint that is not a boolean ("true" as a string, which lax decoders such as pydantic
	// read as true) is not known to be false: confirmed, as an unlisted tool is.
	for _, name := range []string{"files__delete", "files__wipe"} {
		if _, res := rawCall(t, p.gw, "", name, `{"path":"a"}`, ""); res.Result.ResultType != "input_required" || toolCalls(files) != 0 {
			t.Errorf("%s: %+v %+v, backend calls %d; want a confirmation", name, res.Result, res.Error, toolCalls(files))
		}
	}
	if _, res := rawCall(t, p.gw, "", "files__touch", `{"path":"a"}`, ""); res.Result.ResultType != "complete" || toolCalls(files) != 1 {
		t.Errorf("files__touch: %+v %+v, backend calls %d; want it run unconfirmed", res.Result, res.Error, toolCalls(files))
	}
}

// TestConfirmDestructiveToolsPerCallerList: a backend that shows each caller its own list
// (cacheScope "private", reached with each caller's exchanged token) marks delete destructive
// for bob only. bob's call is confirmed, alice's is not, whoever's list the replica saw first.
// Before, the hints were one list per replica, read with the token of whichever caller needed
// them first: after alice's call, bob's delete ran unconfirmed for up to a minute.
func TestConfirmDestructiveToolsPerCallerList(t *testing.T) {
	iss := newExchangeIssuer(t)
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithJSONResponse(),
		mcptest.WithCacheHints(60000, "private"), mcptest.WithTool(deleteTool(false), noopTool),
		mcptest.WithMiddleware(destructiveFor("bob")))
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.ConfirmDestructiveTools = true
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "*", Tools: []string{"*"}, AnyScope: []string{"tools:use"}}}
		c.Upstreams = []UpstreamConfig{exchangeUpstream("files", files.URL(), iss)}
	})
	alice, bob := mintFor(t, iss, "alice"), mintFor(t, iss, "bob")
	for i, step := range []struct {
		tok, who string
		confirm  bool
	}{{alice, "alice", false}, {bob, "bob", true}, {alice, "alice again", false}, {bob, "bob again", true}} {
		before := toolCalls(files)
		_, res := rawCall(t, gw, step.tok, "files__delete", `{"path":"a"}`, "")
		ran := toolCalls(files) - before
		if step.confirm && (res.Result.ResultType != "input_required" || ran != 0) {
			t.Errorf("%d %s: %+v %+v, backend calls %d; want a confirmation", i, step.who, res.Result, res.Error, ran)
		}
		if !step.confirm && (res.Result.ResultType != "complete" || ran != 1) {
			t.Errorf("%d %s: %+v %+v, backend calls %d; want the call run unconfirmed", i, step.who, res.Result, res.Error, ran)
		}
	}
}

// destructiveFor is a backend middleware turning destructiveHint false into true in the lists
// of the caller whose token's subject is sub. The token is the
// gateway's exchanged one, read without verification (the backend of a test).
func destructiveFor(sub string) func(http.Handler) http.Handler {
	edit := strings.NewReplacer(`"destructiveHint":false`, `"destructiveHint":true`)
	return func(next http.Handler) http.Handler {
		mine := rewriteLists(edit)(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tokenSubject(r.Header.Get("Authorization")) == sub {
				mine.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// tokenSubject is the sub claim of a bearer JWT, unverified; "" when it cannot be read.
func tokenSubject(authorization string) string {
	parts := strings.Split(strings.TrimPrefix(authorization, "Bearer "), ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	_ = json.Unmarshal(payload, &claims)
	return claims.Sub
}
