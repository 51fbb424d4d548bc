package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// A backend that looks names up loosely: the middleware of foldingBackend finds the tool or
// prompt a call names by a folded form (surrounding spaces and NULs trimmed, NFKC, combining
// marks dropped, Unicode case folding), as a backend with a case-insensitive or normalising
// lookup does, and then lets the SDK dispatch the listed name. Policy matches names exactly,
// so the gateway must never forward a name the backend did not list.
//
//	go test -race -count=1 -run 'TestUnlistedNames' ./internal/gateway

// foldName is the backend's loose form of a name.
func foldName(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r == 0 || unicode.IsSpace(r) })
	s = norm.NFD.String(norm.NFKC.String(s))
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
	return s
}

// foldingBackend is a go-sdk server whose tools and prompts are looked up by foldName, and which
// records the tools it ran.
type foldingBackend struct {
	*mcptest.Server
	mu    sync.Mutex
	ran   []string
	names []string // the tools and prompts, for the loose lookup
}

func (b *foldingBackend) record(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ran = append(b.ran, name)
}

func (b *foldingBackend) runs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.ran...)
}

func startFoldingBackend(t *testing.T, name string, legacy bool) *foldingBackend {
	b := &foldingBackend{names: []string{"echo", "delete_repo", "erase_keys", "greet", "leak"}}
	prompt := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
	}
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for _, tl := range []string{"echo", "delete_repo", "erase_keys"} {
		opts = append(opts, mcptest.WithTool(&mcp.Tool{Name: tl, InputSchema: map[string]any{"type": "object"}}, b.runner(tl)))
	}
	for _, p := range []string{"greet", "leak"} {
		opts = append(opts, mcptest.WithPrompt(&mcp.Prompt{Name: p}, prompt))
	}
	start := mcptest.StartServer
	if legacy {
		start = mcptest.StartLegacyServer
	}
	b.Server = start(t, name, opts...)
	b.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch r := req.(type) {
			case *mcp.CallToolRequest:
				r.Params.Name = b.listed(r.Params.Name)
			case *mcp.GetPromptRequest:
				r.Params.Name = b.listed(r.Params.Name)
			}
			return next(ctx, method, req)
		}
	})
	return b
}

// listed is the tool (or prompt) name of the backend whose folded form equals name's, name
// when none.
func (b *foldingBackend) listed(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range b.names {
		if strings.EqualFold(foldName(n), foldName(name)) {
			return n
		}
	}
	return name
}

// addTool adds a tool to the running backend, which tells its listeners that its list changed.
func (b *foldingBackend) addTool(name string) {
	b.mu.Lock()
	b.names = append(b.names, name)
	b.mu.Unlock()
	b.MCP().AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, b.runner(name))
}

func (b *foldingBackend) runner(tool string) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b.record(tool)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + tool}}}, nil
	}
}

// unlistedVariants are spellings of github's delete_repo (denied) and erase_keys (confirmed)
// that a loose backend runs as those tools: case, surrounding space, a trailing NUL or NEL (a
// C1 control that Unicode counts as white space), fullwidth, NFD with a combining mark, the
// long s and the Kelvin sign.
var unlistedVariants = []string{"Delete_Repo", "delete_repo ", " delete_repo", "delete_repo\x00", "delete_repo\u0085",
	"\uff44elete_repo", "de\u0301lete_repo", "era\u017fe_keys", "ERASE_KEYS", "erase_\u212aeys"}

// hasControl reports whether s holds a control character (C0, DEL or C1), which no Mcp-Name
// carries.
func hasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }

// TestUnlistedNames: with a deny rule on delete_repo, a confirm rule on erase_keys and an allow
// on everything else of a backend that looks names up loosely, a tools/call or prompts/get under
// any name the backend did not list is refused as unknown (-32602) and the backend sees no call,
// from a 2026-07-28 client and from a 2025-11-25 one, pinning off; the listed names work. A
// backend whose tools/list fails gets no call, and the caller is told why. A tool the backend
// adds becomes callable once its list_changed is heard.
func TestUnlistedNames(t *testing.T) {
	iss := newIssuer(t)
	gh := startFoldingBackend(t, "github", false)
	// A pre-2026 backend gets no Mcp-Name header, which a 2026-07-28 go-sdk backend would check
	// against the body (refusing what it cannot decode) before its lookup.
	old := startFoldingBackend(t, "oldgit", true)
	broken := mcptest.StartServer(t, "broken", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, noopTool))
	broken.MCP().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return nil, errors.New("the tool registry is down")
			}
			return next(ctx, method, req)
		}
	})
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = namecheckRules
	}, gh.Server, old.Server, broken)
	tok := mintFor(t, iss, "alice")
	for _, era := range clientEras {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, gw, era, mcptest.WithBearer(tok))
			for _, be := range []*foldingBackend{gh, old} {
				checkUnlistedRefused(t, gw, cs, era, tok, be)
			}
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "github__echo", Arguments: map[string]any{}}); err != nil || mcptest.ResultText(res) != "ran echo" {
				t.Fatalf("github__echo: %+v %v", res, err)
			}
			if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "github__greet"}); err != nil {
				t.Fatalf("github__greet: %v", err)
			}
			gh.mu.Lock()
			gh.ran = nil
			gh.mu.Unlock()
			// A list that cannot be had: the name cannot be checked, the call is not forwarded.
			var err error
			if era == "2026-07-28" {
				err = namedCall(t, gw, tok, "tools/call", "broken__echo") // the go-sdk client shows only the status
			} else {
				_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "broken__echo", Arguments: map[string]any{}})
			}
			if err == nil || !strings.Contains(err.Error(), "tools/list") || !strings.Contains(err.Error(), "not forwarded") || toolCalls(broken) != 0 {
				t.Fatalf("broken__echo: %v; backend calls %d", err, toolCalls(broken))
			}
		})
	}
	t.Run("list_changed", func(t *testing.T) { checkAddedToolCallable(t, gw, gh, tok) })
	t.Run("pinned", func(t *testing.T) {
		// With pinning on, an unlisted name is an unknown tool too, not pin drift.
		pinned := startTestGateway(t, func(c *Config) {
			trustIssuers(c, iss)
			c.MRTR.Keys = testKeys
			c.Auth.Policy.Rules = namecheckRules
			c.Pins = &pins.Config{Mode: pins.ModeTOFU}
		}, gh.Server, old.Server)
		cs := connectEra(t, pinned, "2026-07-28", mcptest.WithBearer(tok))
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "github__echo", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("github__echo: %+v %v", res, err)
		}
		gh.mu.Lock()
		gh.ran = nil
		gh.mu.Unlock()
		for _, be := range []*foldingBackend{gh, old} {
			for _, v := range unlistedVariants {
				if err := namedCall(t, pinned, tok, "tools/call", be.Name()+"__"+v); err == nil ||
					(!strings.Contains(err.Error(), "-32602: Invalid params: unknown tool") && !hasControl(v)) {
					t.Errorf("%s__%q: %v, want unknown tool", be.Name(), v, err)
				}
			}
			if ran := be.runs(); len(ran) != 0 {
				t.Errorf("%s ran %v", be.Name(), ran)
			}
		}
	})
	t.Run("search", func(t *testing.T) {
		gh.mu.Lock()
		gh.ran = nil
		gh.mu.Unlock()
		search := startTestGateway(t, func(c *Config) {
			trustIssuers(c, iss)
			c.MRTR.Keys = testKeys
			c.Auth.Policy.Rules = namecheckRules
			c.Server.Search = mcphttp.SearchConfig{Enabled: true}
		}, gh.Server, old.Server)
		for _, era := range clientEras {
			cs := connectEra(t, search, era, mcptest.WithBearer(tok))
			for _, be := range []*foldingBackend{gh, old} {
				for _, v := range append(unlistedVariants, "Delete_Repo") {
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool",
						Arguments: map[string]any{"name": be.Name() + "__" + v, "arguments": map[string]any{}}})
					want := "unknown tool"
					if era == "2026-07-28" && hasControl(v) {
						want = "Header mismatch" // the inner call's Mcp-Name cannot carry it
					}
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("%s: call_tool %s__%q: %+v %v, want unknown tool", era, be.Name(), v, res, err)
					}
				}
				if ran := be.runs(); len(ran) != 0 {
					t.Errorf("%s: %s ran %v through call_tool", era, be.Name(), ran)
				}
			}
		}
	})
}

// namecheckRules deny delete_repo and the prompt leak, confirm erase_keys, and allow the rest.
var namecheckRules = []authz.RuleConfig{
	{ID: "no-delete", Upstream: "*", Tools: []string{"delete_repo"}, Prompts: []string{"leak"}, Effect: authz.EffectDeny},
	{ID: "confirm-erase", Upstream: "*", Tools: []string{"erase_keys"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
	{ID: "rest", Upstream: "*", Tools: []string{"*"}, Prompts: []string{"*"}, AnyScope: []string{"tools:use"}},
}

// checkAddedToolCallable: a tool gh adds is unknown until the gateway hears gh's list_changed
// (through a listen a client holds open), then callable under its listed name only.
func checkAddedToolCallable(t *testing.T, gw Listeners, gh *foldingBackend, tok string) {
	cs := connectEra(t, gw, "2026-07-28", mcptest.WithBearer(tok))
	call := func(name string) (*mcp.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	}
	if _, err := call("github__fresh"); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("github__fresh before it exists: %v", err)
	}
	listChangeHeard(t, gw, tok, gh.Server, func() { gh.addTool("fresh") })
	if res, err := call("github__fresh"); err != nil || mcptest.ResultText(res) != "ran fresh" {
		t.Fatalf("github__fresh after list_changed: %+v %v", res, err)
	}
	if _, err := call("github__Fresh"); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("github__Fresh: %v, want unknown tool", err)
	}
	if ran := gh.runs(); len(ran) != 1 || ran[0] != "fresh" {
		t.Fatalf("the backend ran %v, want fresh once", ran)
	}
}

// namedCall sends a 2026-07-28 request of method for name (a tools/call without arguments, or a
// prompts/get) with Mcp-Name encoded as the specification says, and returns its JSON-RPC error,
// nil when it succeeded.
func namedCall(t *testing.T, gw Listeners, tok, method, name string) error {
	t.Helper()
	h := modernHeaders(method, mcpheader.Encode(name))
	h.Set("Authorization", "Bearer "+tok)
	n, _ := json.Marshal(name)
	extra := ""
	if method == "tools/call" {
		extra = `,"arguments":{}`
	}
	_, _, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+testMeta+`,"name":`+string(n)+extra+`}}`)
	var msg struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("%s %q: %v: %s", method, name, err, body)
	}
	if msg.Error == nil {
		return nil
	}
	return fmt.Errorf("%d: %s", msg.Error.Code, msg.Error.Message)
}

// checkUnlistedRefused calls be's delete_repo, erase_keys and leak under unlisted spellings
// through cs (or, for a 2026-07-28 client, on the wire) and checks each is refused and be saw
// none of them.
func checkUnlistedRefused(t *testing.T, gw Listeners, cs *mcp.ClientSession, era, tok string, be *foldingBackend) {
	t.Helper()
	prefix := be.Name() + "__"
	calls, gets := toolCalls(be.Server), len(be.RequestsOf("prompts/get"))
	for _, v := range unlistedVariants {
		var err error
		if era == "2026-07-28" {
			// On the wire, Mcp-Name encoded as the specification says: the go-sdk client
			// does not encode a name with spaces or non-ASCII letters, which the gateway
			// then refuses at its header check.
			err = namedCall(t, gw, tok, "tools/call", prefix+v)
		} else {
			_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: prefix + v, Arguments: map[string]any{}})
		}
		want := "unknown tool"
		if era == "2026-07-28" && hasControl(v) {
			want = "-32020: Header mismatch" // no control character passes as Mcp-Name
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s%q: %v, want %s", prefix, v, err, want)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: prefix + "Delete_Repo", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("%sDelete_Repo through the go-sdk client: %v, want unknown tool", prefix, err)
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: prefix + "Leak"}); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
		t.Errorf("%sLeak: %v, want unknown prompt", prefix, err)
	}
	completes := len(be.RequestsOf("completion/complete"))
	if _, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prefix + "Leak"},
		Argument: mcp.CompleteParamsArgument{Name: "a", Value: "b"}}); err == nil || !strings.Contains(err.Error(), "unknown prompt") ||
		len(be.RequestsOf("completion/complete")) != completes {
		t.Errorf("completion of %sLeak: %v, want unknown prompt", prefix, err)
	}
	if ran := be.runs(); len(ran) != 0 || toolCalls(be.Server) != calls || len(be.RequestsOf("prompts/get")) != gets {
		t.Errorf("%s ran %v (%d calls, %d prompts/get)", be.Name(), ran, toolCalls(be.Server)-calls, len(be.RequestsOf("prompts/get"))-gets)
	}
}

// listChangeHeard makes change to be's tools (idempotent: it may be made again) and returns once
// gw heard be's tools/list_changed, through a listen held with tok (none when empty) meanwhile.
func listChangeHeard(t *testing.T, gw Listeners, tok string, be *mcptest.Server, change func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := listen(t, ctx, gw, `{"toolsListChanged":true}`, tok)
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	waitBackendAcknowledgesListen(t, be)
	// The backend's listen may register after its acknowledgement: make the change again until
	// it is heard; bounded.
	for i := 0; ; i++ {
		change()
		if got := pending(events); len(got) > 0 {
			if !strings.Contains(got[0], "notifications/tools/list_changed") {
				t.Fatalf("event %s, want tools/list_changed", got[0])
			}
			return
		}
		if i == 300 {
			t.Fatal("no list_changed")
		}
	}
}
