package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// shapeBackend is a modern backend (raw: no SDK server sends these shapes) that answers every
// request, under its id, with the result it holds for the request's method (server/discover's by default), as
// JSON, or as an event stream led by a progress notification when sse is set.
type shapeBackend struct {
	results map[string]string
	sse     bool
}

func (b *shapeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	result, ok := b.results[r.Header.Get("Mcp-Method")]
	if list, listed := shapeLists[r.Header.Get("Mcp-Method")]; !ok && listed {
		result, ok = list, true // the gateway calls only what the backend lists
	}
	if !ok {
		result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},` +
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}},"ttlMs":0,"cacheScope":"private"}`
	}
	msg := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
	if !b.sse {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, sseEvent(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)+sseEvent(msg))
}

// shapeLists are a shapeBackend's lists: the tool and the prompt its tests call, both t.
var shapeLists = map[string]string{
	"tools/list":   `{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object"}}]}`,
	"prompts/list": `{"resultType":"complete","prompts":[{"name":"t"}]}`,
}

// shapeGateway serves a gateway over one raw backend be, pinned to 2026-07-28.
func shapeGateway(t *testing.T, b *shapeBackend) string {
	t.Helper()
	be := httptest.NewServer(b)
	t.Cleanup(be.Close)
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := mrtr.New(testStateSealer(t), mrtr.Config{}, replays, nil)
	if err != nil {
		t.Fatal(err)
	}
	ucfg := upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "be", URL: be.URL + "/mcp", Protocol: upstreams.ProtocolVersion}}}
	_, e := testServer(t, Config{}, ucfg, upstreams.Options{}, Deps{Version: "test", MRTR: codec})
	return serveTest(t, e).URL + "/mcp"
}

// TestInvalidResultShapesRefused: a backend's result of a shape 2026-07-28 forbids reaches the
// client as a clear error (-32010, "Backend sent an invalid result: ..."), never relayed: not an
// object (which upstreams already refuses as an invalid response), an unknown resultType, input_required that asks nothing or answers a method that
// cannot ask, and a task result to a request that did not declare the tasks extension
// (escaped spellings included). The well-formed ones pass, a task result included when the
// request declared the extension.
func TestInvalidResultShapesRefused(t *testing.T) {
	const declared = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	task := `{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-08-01T00:00:00Z","lastUpdatedAt":"2026-08-01T00:00:00Z","ttlMs":null}`
	for _, tt := range []struct {
		name, method, result, meta, refusal string
	}{
		{"a string", "tools/call", `"done"`, "", "invalid res"},
		{"an array", "tools/call", `[{"type":"text","text":"x"}]`, "", "invalid res"},
		{"null", "tools/call", `null`, "", "invalid res"},
		{"unknown resultType", "tools/call", `{"resultType":"partial","content":[]}`, "", "resultType"},
		{"resultType not a string", "tools/call", `{"resultType":1,"content":[]}`, "", "resultType"},
		{"input_required asking nothing", "tools/call", `{"resultType":"input_required"}`, "", "neither inputRequests nor requestState"},
		{"input_required with empty inputRequests", "prompts/get", `{"resultType":"input_required","inputRequests":{}}`, "", "neither inputRequests nor requestState"},
		{"input_required, inputRequests not an object", "tools/call", `{"resultType":"input_required","inputRequests":[],"requestState":"s"}`, "", "must be an object"},
		{"input_required to a completion", "completion/complete", `{"resultType":"input_required","requestState":"s"}`, "", "only tools/call, prompts/get and resources/read"},
		{"task undeclared", "tools/call", task, "", "io.modelcontextprotocol/tasks"},
		{"task escaped, undeclared", "tools/call", strings.Replace(task, `"task"`, `"\u0074ask"`, 1), "", "io.modelcontextprotocol/tasks"},
		{"task to a prompt", "prompts/get", task, declared, "io.modelcontextprotocol/tasks"},
		// A member the gateway reads by its exact name, spelt another way, is that member to a
		// client whose decoder folds case or punctuation (Go's encoding/json, .NET's).
		{"resultType spelt another way", "tools/call", strings.Replace(task, `"resultType":"task"`, `"resultType":"complete","ResultType":"task"`, 1), "", "spells resultType"},
		{"requestState spelt another way", "tools/call", `{"resultType":"complete","content":[],"RequestState":"backend-state"}`, "", "spells requestState"},
		{"requestState with punctuation", "tools/call", `{"resultType":"input_required","requestState":"s","request_state":"raw"}`, "", "spells requestState"},
		{"inputRequests spelt another way", "prompts/get", `{"resultType":"input_required","requestState":"s","INPUTREQUESTS":{"a":{}}}`, "", "spells inputRequests"},
		{"resultType in long s", "tools/call", `{"re\u017fultType":"input_required","content":[]}`, "", "spells resultType"},
		{"_meta a string", "tools/call", `{"resultType":"complete","content":[],"_meta":"x"}`, "", "_meta must be an object"},
		{"_meta an array", "tools/call", `{"content":[],"_meta":[{"a":1}]}`, "", "_meta must be an object"},
		{"_meta a number", "prompts/get", `{"messages":[],"_meta":0}`, "", "_meta must be an object"},
		{"_meta false", "tools/call", `{"content":[],"_meta":false}`, "", "_meta must be an object"},
		{"_meta null", "tools/call", `{"resultType":"complete","content":[],"_meta":null}`, "", ""},
		{"complete", "tools/call", `{"resultType":"complete","content":[]}`, "", ""},
		{"complete with kindred names", "tools/call", `{"resultType":"complete","content":[],"resultTypes":[],"state":"x","requests":{}}`, "", ""},
		{"complete escaped", "tools/call", `{"resultType":"\u0063omplete","content":[]}`, "", ""},
		{"no resultType", "tools/call", `{"content":[]}`, "", ""},
		{"input_required with state only", "tools/call", `{"resultType":"input_required","requestState":"shed"}`, "", ""},
		{"task declared", "tools/call", task, declared, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := shapeGateway(t, &shapeBackend{results: map[string]string{tt.method: tt.result}})
			meta := mcptest.Meta
			if tt.meta != "" {
				meta = tt.meta
			}
			extra, name := `,"name":"be__t","arguments":{}`, "be__t"
			if tt.method == "completion/complete" {
				extra, name = `,"ref":{"type":"ref/prompt","name":"be__t"},"argument":{"name":"a","value":"b"}`, ""
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"` + tt.method + `","params":{` + meta + extra + `}}`
			r := mcptest.Do(t, http.MethodPost, url, mcptest.RequestHeaders(tt.method, name), body)
			if tt.refusal == "" {
				if r.Status != http.StatusOK || r.RPC.Error != nil {
					t.Fatalf("a well-formed result was refused: %d %s", r.Status, r.Body)
				}
				// Its _meta, null or absent included, is an object with the gateway's serverInfo.
				var res struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				}
				if json.Unmarshal(r.RPC.Result, &res) != nil || res.Meta["io.modelcontextprotocol/serverInfo"] == nil {
					t.Errorf("relayed result %s has no _meta object with the gateway's serverInfo", r.RPC.Result)
				}
				return
			}
			mcptest.CheckRPC(t, r, -32010)
			if r.Status != http.StatusBadGateway || !strings.Contains(r.RPC.Error.Message, "Backend sent an invalid ") ||
				!strings.Contains(r.RPC.Error.Message, tt.refusal) {
				t.Fatalf("HTTP %d %s, want 502 saying %q", r.Status, r.Body, tt.refusal)
			}
		})
	}
}

// TestInvalidResultSDKClient: a go-sdk client reads the refusal of an unknown resultType as the
// JSON-RPC error it is (on the stream the backend's progress opened), and a task result as a
// result when it declared the tasks extension.
func TestInvalidResultSDKClient(t *testing.T) {
	url := shapeGateway(t, &shapeBackend{sse: true, results: map[string]string{"tools/call": `{"resultType":"partial","content":[]}`}})
	call := &mcp.CallToolParams{Name: "be__t", Arguments: map[string]any{}}
	call.SetProgressToken("p") // the token the backend's progress reports under
	_, err := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2026-07-28")).CallTool(context.Background(), call)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != -32010 || !strings.Contains(e.Message, "Backend sent an invalid result") {
		t.Fatalf("err = %v, want -32010 saying the result was invalid", err)
	}
	url = shapeGateway(t, &shapeBackend{sse: true, results: map[string]string{"tools/call": `{"resultType":"task","taskId":"t1","status":"working",` +
		`"createdAt":"2026-08-01T00:00:00Z","lastUpdatedAt":"2026-08-01T00:00:00Z","ttlMs":null}`}})
	cs := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2026-07-28"), mcptest.WithCapabilities(&mcp.ClientCapabilities{
		Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}))
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "be__t", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("a task result to a client that declared the extension: %v", err)
	}
}
