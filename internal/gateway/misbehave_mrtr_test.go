package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/upstreams"
)

// TestBackendStateLargerThanTokens: a backend that asks for input with a requestState of its
// own larger than a requestState of the gateway may be (mrtr.maxTokenBytes, 8 KiB by default)
// gets its round refused with a 502 that says so, not the "invalid response" of a backend that
// broke the protocol; a smaller state of the same backend goes round and comes back to it byte
// for byte.
func TestBackendStateLargerThanTokens(t *testing.T) {
	asks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Name         string
				RequestState *string
			}
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		res := `{"tools":[{"name":"small","inputSchema":{"type":"object"}},{"name":"large","inputSchema":{"type":"object"}}]}`
		switch {
		case q.Method != "tools/call" && q.Method != "tools/list":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		case q.Method == "tools/call" && q.Params.RequestState != nil:
			res = `{"content":[{"type":"text","text":"` + *q.Params.RequestState + `"}]}`
		case q.Method == "tools/call":
			size := map[string]int{"small": 100, "large": 10 << 10}[q.Params.Name]
			res = `{"resultType":"input_required","inputRequests":{"x":{"method":"elicitation/create","params":{"mode":"form",` +
				`"message":"m","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"` + strings.Repeat("s", size) + `"}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(q.ID)+`,"result":`+res+`}`)
	}))
	t.Cleanup(asks.Close)
	gw := startTestGateway(t, func(c *Config) {
		c.MRTR.Keys = testKeys
		c.Upstreams = append(c.Upstreams, UpstreamConfig{UpstreamConfig: upstreams.UpstreamConfig{Name: "asks", URL: asks.URL + "/mcp", Timeout: 5 * time.Second}})
	})
	call := func(tool, retry string) (int, string) {
		status, _, body := post(t, "http://"+gw.MCP+"/mcp", modernHeaders("tools/call", "asks__"+tool),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
				`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}},"name":"asks__`+tool+`","arguments":{}`+retry+`}}`)
		return status, body
	}

	status, body := call("small", "")
	var round struct {
		Result struct{ RequestState string }
	}
	if err := json.Unmarshal([]byte(body), &round); err != nil || status != http.StatusOK || round.Result.RequestState == "" ||
		strings.Contains(round.Result.RequestState, "sss") {
		t.Fatalf("a small state: %d %s: want input_required with the backend's state sealed", status, body)
	}
	status, body = call("small", `,"requestState":"`+round.Result.RequestState+`","inputResponses":{"x":{"action":"accept","content":{}}}`)
	if status != http.StatusOK || !strings.Contains(body, `"text":"`+strings.Repeat("s", 100)+`"`) {
		t.Errorf("the small state's retry: %d %.300s: want the backend's own state back", status, body)
	}

	status, body = call("large", "")
	var e struct {
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || status != http.StatusBadGateway || e.Error.Code != -32010 ||
		!strings.Contains(e.Error.Message, "requestState is larger than the gateway carries (mrtr.maxTokenBytes)") {
		t.Errorf("a state over the token bound: %d %.300s: want 502, -32010, saying the requestState is too large", status, body)
	}
}
