package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitBound caps how long a test waits for something asynchronous, so a
// broken peer fails the test instead of hanging it; it is never asserted.
const waitBound = 30 * time.Second

func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content blocks, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

func TestDefaultTools(t *testing.T) {
	srv := StartServer(t, "kit")
	cs := Connect(t, srv.URL(), WithElicitation(Accept(map[string]any{"name": "Ada"})))
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
	}{
		{ToolEcho, map[string]any{"text": "héllo"}, "héllo", false},
		{ToolAdd, map[string]any{"a": 2, "b": 40}, "42", false},
		{ToolProgress, map[string]any{"steps": 2}, "done 2", false},
		{ToolSlow, map[string]any{"ms": 1}, "slept 1ms", false},
		{ToolAskName, nil, "Hello, Ada", false},
		{ToolFail, nil, FailText, true},
		{ToolWhoAmI, nil, "authorization=false cookie=false", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.name, Arguments: tt.args})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if got := textOf(t, res); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
			if res.IsError != tt.isError {
				t.Errorf("isError = %t, want %t", res.IsError, tt.isError)
			}
		})
	}
}

func TestListsMatchDefaults(t *testing.T) {
	cs := Connect(t, StartServer(t, "kit").URL())
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	// go-sdk sorts tools by name, which keeps tools/list deterministic (§5.1).
	want := "add ask_name echo fail progress slow whoami"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools = %q, want %q", got, want)
	}
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != PromptGreet {
		t.Errorf("prompts = %+v, %v; want greet only", prompts, err)
	}
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != ResourceReadme {
		t.Errorf("resources = %+v, %v; want readme only", res, err)
	}
	tmpl, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != TemplateItems {
		t.Errorf("templates = %+v, %v; want items only", tmpl, err)
	}
}

func TestResources(t *testing.T) {
	cs := Connect(t, StartServer(t, "kit").URL())
	tests := []struct {
		uri      string
		want     string
		notFound bool
	}{
		{ResourceReadme, ReadmeText, false},
		{"mem://items/beta", "item beta", false},
		{"mem://items/zeta", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
			if tt.notFound {
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("err = %v, want -32602 (§5.3 resource not found)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 || res.Contents[0].Text != tt.want {
				t.Errorf("contents = %+v, want text %q", res.Contents, tt.want)
			}
		})
	}
}

func TestPromptAndCompletion(t *testing.T) {
	cs := Connect(t, StartServer(t, "kit").URL())
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: PromptGreet, Arguments: map[string]string{"name": "Grace"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Grace." {
		t.Errorf("prompt message = %+v", p.Messages[0].Content)
	}
	tests := []struct {
		name string
		ref  *mcp.CompleteReference
		arg  mcp.CompleteParamsArgument
		want string
	}{
		{"prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: PromptGreet}, mcp.CompleteParamsArgument{Name: "name", Value: "a"}, "Ada Alan"},
		{"template", &mcp.CompleteReference{Type: "ref/resource", URI: TemplateItems}, mcp.CompleteParamsArgument{Name: "id", Value: "g"}, "gamma"},
		{"unknown", &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, mcp.CompleteParamsArgument{Name: "x", Value: ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: tt.ref, Argument: tt.arg})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.Completion.Values, " "); got != tt.want {
				t.Errorf("values = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgressArrivesOverSSE(t *testing.T) {
	srv := StartServer(t, "kit")
	got := make(chan float64, 3)
	cs := Connect(t, srv.URL(), WithProgress(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		got <- req.Params.Progress
	}))
	params := &mcp.CallToolParams{Name: ToolProgress, Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("p1")
	srv.Reset()
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	// The go-sdk client runs notification handlers asynchronously, so they
	// may still be arriving after CallTool has returned.
	for want := 1.0; want <= 3; want++ {
		select {
		case p := <-got:
			if p != want {
				t.Errorf("progress = %v, want %v", p, want)
			}
		case <-bounded(t).Done():
			t.Fatal("progress notifications never arrived")
		}
	}
	ex := srv.Requests()
	if len(ex) != 1 {
		t.Fatalf("recorded %d exchanges, want 1", len(ex))
	}
	if ct := ex[0].ResponseHeader.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("response Content-Type = %q, want text/event-stream", ct)
	}
	if n := strings.Count(string(ex[0].ResponseBody), "notifications/progress"); n != 3 {
		t.Errorf("SSE body holds %d progress events, want 3", n)
	}
}

func TestAskNameManualRoundTrip(t *testing.T) {
	srv := StartServer(t, "kit")
	cs := Connect(t, srv.URL(), WithManualMRTR(), WithElicitation(Decline()))
	first, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolAskName})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || first.RequestState != AskNameState {
		t.Fatalf("first result needsInput=%t state=%q, want input_required with %q", first.NeedsInput(), first.RequestState, AskNameState)
	}
	if _, ok := first.InputRequests[AskNameInputKey].(*mcp.ElicitParams); !ok {
		t.Fatalf("input request %q is %T, want elicitation", AskNameInputKey, first.InputRequests[AskNameInputKey])
	}
	tests := []struct {
		name  string
		state string
		resp  *mcp.ElicitResult
		want  string
		again bool
	}{
		{"accepted", AskNameState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alan"}}, "Hello, Alan", false},
		{"declined", AskNameState, &mcp.ElicitResult{Action: "decline"}, "ask_name: decline", false},
		{"foreign state asks again", "forged", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Eve"}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
				Name:           ToolAskName,
				InputResponses: mcp.InputResponseMap{AskNameInputKey: tt.resp},
				RequestState:   tt.state,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.NeedsInput() != tt.again {
				t.Fatalf("needsInput = %t, want %t", res.NeedsInput(), tt.again)
			}
			if !tt.again && textOf(t, res) != tt.want {
				t.Errorf("text = %q, want %q", textOf(t, res), tt.want)
			}
		})
	}
}

// cancelSlowCall starts a long slow call through a go-sdk client, waits until the server is
// running it, cancels the call's context, and returns where the call's error arrives.
func cancelSlowCall(t *testing.T, srv *Server) <-chan error {
	t.Helper()
	cs := Connect(t, srv.URL())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolSlow, Arguments: map[string]any{"ms": 600000}})
		done <- err
	}()
	if err := srv.WaitSlow(bounded(t), func(s SlowStats) bool { return s.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	return done
}

func TestSlowCancelledWhenClientGoesAway(t *testing.T) {
	srv := StartServer(t, "kit")
	if err := <-cancelSlowCall(t, srv); err == nil {
		t.Fatal("CallTool succeeded after cancel")
	}
	if err := srv.WaitSlow(bounded(t), func(s SlowStats) bool { return s.Cancelled == 1 }); err != nil {
		t.Fatal(err)
	}
	if got := srv.SlowStats(); got.Completed != 0 {
		t.Errorf("stats = %+v, want nothing completed", got)
	}
}

func TestRecordingAndHeaders(t *testing.T) {
	srv := StartServer(t, "kit")
	cs := Connect(t, srv.URL(), WithBearer("s3cret"), WithHeader("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
	srv.Reset()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolWhoAmI})
	if err != nil {
		t.Fatal(err)
	}
	var who WhoAmI
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &who); err != nil {
		t.Fatal(err)
	}
	if !who.Authorization || who.AuthScheme != "Bearer" || who.Cookie {
		t.Errorf("whoami = %+v, want bearer and no cookie", who)
	}
	wantHeaders := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": ToolWhoAmI, "Mcp-Protocol-Version": "2026-07-28"}
	for k, v := range wantHeaders {
		if who.Headers[k] != v {
			t.Errorf("whoami header %s = %q, want %q", k, who.Headers[k], v)
		}
	}
	if strings.Contains(string(raw), "s3cret") {
		t.Error("whoami leaked the token value")
	}
	ex := srv.Requests()
	if len(ex) != 1 {
		t.Fatalf("recorded %d exchanges, want 1", len(ex))
	}
	if got := ex[0].Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("recorded Authorization = %q", got)
	}
	if ex[0].Header.Get("Traceparent") == "" || ex[0].Status != http.StatusOK || !strings.Contains(string(ex[0].Body), `"name":"whoami"`) {
		t.Errorf("recorded exchange = %+v", ex[0])
	}
	srv.Reset()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("after Reset %d exchanges remain", n)
	}
}

func TestRequiredHeader(t *testing.T) {
	srv := StartServer(t, "kit", WithRequiredHeader("Authorization", "Bearer backend"))
	tests := []struct {
		name string
		opts []ClientOption
		ok   bool
	}{
		{"missing", nil, false},
		{"wrong", []ClientOption{WithBearer("client")}, false},
		{"right", []ClientOption{WithBearer("backend")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Reset()
			cs, err := Dial(t.Context(), srv.URL(), tt.opts...)
			if err == nil {
				cs.Close()
			}
			if (err == nil) != tt.ok {
				t.Fatalf("Dial err = %v, want ok=%t", err, tt.ok)
			}
			ex := srv.Requests()
			if len(ex) == 0 {
				t.Fatal("nothing recorded")
			}
			if !tt.ok && ex[0].Status != http.StatusUnauthorized {
				t.Errorf("status = %d, want 401", ex[0].Status)
			}
		})
	}
}

func TestLegacyServerHandshake(t *testing.T) {
	srv := StartLegacyServer(t, "old")
	cs := Connect(t, srv.URL(), WithProtocolVersion("2025-11-25"), WithElicitation(Accept(map[string]any{"name": "Grace"})))
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolAskName})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "Hello, Grace" {
		t.Errorf("ask_name over a legacy session = %q", got)
	}
	var methods []string
	sessions := map[string]bool{}
	for _, ex := range srv.Requests() {
		if ex.Method != http.MethodPost {
			continue
		}
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(ex.Body, &msg)
		methods = append(methods, msg.Method)
		if id := ex.Header.Get("Mcp-Session-Id"); id != "" {
			sessions[id] = true
		}
	}
	if len(methods) < 3 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || methods[2] != "tools/call" {
		t.Errorf("POSTed methods = %v, want initialize, notifications/initialized, tools/call, ...", methods)
	}
	if len(sessions) != 1 {
		t.Errorf("saw %d session ids, want exactly 1", len(sessions))
	}
}

func TestModernClientAgainstLegacyServerFallsBack(t *testing.T) {
	srv := StartLegacyServer(t, "old")
	cs := Connect(t, srv.URL())
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q, want the legacy fallback 2025-11-25", got)
	}
	ex := srv.Requests()
	if len(ex) == 0 || !strings.Contains(string(ex[0].Body), `"server/discover"`) {
		t.Fatal("the client did not try server/discover first")
	}
	// go-sdk v1.8.0's stateful server answers discover (it does not send
	// -32022) but lists only legacy versions, which makes the client fall
	// back to initialize.
	if body := string(ex[0].ResponseBody); strings.Contains(body, `"2026-07-28"`) || !strings.Contains(body, `"supportedVersions":["2025-11-25"`) {
		t.Errorf("legacy server answered discover with %d %s", ex[0].Status, body)
	}
	var sawInitialize bool
	for _, e := range ex[1:] {
		sawInitialize = sawInitialize || strings.Contains(string(e.Body), `"method":"initialize"`)
	}
	if !sawInitialize {
		t.Error("no initialize after the legacy discover answer")
	}
}
