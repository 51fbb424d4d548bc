package upstreams

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

func TestCallToolsOnBothBackends(t *testing.T) {
	r, alpha, beta := twoBackends(t, nil, nil, nil)
	tests := []struct {
		name    string
		backend *mcptest.Server
		tool    string
		args    string
		want    string
	}{
		{"alpha echo", alpha, "alpha__echo", `{"text":"hi from alpha"}`, "hi from alpha"},
		{"beta add", beta, "beta__add", `{"a":2,"b":40}`, "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := `{"_meta":` + upstreamstest.Meta + `,"name":"` + tt.tool + `","arguments":` + tt.args + `}`
			res := callOnce(t, r, MethodToolsCall, tt.tool, KindTool, params)
			if got := mcptest.Path(res, "result", "content", 0, "text"); got != tt.want {
				t.Fatalf("text = %v, want %q (response %v)", got, tt.want, res)
			}
			if got := mcptest.Path(res, "id"); got != float64(7) {
				t.Fatalf("id = %v, want the client's 7", got)
			}
			ex := lastRequest(t, tt.backend, MethodToolsCall)
			backendName := strings.TrimPrefix(tt.tool, tt.backend.Name()+"__")
			if got := ex.Header.Get("Mcp-Name"); got != backendName {
				t.Fatalf("Mcp-Name = %q, want the backend-side %q", got, backendName)
			}
			if !strings.Contains(string(ex.Body), `"name":"`+backendName+`"`) || strings.Contains(string(ex.Body), tt.tool) {
				t.Fatalf("backend body %s does not carry only the backend-side name", ex.Body)
			}
		})
	}
}

func TestCallHeadersReachingBackend(t *testing.T) {
	r, alpha, beta := twoBackends(t, nil,
		[]mcptest.Option{mcptest.WithRequiredHeader("Authorization", "Bearer backend-secret")},
		func(c *Config) {
			c.Upstreams[0].Headers = map[string]string{"X-Backend-Key": "k1"}
			c.Upstreams[1].Headers = map[string]string{"Authorization": "Bearer backend-secret"}
		})
	client := http.Header{
		"Authorization":  {"Bearer client-token"},
		"Cookie":         {"session=client"},
		"Traceparent":    {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Tracestate":     {"vendor=1"},
		"X-Request-Id":   {"req-1"},
		"Mcp-Param-Repo": {"octo/hello"},
		"X-Other":        {"dropped"},
		"Mcp-Session-Id": {"client-session"},
		"Last-Event-Id":  {"client-event"},
	}
	for _, b := range []*mcptest.Server{alpha, beta} {
		t.Run(b.Name(), func(t *testing.T) {
			target := Target{Upstream: b.Name(), Name: "whoami"}
			s, err := r.Call(context.Background(), &Call{
				Method: MethodToolsCall, ID: json.RawMessage(`"w"`), Target: target, Header: client,
				Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"` + r.Namespaced(KindTool, target) + `"}`),
			})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			collect(t, s)
			h := lastRequest(t, b, MethodToolsCall).Header
			want := map[string]string{
				"Mcp-Name": "whoami", "Mcp-Method": "tools/call", "Mcp-Protocol-Version": ProtocolVersion,
				"Traceparent": client.Get("Traceparent"), "Tracestate": "vendor=1", "X-Request-Id": "req-1",
				"Mcp-Param-Repo": "octo/hello", "Cookie": "", "X-Other": "", "Mcp-Session-Id": "", "Last-Event-Id": "",
				"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			}
			if b == alpha {
				want["X-Backend-Key"], want["Authorization"] = "k1", ""
			} else {
				want["Authorization"] = "Bearer backend-secret"
			}
			for k, v := range want {
				if got := h.Get(k); got != v {
					t.Errorf("backend header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestCallProgressBeforeResult(t *testing.T) {
	r, _, _ := twoBackends(t, nil, nil, nil)
	target, _ := r.Resolve(KindTool, "beta__progress")
	meta := strings.TrimSuffix(upstreamstest.Meta, "}") + `,"progressToken":"tok"}`
	s, err := r.Call(context.Background(), &Call{
		Method: MethodToolsCall, ID: json.RawMessage(`3`), Target: target,
		Params: json.RawMessage(`{"_meta":` + meta + `,"name":"beta__progress","arguments":{"steps":3}}`), ProgressToken: json.RawMessage(`"tok"`),
	})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if !s.SSE() {
		t.Fatal("SSE() = false for a go-sdk event-stream answer")
	}
	msgs := collect(t, s)
	if len(msgs) != 4 {
		t.Fatalf("got %d messages, want 3 progress notifications and the result: %v", len(msgs), msgs)
	}
	for i, m := range msgs[:3] {
		n := decodeObject(t, m)
		if n["method"] != "notifications/progress" || mcptest.Path(n, "params", "progress") != float64(i+1) {
			t.Fatalf("message %d = %s, want progress %d", i, m, i+1)
		}
	}
	if got := mcptest.Path(decodeObject(t, msgs[3]), "result", "content", 0, "text"); got != "done 3" {
		t.Fatalf("final text = %v, want done 3", got)
	}
	if s.Status() != http.StatusOK {
		t.Fatalf("Status() = %d", s.Status())
	}
}

func TestCallPromptsResourcesCompletion(t *testing.T) {
	r, alpha, beta := twoBackends(t, nil, nil, nil)
	tests := []struct {
		name, method, namespaced string
		kind                     Kind
		params                   string
		backend                  *mcptest.Server
		wantBody                 string // fragment the backend must receive
		wantName                 string // Mcp-Name the backend must receive ("" for none)
		check                    func(map[string]any) bool
	}{
		{"prompts/get", MethodPromptsGet, "beta__greet", KindPrompt,
			`{"_meta":` + upstreamstest.Meta + `,"name":"beta__greet","arguments":{"name":"Ada"}}`, beta,
			`"name":"greet","arguments":{"name":"Ada"}`, "greet",
			func(m map[string]any) bool {
				return mcptest.Path(m, "result", "messages", 0, "content", "text") == "Say hello to Ada."
			}},
		{"resources/read", MethodResourcesRead, "alpha+mem://readme", KindResource,
			`{"_meta":` + upstreamstest.Meta + `,"uri":"alpha+mem://readme"}`, alpha,
			`"uri":"mem://readme"`, "mem://readme",
			func(m map[string]any) bool {
				return mcptest.Path(m, "result", "contents", 0, "uri") == "alpha+mem://readme"
			}},
		{"complete ref/prompt", MethodComplete, "alpha__greet", KindPrompt,
			`{"_meta":` + upstreamstest.Meta + `,"ref":{"type":"ref/prompt","name":"alpha__greet"},"argument":{"name":"name","value":"A"}}`, alpha,
			`"ref":{"type":"ref/prompt","name":"greet"}`, "",
			func(m map[string]any) bool { return mcptest.Path(m, "result", "completion", "values", 1) == "Alan" }},
		{"complete ref/resource", MethodComplete, "beta+mem://items/{id}", KindResource,
			`{"_meta":` + upstreamstest.Meta + `,"ref":{"type":"ref/resource","uri":"beta+mem://items/{id}"},"argument":{"name":"id","value":"g"}}`, beta,
			`"ref":{"type":"ref/resource","uri":"mem://items/{id}"}`, "",
			func(m map[string]any) bool { return mcptest.Path(m, "result", "completion", "values", 0) == "gamma" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callOnce(t, r, tt.method, tt.namespaced, tt.kind, tt.params)
			if !tt.check(res) {
				t.Fatalf("unexpected response %v", res)
			}
			ex := lastRequest(t, tt.backend, tt.method)
			if !strings.Contains(string(ex.Body), tt.wantBody) {
				t.Fatalf("backend body %s lacks %s", ex.Body, tt.wantBody)
			}
			if got := ex.Header.Get("Mcp-Name"); got != tt.wantName {
				t.Fatalf("Mcp-Name = %q, want %q", got, tt.wantName)
			}
		})
	}
}

func TestCallRewritesResourceURIsInToolResults(t *testing.T) {
	linker := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ResourceLink{URI: "file:///etc/motd", Name: "motd"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://readme", Text: "x"}},
			&mcp.TextContent{Text: `a text mentioning "uri":"file:///x"`},
		}}, nil
	}
	tool := &mcp.Tool{Name: "links", InputSchema: map[string]any{"type": "object"}}
	r, _, _ := twoBackends(t, []mcptest.Option{mcptest.WithTool(tool, linker)}, nil, nil)
	res := callOnce(t, r, MethodToolsCall, "alpha__links", KindTool, `{"_meta":`+upstreamstest.Meta+`,"name":"alpha__links"}`)
	for _, c := range []struct {
		got  any
		want string
	}{
		{mcptest.Path(res, "result", "content", 0, "uri"), "alpha+file:///etc/motd"},
		{mcptest.Path(res, "result", "content", 1, "resource", "uri"), "alpha+mem://readme"},
		{mcptest.Path(res, "result", "content", 2, "text"), `a text mentioning "uri":"file:///x"`},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %q (response %v)", c.got, c.want, res)
		}
	}
}

func TestCallRelaysBackendError(t *testing.T) {
	r, alpha, _ := twoBackends(t, nil, nil, nil)
	s, err := r.Call(context.Background(), &Call{
		Method: MethodToolsCall, ID: json.RawMessage(`"e1"`), Target: Target{Upstream: "alpha", Name: "nope"},
		Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `,"name":"alpha__nope"}`),
	})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	msgs := collect(t, s)
	res := decodeObject(t, msgs[len(msgs)-1])
	if mcptest.Path(res, "error", "code") == nil || mcptest.Path(res, "id") != "e1" {
		t.Fatalf("final = %v, want a JSON-RPC error with the client's id", res)
	}
	if want := lastRequest(t, alpha, MethodToolsCall).Status; s.Status() != want {
		t.Fatalf("Status() = %d, want the backend's %d", s.Status(), want)
	}
}
