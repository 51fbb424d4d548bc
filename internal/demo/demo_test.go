package demo

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

var fixedNow = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func startTest(t *testing.T) *Backends {
	t.Helper()
	next := 0
	d := deps{
		now:  func() time.Time { return fixedNow },
		intN: func(n int) int { next = (next + 1) % n; return next },
		tick: 0,
	}
	b, err := start(t.Context(), nil, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

type call struct {
	name    string
	args    map[string]any
	want    string // substring of the text content
	isError bool
}

func runCalls(t *testing.T, cs *mcp.ClientSession, calls []call) {
	t.Helper()
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: strings.Fields(c.name)[0], Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != c.isError {
				t.Fatalf("isError = %t, want %t (%s)", res.IsError, c.isError, mcptest.ResultText(res))
			}
			if got := mcptest.ResultText(res); !strings.Contains(got, c.want) {
				t.Errorf("text = %q, want it to contain %q", got, c.want)
			}
		})
	}
}

func TestStartListensOnLoopback(t *testing.T) {
	b := startTest(t)
	list := b.List()
	if len(list) != 2 || list[0].Name != NotesName || list[1].Name != ToolboxName {
		t.Fatalf("List() = %+v", list)
	}
	for _, be := range list {
		u, err := url.Parse(be.URL)
		if err != nil || u.Hostname() != "127.0.0.1" || u.Path != EndpointPath || u.Port() == "0" {
			t.Errorf("%s URL = %q, want http://127.0.0.1:<port>/mcp", be.Name, be.URL)
		}
		if b.URL(be.Name) != be.URL {
			t.Errorf("URL(%q) = %q", be.Name, b.URL(be.Name))
		}
	}
	if b.URL("nope") != "" {
		t.Error("URL of an unknown backend is not empty")
	}
}

func TestCloseTwice(t *testing.T) {
	b, err := Start(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := mcptest.Dial(t.Context(), b.URL(NotesName)); err == nil {
		t.Error("a closed backend still answers")
	}
}

func TestNotesTools(t *testing.T) {
	cs := mcptest.Connect(t, startTest(t).URL(NotesName))
	runCalls(t, cs, []call{
		{name: "list_notes empty", want: "No notes."},
		{name: "add_note first", args: map[string]any{"title": "Groceries", "body": "milk, eggs"}, want: "Added note 1: Groceries"},
		{name: "add_note second", args: map[string]any{"title": "Ideas", "body": "a gateway for MCP"}, want: "Added note 2"},
		{name: "add_note without title", args: map[string]any{"title": "  "}, isError: true, want: "invalid note"},
		{name: "list_notes both", want: "- 1: Groceries\n- 2: Ideas\n"},
		{name: "search_notes body", args: map[string]any{"query": "GATEWAY"}, want: "- 2: Ideas"},
		{name: "search_notes none", args: map[string]any{"query": "zebra"}, want: "No notes."},
		{name: "get_note", args: map[string]any{"id": "1"}, want: "milk, eggs"},
		{name: "get_note missing", args: map[string]any{"id": "9"}, isError: true, want: "note not found"},
		{name: "delete_note", args: map[string]any{"id": "1"}, want: "Deleted note 1"},
		{name: "delete_note again", args: map[string]any{"id": "1"}, isError: true, want: "note not found"},
		{name: "list_notes after delete", want: "- 2: Ideas"},
	})
}

func TestNotesAnnotations(t *testing.T) {
	cs := mcptest.Connect(t, startTest(t).URL(NotesName))
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	destructive := map[string]bool{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		destructive[tool.Name] = a != nil && a.DestructiveHint != nil && *a.DestructiveHint
	}
	want := map[string]bool{"add_note": false, "list_notes": false, "search_notes": false, "get_note": false, "delete_note": true}
	for name, d := range want {
		if got, ok := destructive[name]; !ok || got != d {
			t.Errorf("%s: destructiveHint=%t present=%t, want %t", name, got, ok, d)
		}
	}
}

func TestNotesResourcesAndPrompt(t *testing.T) {
	cs := mcptest.Connect(t, startTest(t).URL(NotesName))
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"title": "Plan", "body": "ship it"}}); err != nil {
		t.Fatal(err)
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); got != "note://1 note://index" {
		t.Errorf("resources = %q, want note://1 note://index", got)
	}
	tmpl, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "note://{id}" {
		t.Errorf("templates = %+v, %v", tmpl, err)
	}
	tests := []struct {
		uri      string
		want     string
		notFound bool
	}{
		{"note://1", "ship it", false},
		{"note://index", "- 1: Plan", false},
		{"note://7", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
			if tt.notFound {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("err = %v, want -32602", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Contents[0].Text, tt.want) {
				t.Errorf("text = %q, want %q", res.Contents[0].Text, tt.want)
			}
		})
	}
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "summarize_notes", Arguments: map[string]string{"query": "plan"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "ship it") {
		t.Errorf("prompt = %+v", p.Messages[0].Content)
	}
}

func TestToolboxTools(t *testing.T) {
	cs := mcptest.Connect(t, startTest(t).URL(ToolboxName))
	runCalls(t, cs, []call{
		{name: "echo", args: map[string]any{"text": "héllo"}, want: "héllo"},
		{name: "add", args: map[string]any{"a": 1.5, "b": 2}, want: "3.5"},
		{name: "now utc", want: "2026-07-28T12:00:00Z"},
		{name: "now paris", args: map[string]any{"timezone": "Europe/Paris"}, want: "2026-07-28T14:00:00+02:00"},
		{name: "now bad zone", args: map[string]any{"timezone": "Mars/Olympus"}, isError: true, want: "unknown time zone"},
		{name: "count_slowly", args: map[string]any{"n": 3}, want: "Counted to 3."},
		{name: "count_slowly too far", args: map[string]any{"n": 21}, isError: true, want: "out of range"},
		{name: "roll_dice", args: map[string]any{"sides": 6, "count": 3}, want: "Rolled 3d6: [2 3 4], total 9"},
		{name: "roll_dice default", want: "Rolled 1d6"},
		{name: "roll_dice one side", args: map[string]any{"sides": 1}, isError: true, want: "out of range"},
		{name: "word_count", args: map[string]any{"text": "one two\nthree\n"}, want: "3 words, 14 characters, 2 lines"},
		{name: "word_count empty", args: map[string]any{"text": ""}, want: "0 words, 0 characters, 0 lines"},
	})
}

func TestCountSlowlyStreamsProgress(t *testing.T) {
	got := make(chan float64, maxCount)
	cs := mcptest.Connect(t, startTest(t).URL(ToolboxName), mcptest.WithProgress(func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		got <- r.Params.Progress
	}))
	params := &mcp.CallToolParams{Name: "count_slowly", Arguments: map[string]any{"n": 4}}
	params.SetProgressToken("count")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The go-sdk client delivers notifications asynchronously.
	for want := 1.0; want <= 4; want++ {
		select {
		case p := <-got:
			if p != want {
				t.Errorf("progress %v, want %v", p, want)
			}
		case <-ctx.Done():
			t.Fatal("progress notifications missing")
		}
	}
}

func TestStructuredOutput(t *testing.T) {
	cs := mcptest.Connect(t, startTest(t).URL(ToolboxName))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "word_count", Arguments: map[string]any{"text": "a b"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if string(raw) != `{"characters":3,"lines":1,"words":2}` {
		t.Errorf("structuredContent = %s", raw)
	}
}
