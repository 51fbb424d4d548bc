package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
	"github.com/mcp-gateway/gateway/upstreams"
)

// callTimeout bounds one MCP exchange with the demo, generous for a busy machine.
const callTimeout = time.Minute

// What the demo's users see: alice every tool, bob the notes reading tools and, marked with
// the scope a call needs, the notes writing tools (listWithoutScopes in the demo's policy).
var (
	readingTools = []string{"notes__get_note", "notes__list_notes", "notes__search_notes"}
	writingTools = []string{"notes__add_note", "notes__delete_note"}
	toolboxTools = []string{"toolbox__add", "toolbox__count_slowly", "toolbox__echo", "toolbox__now",
		"toolbox__roll_dice", "toolbox__word_count"}
)

// wantListed is a tools/list as name → the scopes its mark names (nil: unmarked).
func wantListed(user string) map[string][]string {
	out := map[string][]string{}
	for _, n := range readingTools {
		out[n] = nil
	}
	for _, n := range writingTools {
		out[n] = []string{"notes:write"}
	}
	if user == "alice" {
		for _, n := range slices.Concat(writingTools, toolboxTools) {
			out[n] = nil
		}
	}
	return out
}

// formAnswers records the confirmations a go-sdk client is asked and approves them.
type formAnswers struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
}

func (f *formAnswers) approve(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req.Params)
	f.mu.Unlock()
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
}

func (f *formAnswers) taken() []*mcp.ElicitParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.asked
	f.asked = nil
	return out
}

// connectAs connects a go-sdk client speaking version to the demo with user's token; a
// client of a version before 2026-07-28 runs the initialize handshake of its era.
func connectAs(t *testing.T, d *demoProcess, user, version string, opts ...mcptest.ClientOption) *mcp.ClientSession {
	t.Helper()
	opts = append(opts, mcptest.WithBearer(d.tokens[strings.ToUpper(user)]))
	if version != mcphttp.ProtocolVersion {
		opts = append(opts, mcptest.WithProtocolVersion(version))
	}
	return mcptest.Connect(t, d.mcpURL, opts...)
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// listed is a client's tools/list, name → the scopes its mark names.
func listed(t *testing.T, cs *mcp.ClientSession) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for tool, err := range cs.Tools(callCtx(t), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var scopes []string
		if raw, ok := tool.Meta[upstreams.RequiredScopesMeta].([]any); ok {
			for _, s := range raw {
				scopes = append(scopes, fmt.Sprint(s))
			}
		}
		out[tool.Name] = scopes
	}
	return out
}

// addNote adds a note as cs's user and returns its id.
func addNote(t *testing.T, cs *mcp.ClientSession, title string) string {
	t.Helper()
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "notes__add_note", Arguments: map[string]any{"title": title}})
	if err != nil || res.IsError {
		t.Fatalf("add_note: %v %s", err, mcptest.ResultText(res))
	}
	var n struct{ ID string }
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &n); err != nil || n.ID == "" {
		t.Fatalf("add_note returned no id: %s", b)
	}
	return n.ID
}

// noteExists asks get_note for id.
func noteExists(t *testing.T, cs *mcp.ClientSession, id string) bool {
	t.Helper()
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "notes__get_note", Arguments: map[string]any{"id": id}})
	if err != nil {
		t.Fatalf("get_note: %v", err)
	}
	return !res.IsError
}

// TestDemoClients starts the demo command as `make demo` does (on ports of the kernel's
// choosing) and drives it, through the URL and tokens its banner prints, with a 2026-07-28
// client (the go-sdk) and pre-2026 clients (the go-sdk pinned to 2025-11-25, the TypeScript SDK
// v1): each connects, lists tools (alice every one; bob the reading tools and the writing
// tools marked with the scope they need), calls a tool, gets the 403 step-up as bob, and has
// alice confirm notes__delete_note (the form, which the rule falls back to for clients that do
// not open URLs).
func TestDemoClients(t *testing.T) {
	d := startDemo(t)
	// The banner tells a newcomer where to point a client of their own, and how to send a token:
	// what the clients below do.
	if !strings.Contains(d.banner, "An MCP client of your own (2026-07-28 or pre-2026) connects to "+d.mcpURL+"\nwith the header \"Authorization: Bearer <one of the tokens above>\".") {
		t.Errorf("the banner does not say where a client of one's own connects:\n%s", d.banner)
	}
	for _, version := range []string{mcphttp.ProtocolVersion, "2025-11-25"} {
		t.Run("go-sdk "+version, func(t *testing.T) { checkGoClients(t, d, version) })
	}
	t.Run("TypeScript SDK v1", func(t *testing.T) { checkTSClient(t, d) })
}

func checkGoClients(t *testing.T, d *demoProcess, version string) {
	forms := &formAnswers{}
	alice := connectAs(t, d, "alice", version, mcptest.WithElicitation(forms.approve))
	bob := connectAs(t, d, "bob", version)
	if got := listed(t, alice); !reflect.DeepEqual(got, wantListed("alice")) {
		t.Errorf("alice's tools/list = %v, want %v", got, wantListed("alice"))
	}
	if got := listed(t, bob); !reflect.DeepEqual(got, wantListed("bob")) {
		t.Errorf("bob's tools/list = %v, want %v", got, wantListed("bob"))
	}
	res, err := alice.CallTool(callCtx(t), &mcp.CallToolParams{Name: "toolbox__echo", Arguments: map[string]any{"text": "hello " + version}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "hello "+version {
		t.Errorf("alice's toolbox__echo: %v %+v", err, res)
	}
	for _, call := range []*mcp.CallToolParams{
		{Name: "notes__add_note", Arguments: map[string]any{"title": "bob's"}},
		{Name: "toolbox__echo", Arguments: map[string]any{"text": "hi"}},
	} {
		// The go-sdk reports the 403's status and the body's message.
		if _, err := bob.CallTool(callCtx(t), call); err == nil || !strings.Contains(err.Error(), "Forbidden: insufficient scope") {
			t.Errorf("bob's %s: %v, want the 403 step-up", call.Name, err)
		}
	}
	id := addNote(t, alice, "to delete, "+version)
	forms.taken()
	res, err = alice.CallTool(callCtx(t), &mcp.CallToolParams{Name: "notes__delete_note", Arguments: map[string]any{"id": id}})
	if err != nil || res.IsError || mcptest.ResultText(res) != "Deleted note "+id {
		t.Fatalf("alice's confirmed notes__delete_note: %v %+v", err, res)
	}
	asked := forms.taken()
	if len(asked) != 1 || asked[0].Mode != "form" || !strings.Contains(asked[0].Message, "notes__delete_note") {
		t.Errorf("alice was asked %+v, want one form naming notes__delete_note", asked)
	}
	if noteExists(t, alice, id) {
		t.Errorf("note %s still exists after its deletion was confirmed", id)
	}
}

func checkTSClient(t *testing.T, d *demoProcess) {
	setup := connectAs(t, d, "alice", mcphttp.ProtocolVersion)
	approved, declined := addNote(t, setup, "TypeScript approves"), addNote(t, setup, "TypeScript declines")
	alice := legacyclient.Scenario{
		URL: d.mcpURL, Token: d.tokens["ALICE"],
		Tools: legacyclient.Tools{Echo: "toolbox__echo", Confirm: "notes__delete_note"},
		Steps: []string{"connect", "list_tools", "call_tool", "confirm_approve", "confirm_decline", "close"},
		Arguments: map[string]map[string]any{
			"call_tool":       {"text": "hello legacy"},
			"confirm_approve": {"id": approved},
			"confirm_decline": {"id": declined},
		},
	}
	steps := legacyclient.RunTS(t, alice)
	for _, name := range alice.Steps {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Fatalf("alice's %s: %+v", name, s)
		}
	}
	if s := steps["connect"]; s.ProtocolVersion != legacyclient.TSProtocol || !s.Session {
		t.Errorf("connect: %s", s)
	}
	checkTSList(t, "alice", steps["list_tools"])
	if s := steps["call_tool"]; s.IsError || s.Text != "hello legacy" {
		t.Errorf("call_tool: %s", s)
	}
	if s := steps["confirm_approve"]; s.IsError || s.Text != "Deleted note "+approved || len(s.Elicited) != 1 || s.Elicited[0].Properties["approve"] != "boolean" {
		t.Errorf("confirm_approve: %s", s)
	}
	if s := steps["confirm_decline"]; !s.IsError {
		t.Errorf("confirm_decline: %s", s)
	}
	if noteExists(t, setup, approved) || !noteExists(t, setup, declined) {
		t.Errorf("after approving the deletion of %s and declining that of %s: %s exists %v, %s exists %v",
			approved, declined, approved, noteExists(t, setup, approved), declined, noteExists(t, setup, declined))
	}

	bob := legacyclient.Scenario{
		URL: d.mcpURL, Token: d.tokens["BOB"], Tools: legacyclient.Tools{Echo: "notes__add_note"},
		Steps:     []string{"connect", "list_tools", "call_tool", "close"},
		Arguments: map[string]map[string]any{"call_tool": {"title": "bob's"}},
	}
	steps = legacyclient.RunTS(t, bob)
	checkTSList(t, "bob", steps["list_tools"])
	s := steps["call_tool"]
	if s.OK || !slices.ContainsFunc(s.HTTP, func(e legacyclient.HTTPExchange) bool { return e.Status == 403 }) {
		t.Errorf("bob's notes__add_note: %s, want it refused with a 403", s)
	}
}

// checkTSList compares what the TypeScript client listed with what user may see.
func checkTSList(t *testing.T, user string, s legacyclient.Step) {
	t.Helper()
	want := wantListed(user)
	marked := map[string][]string{}
	for n, scopes := range want {
		if scopes != nil {
			marked[n] = scopes
		}
	}
	names := slices.Sorted(maps.Keys(want))
	got := slices.Sorted(slices.Values(s.Names))
	if !s.OK || !slices.Equal(got, names) || (len(marked) > 0 || len(s.RequiredScopes) > 0) && !reflect.DeepEqual(s.RequiredScopes, marked) {
		t.Errorf("%s's list_tools: %s, want %v with %v marked", user, s, names, marked)
	}
}
