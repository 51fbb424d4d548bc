package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// modernAndLegacy starts a modern go-sdk backend alpha and a stateful 2025-11-25 go-sdk
// backend beta behind one Registry in auto mode.
func modernAndLegacy(t *testing.T) (*Registry, *mcptest.Server, *mcptest.Server) {
	t.Helper()
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartLegacyServer(t, "beta")
	r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{
		{Name: "alpha", URL: alpha.URL()},
		{Name: "beta", URL: beta.URL()},
	}}, Options{})
	return r, alpha, beta
}

// postedMethods lists the JSON-RPC methods (or "response") a backend received by POST.
func postedMethods(s *mcptest.Server) []string {
	var out []string
	for _, ex := range s.Requests() {
		if ex.Method != http.MethodPost {
			continue
		}
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(ex.Body, &m)
		if m.Method == "" {
			m.Method = "response"
		}
		out = append(out, m.Method)
	}
	return out
}

func TestLegacyListMergesWithModern(t *testing.T) {
	r, _, _ := modernAndLegacy(t)
	res, err := r.List(context.Background(), &ListRequest{Method: MethodToolsList,
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	m := decodeObject(t, string(res))
	names := map[string]bool{}
	tools, _ := m["tools"].([]any)
	for _, tool := range tools {
		names[mcptest.Path(tool, "name").(string)] = true
	}
	for _, want := range []string{"alpha__echo", "beta__echo", "beta__progress"} {
		if !names[want] {
			t.Errorf("merged list lacks %s: %v", want, names)
		}
	}
	// Digest §7: a legacy part says nothing about caching, so it is stale and private.
	if m["ttlMs"] != float64(0) || m["cacheScope"] != "private" || m["resultType"] != "complete" {
		t.Errorf("ttlMs=%v cacheScope=%v resultType=%v, want 0 private complete", m["ttlMs"], m["cacheScope"], m["resultType"])
	}
}

func TestLegacyCallOnSession(t *testing.T) {
	r, _, beta := modernAndLegacy(t)
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
		`"io.modelcontextprotocol/logLevel":"info","progressToken":"p1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},` +
		`"name":"beta__echo","arguments":{"text":"old world"}}`
	res := callOnce(t, r, MethodToolsCall, "beta__echo", KindTool, params)
	if got := mcptest.Path(res, "result", "content", 0, "text"); got != "old world" {
		t.Fatalf("text = %v (response %v)", got, res)
	}
	if mcptest.Path(res, "result", "resultType") != "complete" || mcptest.Path(res, "id") != float64(7) {
		t.Fatalf("response %v lacks resultType complete or the client's id", res)
	}
	got := postedMethods(beta)
	// The call asked for logs: the session's level is set (once) so the backend sends them.
	want := []string{"server/discover", "initialize", "notifications/initialized", "logging/setLevel", "tools/call"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("backend saw %v, want %v", got, want)
	}
	ex := lastRequest(t, beta, "") // the tools/call carries no Mcp-Method: take the last POST
	body := string(ex.Body)
	for _, gone := range []string{"io.modelcontextprotocol/", `"id":7`} {
		if strings.Contains(body, gone) {
			t.Errorf("legacy request %s still carries %s", body, gone)
		}
	}
	for _, kept := range []string{`"progressToken":"p1"`, `"traceparent"`, `"name":"echo"`} {
		if !strings.Contains(body, kept) {
			t.Errorf("legacy request %s lost %s", body, kept)
		}
	}
	if ex.Header.Get("Mcp-Session-Id") == "" || ex.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("session headers = %q %q", ex.Header.Get("Mcp-Session-Id"), ex.Header.Get("Mcp-Protocol-Version"))
	}
}

func TestLegacyProgressStreams(t *testing.T) {
	r, _, _ := modernAndLegacy(t)
	target := Target{Upstream: "beta", Name: "progress"}
	s, err := r.Call(context.Background(), &Call{Method: MethodToolsCall, ID: json.RawMessage(`"x"`), Target: target,
		Params: json.RawMessage(`{"_meta":{"progressToken":42},"name":"beta__progress","arguments":{"steps":3}}`), ProgressToken: json.RawMessage(`42`)})
	if err != nil {
		t.Fatal(err)
	}
	msgs := collect(t, s)
	if len(msgs) != 4 || !s.SSE() {
		t.Fatalf("got %d messages (SSE %v), want 3 progress + final: %v", len(msgs), s.SSE(), msgs)
	}
	for _, m := range msgs[:3] {
		if !strings.Contains(m, `"notifications/progress"`) || !strings.Contains(m, `"progressToken":42`) {
			t.Errorf("not a progress notification for token 42: %s", m)
		}
	}
	if !strings.Contains(msgs[3], `"done 3"`) || !strings.Contains(msgs[3], `"id":"x"`) {
		t.Errorf("final = %s", msgs[3])
	}
}

func TestLegacyResultTranslation(t *testing.T) {
	r, _, _ := modernAndLegacy(t)
	tests := []struct {
		name, method, namespaced string
		kind                     Kind
		params                   string
		check                    func(map[string]any) bool
	}{
		{"read adds cache hints", MethodResourcesRead, "beta+mem://readme", KindResource,
			`{"uri":"beta+mem://readme"}`, func(m map[string]any) bool {
				return mcptest.Path(m, "result", "ttlMs") == float64(0) && mcptest.Path(m, "result", "cacheScope") == "private" &&
					strings.HasPrefix(mcptest.Path(m, "result", "contents", 0, "uri").(string), "beta+")
			}},
		{"missing resource is -32602", MethodResourcesRead, "beta+mem://nope", KindResource,
			`{"uri":"beta+mem://nope"}`, func(m map[string]any) bool { return mcptest.Path(m, "error", "code") == float64(-32602) }},
		{"prompt", MethodPromptsGet, "beta__greet", KindPrompt,
			`{"name":"beta__greet","arguments":{"name":"Ada"}}`, func(m map[string]any) bool {
				return mcptest.Path(m, "result", "resultType") == "complete" && mcptest.Path(m, "result", "ttlMs") == nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m := callOnce(t, r, tt.method, tt.namespaced, tt.kind, tt.params); !tt.check(m) {
				t.Fatalf("response %v", m)
			}
		})
	}
}

func TestLegacyCapabilitiesFromInitialize(t *testing.T) {
	r, _, _ := modernAndLegacy(t)
	d, err := r.Capabilities(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Failed) != 0 || !strings.Contains(string(d.Capabilities), `"tools"`) {
		t.Fatalf("discovery %+v: %s", d, d.Capabilities)
	}
	if h := r.Health(); !h[1].Up {
		t.Errorf("legacy backend not up after discover: %+v", h[1])
	}
}

// deleteSession ends a backend session behind the gateway's back, as an expiry would.
func deleteSession(t *testing.T, s *mcptest.Server, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, s.URL(), nil)
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE session: HTTP %d", resp.StatusCode)
	}
}

func TestLegacySessionExpiryReinitializes(t *testing.T) {
	r, _, beta := modernAndLegacy(t)
	params := `{"name":"beta__echo","arguments":{"text":"one"}}`
	callOnce(t, r, MethodToolsCall, "beta__echo", KindTool, params)
	first := lastRequest(t, beta, "").Header.Get("Mcp-Session-Id")
	deleteSession(t, beta, first)
	beta.Reset()
	res := callOnce(t, r, MethodToolsCall, "beta__echo", KindTool, `{"name":"beta__echo","arguments":{"text":"two"}}`)
	if got := mcptest.Path(res, "result", "content", 0, "text"); got != "two" {
		t.Fatalf("after expiry: %v", res)
	}
	got := strings.Join(postedMethods(beta), " ")
	if got != "tools/call initialize notifications/initialized tools/call" {
		t.Fatalf("backend saw %q, want a 404'd call, a new session and one retry", got)
	}
	ex := beta.Requests()
	if ex[0].Status != http.StatusNotFound || ex[3].Header.Get("Mcp-Session-Id") == first {
		t.Fatalf("first status %d, retry session %q (old %q)", ex[0].Status, ex[3].Header.Get("Mcp-Session-Id"), first)
	}
}

// TestLegacyClientGoneSendsCancelled: the go-sdk's stateful server sends no response headers
// before the tool's first message, so the client leaves while Call still waits for them.
func TestLegacyClientGoneSendsCancelled(t *testing.T) {
	r, _, beta := modernAndLegacy(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		s, err := r.Call(ctx, &Call{Method: MethodToolsCall, ID: json.RawMessage(`1`), Target: Target{Upstream: "beta", Name: "slow"},
			Params: json.RawMessage(`{"name":"beta__slow","arguments":{"ms":60000}}`)})
		if err == nil {
			_, _, err = s.Next()
			s.Close()
		}
		callErr <- err
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := beta.WaitSlow(wctx, func(st mcptest.SlowStats) bool { return st.Started == 1 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-callErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("call after cancel = %v", err)
	}
	methods := postedMethods(beta)
	if methods[len(methods)-1] != "notifications/cancelled" {
		t.Fatalf("backend saw %v, want notifications/cancelled last", methods)
	}
	var last struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	}
	ex := beta.Requests()
	_ = json.Unmarshal(ex[len(ex)-1].Body, &last)
	if !strings.Contains(string(ex[len(ex)-2].Body), `"id":`+string(last.Params.RequestID)+`,`) || last.Params.Reason == "" {
		t.Errorf("cancelled %s does not name the call %s", ex[len(ex)-1].Body, ex[len(ex)-2].Body)
	}
	if ex[len(ex)-1].Header.Get("Mcp-Session-Id") != ex[len(ex)-2].Header.Get("Mcp-Session-Id") {
		t.Error("notifications/cancelled went without the call's session")
	}
}

func TestLegacyListen(t *testing.T) {
	r, _, beta := modernAndLegacy(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		done <- r.Listen(ctx, json.RawMessage(`"L1"`), json.RawMessage(`{"_meta":`+upstreamstest.Meta+`,"notifications":{"toolsListChanged":true}}`),
			nil, nil, func(msg []byte) error { got <- string(msg); return nil })
	}()
	timeout := time.After(30 * time.Second)
	if ack := waitMsg(t, got, timeout); !strings.Contains(ack, "subscriptions/acknowledged") {
		t.Fatalf("first message %s", ack)
	}
	// Add tools until the listen's GET stream is open and relays a change; bounded.
	for i := range 50 {
		beta.MCP().AddTool(newNoopTool("extra"+string(rune('a'+i%26))+string(rune('a'+i/26))), noopHandler)
		select {
		case msg := <-got:
			if !strings.Contains(msg, "notifications/tools/list_changed") || !strings.Contains(msg, `"L1"`) {
				t.Fatalf("relayed %s", msg)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Listen: %v", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("no list_changed relayed from the legacy backend")
}

func waitMsg(t *testing.T, ch <-chan string, timeout <-chan time.Time) string {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-timeout:
		t.Fatal("timed out waiting for a message")
	}
	return ""
}

func newNoopTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func noopHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func TestLegacyPinnedRevisions(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			beta := mcptest.StartLegacyServer(t, "beta")
			r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "beta", URL: beta.URL(), Protocol: version}}}, Options{})
			res := callOnce(t, r, MethodToolsCall, "beta__echo", KindTool, `{"name":"beta__echo","arguments":{"text":"v"}}`)
			if mcptest.Path(res, "result", "content", 0, "text") != "v" {
				t.Fatalf("response %v", res)
			}
			if got := strings.Join(postedMethods(beta), " "); got != "initialize notifications/initialized tools/call" {
				t.Fatalf("backend saw %q: a pinned era skips the probe", got)
			}
			h := lastRequest(t, beta, "").Header
			want := version
			if version == "2025-03-26" {
				want = "" // that revision predates the header
			}
			if got := h.Get("Mcp-Protocol-Version"); got != want {
				t.Fatalf("MCP-Protocol-Version = %q, want %q", got, want)
			}
		})
	}
}
