package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// offCallNotes are notifications a 2026-07-28 backend may send but that are about no call: on
// a call's response stream each is dropped. resources/updated names the backend's own URI,
// which no client may see un-namespaced.
var offCallNotes = []string{
	`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///etc/backend-secret"}}`,
	`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
	`{"jsonrpc":"2.0","method":"notifications/invented","params":{"x":1}}`,
	`{"jsonrpc":"2.0","method":"tools/list_changed_without_prefix"}`,
}

// chattyBackend is a 2026-07-28 backend whose tool call streams every offCallNotes entry
// between a progress notification and a log message, then the result.
func chattyBackend(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		head := `{"jsonrpc":"2.0","id":` + string(req.ID)
		switch req.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, head+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"chatty","version":"1"}}}`)
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, head+`,"result":{"resultType":"complete","tools":[{"name":"talk","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			events := []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"first"}}`}
			events = append(events, offCallNotes...)
			events = append(events, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"logged"}}`,
				head+`,"result":{"resultType":"complete","content":[{"type":"text","text":"said"}]}}`)
			for _, e := range events {
				_, _ = io.WriteString(w, "data: "+e+"\n\n")
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, head+`,"error":{"code":-32601,"message":"Method not found"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A 2026-07-28 backend's call stream carries to the client only what is about the call, its
// progress and its log messages, as a pre-2026 session's does: a resources/updated with the
// backend's own URI, list_changed notices and invented methods are dropped, the call still ends
// with its result, and the gateway says so once per backend.
func TestCallStreamDropsNotificationsOffTheCall(t *testing.T) {
	t.Parallel()
	backend := chattyBackend(t)
	logs := &mcptest.LogBuffer{}
	gw := startTestGatewayTo(t, logs, func(c *Config) {
		c.Log.Level = "warn"
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "chatty", URL: backend.URL + "/mcp", Protocol: "2026-07-28", Timeout: 5 * time.Second}}}
	})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info","progressToken":"p"},"name":"chatty__talk","arguments":{}}}`
	for round := range 2 {
		status, _, got := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/call", "chatty__talk"), body)
		if status != http.StatusOK {
			t.Fatalf("round %d: status %d: %s", round, status, got)
		}
		msgs := legacyclient.SSEMessages([]byte(got))
		var methods []string
		for _, m := range msgs {
			var v struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(m, &v)
			methods = append(methods, v.Method)
		}
		if len(msgs) != 3 || methods[0] != "notifications/progress" || methods[1] != "notifications/message" ||
			!strings.Contains(string(msgs[2]), `"said"`) {
			t.Errorf("round %d: client received %q, want the progress, the log message and the result", round, methods)
		}
		if strings.Contains(got, "backend-secret") || strings.Contains(got, "list_changed") || strings.Contains(got, "invented") {
			t.Errorf("round %d: an off-call notification reached the client: %s", round, got)
		}
	}
	// The log is written by a queue in order: both rounds' warnings, if there were two, were
	// queued before the second response was relayed.
	mcptest.WaitFor(t, "the warning", func() bool { return strings.Contains(logs.String(), "unrelated to the call") })
	if n := strings.Count(logs.String(), "unrelated to the call"); n != 1 {
		t.Errorf("the gateway logged the dropped notifications %d times, want once per backend:\n%s", n, logs.String())
	}
}
