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
	return streamingBackend(t, "chatty", func() []string {
		events := []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"first"}}`}
		events = append(events, offCallNotes...)
		return append(events, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"logged"}}`)
	})
}

// streamingBackend is a 2026-07-28 backend named name with one tool, talk, whose call streams
// the messages events gives, then its result.
func streamingBackend(t *testing.T, name string, events func() []string) *httptest.Server {
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
			_, _ = io.WriteString(w, head+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"`+name+`","version":"1"}}}`)
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, head+`,"result":{"resultType":"complete","tools":[{"name":"talk","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range append(events(), head+`,"result":{"resultType":"complete","content":[{"type":"text","text":"said"}]}}`) {
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
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
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
	// The log is written behind the requests (a queue drained in batches): stopping the gateway
	// writes out every line, a second warning too if there was one.
	stop()
	if n := strings.Count(logs.String(), "unrelated to the call"); n != 1 {
		t.Errorf("the gateway logged the dropped notifications %d times, want once per backend:\n%s", n, logs.String())
	}
}

// leveledBackend is a 2026-07-28 backend whose tool call streams a log message at each of
// levels, whatever the request asked for, then the result.
func leveledBackend(t *testing.T, levels []string) *httptest.Server {
	t.Helper()
	return streamingBackend(t, "leveled", func() []string {
		var events []string
		for _, l := range levels {
			events = append(events, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"`+l+`","data":"at `+l+`"}}`)
		}
		return events
	})
}

// A 2026-07-28 request gets a backend's log messages only when it asked for them
// (io.modelcontextprotocol/logLevel), and only at the level it asked for or a more severe one,
// whatever the backend sends: the rest are dropped and the call still ends with its result.
func TestCallStreamRelaysOnlyTheLogsAskedFor(t *testing.T) {
	t.Parallel()
	levels := []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
	backend := leveledBackend(t, levels)
	gw := startTestGatewayTo(t, &mcptest.LogBuffer{}, func(c *Config) {
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "leveled", URL: backend.URL + "/mcp", Protocol: "2026-07-28", Timeout: 5 * time.Second}}}
	})
	const metaHead = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	for _, tc := range []struct {
		meta string   // the request's _meta after metaHead
		want []string // the levels relayed, in order
	}{
		{"", nil},
		{`,"io.modelcontextprotocol/logLevel":"debug"`, levels},
		{`,"io.modelcontextprotocol/logLevel":"warning"`, levels[3:]},
		{`,"io.modelcontextprotocol/logLevel":"emergency"`, levels[7:]},
	} {
		notes := talk(t, gw, "leveled", metaHead+tc.meta)
		var relayed []string
		for _, m := range notes {
			var v struct {
				Method string `json:"method"`
				Params struct {
					Level string `json:"level"`
				} `json:"params"`
			}
			_ = json.Unmarshal(m, &v)
			relayed = append(relayed, v.Method+" "+v.Params.Level)
		}
		var want []string
		for _, l := range tc.want {
			want = append(want, "notifications/message "+l)
		}
		if strings.Join(relayed, ",") != strings.Join(want, ",") {
			t.Errorf("%q: client received %q, want %q", tc.meta, relayed, want)
		}
	}
}

// talk calls backend's tool talk through gw with the _meta members meta, and returns the
// messages relayed before the call's result, failing unless the call ends with its result.
func talk(t *testing.T, gw Listeners, backend, meta string) []json.RawMessage {
	t.Helper()
	tool := backend + "__talk"
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{` + meta + `},"name":"` + tool + `","arguments":{}}}`
	status, _, got := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/call", tool), body)
	if status != http.StatusOK {
		t.Fatalf("%q: status %d: %s", meta, status, got)
	}
	msgs := legacyclient.SSEMessages([]byte(got))
	if strings.HasPrefix(got, "{") {
		msgs = []json.RawMessage{json.RawMessage(got)} // nothing relayed before the result: a JSON answer
	}
	if len(msgs) == 0 || !strings.Contains(string(msgs[len(msgs)-1]), `"said"`) {
		t.Fatalf("%q: the call did not end with its result: %s", meta, got)
	}
	return msgs[:len(msgs)-1]
}

// A request gets a backend's progress only under its own progressToken, as its client ties a
// progress notification to a request by that token alone: the same string or integer (as a
// response's id is matched), named exactly and once. Progress under another token, which would
// tell the client of another of its requests (perhaps one to another backend), under a token
// of another type, under a name spelt in another case, or with the name given twice, is dropped,
// and a request without a token gets none; the call still ends with its result.
func TestCallStreamRelaysOnlyItsOwnProgress(t *testing.T) {
	t.Parallel()
	progress := func(params string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{` + params + `,"progress":1}}`
	}
	backend := streamingBackend(t, "busy", func() []string {
		return []string{
			progress(`"progressToken":"q","message":"another request's"`),
			progress(`"progressToken":7,"message":"a number"`),
			progress(`"progressToken":"P","message":"another case"`),
			progress(`"ProgressToken":"p","message":"the name in another case"`),
			progress(`"progressToken":"p","ProgressToken":"q","message":"the name twice"`),
			progress(`"progressToken":"p","message":"own"`),
			progress(`"progressToken":"\u0070","message":"own, escaped"`),
			progress(`"progressToken":8,"message":"own number"`),
			progress(`"progressToken":"8","message":"a string for the number"`),
		}
	})
	gw := startTestGatewayTo(t, &mcptest.LogBuffer{}, func(c *Config) {
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "busy", URL: backend.URL + "/mcp", Protocol: "2026-07-28", Timeout: 5 * time.Second}}}
	})
	const metaHead = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	for _, tc := range []struct {
		meta string   // the request's _meta after metaHead
		want []string // the messages of the progress relayed, in order
	}{
		{"", nil},
		{`,"progressToken":"p"`, []string{"own", "own, escaped"}},
		{`,"progressToken":8`, []string{"own number"}},
		{`,"progressToken":"z"`, nil},
	} {
		var relayed []string
		for _, m := range talk(t, gw, "busy", metaHead+tc.meta) {
			var v struct {
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			}
			_ = json.Unmarshal(m, &v)
			relayed = append(relayed, v.Params.Message)
		}
		if strings.Join(relayed, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q: client received progress %q, want %q", tc.meta, relayed, tc.want)
		}
	}
}
