package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestPinBlockedForEveryMethod: an item whose pin blocks it is refused by every method that
// names it (tools/call of the tool; prompts/get and completion/complete with ref/prompt of the
// prompt; resources/read of a URI under the template and completion/complete with
// ref/resource of the template), with 403 / -32013 naming pin drift, and the backend receives
// none of those requests. Completion of an item whose drift only asks for confirmation is
// forwarded: completions are typed interactively and have no one to ask.
func TestPinBlockedForEveryMethod(t *testing.T) {
	files := mcptest.StartServer(t, "files", mcptest.WithTool(tool("t", "Touch a file.", nil, nil), noopTool))
	p := startPinned(t, confirmTextPins(&pins.Config{LockFile: pinLock(t, files)}), nil, files)
	call := func(method, name, params string) (int, rpcResult) {
		t.Helper()
		status, hdr, body := post(t, "http://"+p.gw.MCP+"/mcp", modernHeaders(method, name),
			`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+elicitMeta+`,`+params+`}}`)
		if strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
			body = string(mcptest.LastSSEData([]byte(body)))
		}
		var r rpcResult
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %d %s: %v", method, status, body, err)
		}
		return status, r
	}
	type request struct{ method, name, params string }
	requests := []request{
		{"tools/call", "files__t", `"name":"files__t","arguments":{"path":"a"}`},
		{"prompts/get", "files__" + mcptest.PromptGreet, `"name":"files__` + mcptest.PromptGreet + `","arguments":{"name":"Ada"}`},
		{"resources/read", "files+mem://items/alpha", `"uri":"files+mem://items/alpha"`},
		{"completion/complete", "", `"ref":{"type":"ref/prompt","name":"files__` + mcptest.PromptGreet + `"},"argument":{"name":"name","value":"A"}`},
		{"completion/complete", "", `"ref":{"type":"ref/resource","uri":"files+` + mcptest.TemplateItems + `"},"argument":{"name":"id","value":"a"}`},
	}
	for _, r := range requests {
		if status, res := call(r.method, r.name, r.params); status != http.StatusOK || res.Error != nil {
			t.Fatalf("%s before the change: %d %+v", r.method, status, res.Error)
		}
	}

	// Each item drifts in a way that blocks it.
	files.MCP().AddTool(tool("t", "Touch a file.", map[string]any{"path": map[string]any{"type": "string"}, "cmd": map[string]any{"type": "string"}}, nil), noopTool)
	files.MCP().AddPrompt(&mcp.Prompt{Name: mcptest.PromptGreet, Description: "Greets someone by name.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}, {Name: "secret"}}}, noopPrompt)
	files.MCP().AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: mcptest.TemplateItems, Name: "items",
		Description: "Items alpha, beta and gamma.\u200b\U000E0069", MIMEType: "text/plain"}, readText)
	_ = listNames(t, p.gw, "tools/list")
	_ = listNames(t, p.gw, "prompts/list")
	_ = templateNames(t, p.gw)
	files.Reset()
	for _, r := range requests {
		status, res := call(r.method, r.name, r.params)
		if status != http.StatusForbidden || res.Error == nil || res.Error.Code != -32013 || !strings.Contains(res.Error.Message, "pin drift") {
			t.Errorf("%s %s of a blocked item: %d %+v, want 403 -32013 naming pin drift", r.method, r.params, status, res.Error)
		}
	}
	for _, m := range []string{"tools/call", "prompts/get", "resources/read", "completion/complete"} {
		if n := len(files.RequestsOf(m)); n != 0 {
			t.Errorf("the backend received %d %s request(s) naming a blocked item", n, m)
		}
	}

	// The prompt's text changes instead (confirm): its completion is served.
	files.MCP().AddPrompt(&mcp.Prompt{Name: mcptest.PromptGreet, Description: "Greets someone by name, warmly.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}}}, noopPrompt)
	_ = listNames(t, p.gw, "prompts/list")
	if status, res := call(requests[3].method, "", requests[3].params); status != http.StatusOK || res.Error != nil || len(files.RequestsOf("completion/complete")) != 1 {
		t.Errorf("completion of a prompt whose text changed: %d %+v, backend completions %d", status, res.Error, len(files.RequestsOf("completion/complete")))
	}
}
