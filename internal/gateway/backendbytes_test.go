package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// opaqueLiterals are string literals a backend may write for a value only it reads (a
// requestState, a list cursor), spelt so that decoding and re-encoding gives other bytes: lone
// and reversed surrogate escapes (decoded to U+FFFD), escapes of characters that need none,
// upper-case hex, raw separators and a raw byte that is not UTF-8.
var opaqueLiterals = []string{
	`"\ud800"`, `"x\udc00\ud800y"`, `"\uD83D\uDE00"`, `"\u0041\/\u002f"`, `"<\u003c&"`,
	"\"\u2028\u2029\"",
}

// opaqueBackend is a 2026-07-28 backend written for the test that hands out opaqueLiterals as
// its tools/list cursors and as the requestState of its tool "ask" (argument i picks the
// literal), and records the raw bytes each one came back as.
type opaqueBackend struct {
	srv *httptest.Server

	mu      sync.Mutex
	cursors []string // the raw cursor of each paged tools/list request
	states  []string // the raw requestState of each retried call
}

func startOpaqueBackend(t *testing.T) *opaqueBackend {
	t.Helper()
	ob := &opaqueBackend{}
	ob.srv = httptest.NewServer(http.HandlerFunc(ob.serve))
	t.Cleanup(ob.srv.Close)
	return ob
}

func (ob *opaqueBackend) upstream() UpstreamConfig {
	return UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "ob", URL: ob.srv.URL + "/mcp", Protocol: "2026-07-28", Timeout: 5 * time.Second}}
}

func (ob *opaqueBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor       json.RawMessage `json:"cursor"`
			RequestState json.RawMessage `json:"requestState"`
			Arguments    struct{ I int } `json:"arguments"`
		} `json:"params"`
	}
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := &req.Params
	var result string
	switch req.Method {
	case "server/discover":
		result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}`
	case "tools/list":
		// Page 0 has no cursor; page k+1 is asked for with opaqueLiterals[k], in its bytes.
		page := 0
		if p.Cursor != nil {
			ob.mu.Lock()
			ob.cursors = append(ob.cursors, string(p.Cursor))
			ob.mu.Unlock()
			if page = slices.Index(opaqueLiterals, string(p.Cursor)) + 1; page == 0 {
				_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad cursor"}}`, req.ID)
				return
			}
		}
		result = `{"tools":[{"name":"ask","inputSchema":{"type":"object"}},{"name":"t` + strconv.Itoa(page) + `","inputSchema":{"type":"object"}}]`
		if page < len(opaqueLiterals) {
			result += `,"nextCursor":` + opaqueLiterals[page]
		}
	case "tools/call":
		if p.RequestState != nil {
			ob.mu.Lock()
			ob.states = append(ob.states, string(p.RequestState))
			ob.mu.Unlock()
			result = `{"content":[{"type":"text","text":"done"}]`
			break
		}
		result = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"mode":"form","message":"Go on?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":` + opaqueLiterals[p.Arguments.I]
	}
	w.Header().Set("Content-Type", "application/json")
	if result == "" {
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
		return
	}
	if !bytes.Contains([]byte(result), []byte(`"resultType"`)) {
		result += `,"resultType":"complete"`
	}
	_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}}`, req.ID, result)
}

// TestBackendOpaqueValuesKeepTheirBytes: what a backend hands out for only itself to read (its
// requestState, carried sealed through the client; its list cursors, followed by the gateway)
// comes back to it byte for byte as its JSON spelt it, not as the gateway would re-encode the
// decoded string, for every spelling in opaqueLiterals.
func TestBackendOpaqueValuesKeepTheirBytes(t *testing.T) {
	ob := startOpaqueBackend(t)
	gw := startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Upstreams = []UpstreamConfig{ob.upstream()}
		c.HealthInterval = time.Hour
	})

	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	names := toolNames(t, cs)
	for page := range len(opaqueLiterals) + 1 {
		if !slices.Contains(names, "ob__t"+strconv.Itoa(page)) {
			t.Errorf("page %d of the backend's tools missing: %v (cursors sent back: %q)", page, names, ob.cursors)
		}
	}

	for i, lit := range opaqueLiterals {
		_, r := rawCall(t, gw, "", "ob__ask", `{"i":`+strconv.Itoa(i)+`}`, "")
		if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
			t.Fatalf("%q: round 1: %+v", lit, r)
		}
		retry := `,"inputResponses":{"q":{"action":"accept","content":{}}},"requestState":"` + r.Result.RequestState + `"`
		if _, r := rawCall(t, gw, "", "ob__ask", `{"i":`+strconv.Itoa(i)+`}`, retry); r.Error != nil || r.Result.ResultType != "complete" {
			t.Fatalf("%q: retry: %+v", lit, r)
		}
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if !slices.Equal(ob.states, opaqueLiterals) {
		t.Errorf("requestStates came back as\n%q\nwant\n%q", ob.states, opaqueLiterals)
	}
}

// TestSDKBackendStateKeepsItsBytes: a go-sdk backend's requestState comes back in the spelling
// its encoder wrote (encoding/json escapes <, >, & and U+2028), not re-encoded, and the
// backend reads the string it sealed.
func TestSDKBackendStateKeepsItsBytes(t *testing.T) {
	const state = "<a>&\u2028b"
	var (
		mu  sync.Mutex
		got []string
	)
	hold := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "" {
			mu.Lock()
			got = append(got, req.Params.RequestState)
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Mode: "form", Message: "Go on?", RequestedSchema: map[string]any{"type": "object"}}},
			RequestState:  state,
		}, nil
	}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}}, hold))
	gw := startTestGateway(t, func(c *Config) { c.MRTR.Keys = testKeys }, alpha)

	_, r := rawCall(t, gw, "", "alpha__hold", `{}`, "")
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("round 1: %+v", r)
	}
	retry := `,"inputResponses":{"q":{"action":"accept","content":{}}},"requestState":"` + r.Result.RequestState + `"`
	if _, r := rawCall(t, gw, "", "alpha__hold", `{}`, retry); r.Error != nil || r.Result.ResultType != "complete" {
		t.Fatalf("retry: %+v", r)
	}
	calls := alpha.RequestsOf("tools/call")
	if len(calls) != 2 {
		t.Fatalf("%d tools/call exchanges, want 2", len(calls))
	}
	// The literal the SDK wrote, read from its response as sent.
	i := bytes.Index(calls[0].ResponseBody, []byte(`"requestState":"`))
	if i < 0 {
		t.Fatalf("no requestState in the backend's response %s", calls[0].ResponseBody)
	}
	lit := calls[0].ResponseBody[i+len(`"requestState":`):]
	lit = lit[:bytes.IndexByte(lit[1:], '"')+2]
	if bytes.Equal(lit, append(append([]byte(`"`), state...), '"')) {
		t.Fatalf("the SDK wrote %s unescaped: the test cannot tell the bytes from the string", lit)
	}
	if !bytes.Contains(calls[1].Body, append([]byte(`"requestState":`), lit...)) {
		t.Errorf("the backend wrote requestState %s; the retry carried %s", lit, calls[1].Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []string{state}) {
		t.Errorf("the backend read %q, want %q", got, state)
	}
}
