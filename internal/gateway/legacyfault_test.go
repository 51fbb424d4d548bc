package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// legacyFaults are what a pre-2026 backend does to a tools/call of the tool of that name, given
// the call's id. Everything else (initialize, the session, other tools) is a real SDK server's.
var legacyFaults = map[string]func(w http.ResponseWriter, r *http.Request, id string){
	"hang":        func(_ http.ResponseWriter, r *http.Request, _ string) { <-r.Context().Done() },
	"hangheaders": func(w http.ResponseWriter, r *http.Request, _ string) { startEvents(w); <-r.Context().Done() },
	"hangmidevent": func(w http.ResponseWriter, r *http.Request, _ string) {
		startEvents(w)
		partial(w)
		<-r.Context().Done()
	},
	"hangmidjson": func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"res`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	},
	"reset":         func(w http.ResponseWriter, _ *http.Request, _ string) { resetConn(w) },
	"resetmidevent": func(w http.ResponseWriter, _ *http.Request, _ string) { startEvents(w); partial(w); resetConn(w) },
	"resetmidjson": func(w http.ResponseWriter, _ *http.Request, id string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "500")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"res`)
		resetConn(w)
	},
	"otherid": func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":"not-yours","result":{"content":[]}}`)
	},
	"both": func(w http.ResponseWriter, _ *http.Request, id string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[]},"error":{"code":1,"message":"x"}}`)
	},
	"badutf8": func(w http.ResponseWriter, _ *http.Request, id string) {
		startEvents(w)
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}\n\n")
	},
	"html500": func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(500)
	},
	"redirect": func(w http.ResponseWriter, r *http.Request, _ string) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	},
	"liar": func(w http.ResponseWriter, _ *http.Request, id string) { // says JSON, sends an event stream
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[]}}\n\n")
	},
}

func startEvents(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func partial(w http.ResponseWriter) {
	io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",")
	w.(http.Flusher).Flush()
}

// resetConn drops the connection with a TCP reset, whatever was written before.
func resetConn(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// startLegacyFaults fronts a real 2025-11-25 SDK server with the faults above.
func startLegacyFaults(t *testing.T) string {
	t.Helper()
	// The faulty tools are listed, as the gateway forwards only what a backend lists; their
	// calls never reach the server.
	var tools []mcptest.Option
	for name := range legacyFaults {
		tools = append(tools, mcptest.WithTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, noopTool))
	}
	sdk := mcptest.StartLegacyServer(t, "legacy", tools...)
	target, err := url.Parse(sdk.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name string }
		}
		_ = json.Unmarshal(body, &m)
		if f, ok := legacyFaults[m.Params.Name]; ok && m.Method == "tools/call" {
			f(w, r, string(m.ID))
			return
		}
		r.Body, r.URL.Path = io.NopCloser(bytes.NewReader(body)), target.Path
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(front.CloseClientConnections)
	return front.URL + "/mcp"
}

// TestLegacyBackendFaults: a pre-2026 backend that hangs or resets before its headers, after
// them, in the middle of a JSON body or of an event, answers under another id, with a result
// and an error at once, with invalid UTF-8, with an HTML 500, a redirect or a Content-Type
// that lies, is answered to a 2026-07-28 client with a JSON-RPC error of the class
// docs/protocol.md §2.3 gives the fault (-32011 and 504 for a timeout, -32010 and 502
// otherwise) whose message names neither the backend nor its address, within the backend's
// timeout; the same
// backend's healthy tool works right after each fault (its session is not poisoned), and no
// goroutine is left behind once everything is closed.
func TestLegacyBackendFaults(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	client := &http.Client{Transport: &http.Transport{}, Timeout: 20 * faultTimeout}
	t.Cleanup(client.CloseIdleConnections)
	backendURL := startLegacyFaults(t)
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = []UpstreamConfig{{UpstreamConfig: upstreams.UpstreamConfig{Name: "legacy", URL: backendURL,
			Protocol: "2025-11-25", Timeout: faultTimeout, Breaker: upstreams.BreakerConfig{Disabled: true}}}}
	})
	gwURL := "http://" + gw.MCP + "/mcp"
	host := strings.TrimPrefix(strings.TrimSuffix(backendURL, "/mcp"), "http://")
	timeout, invalid := is(504, false, -32011), is(502, false, -32010)
	for _, tt := range []struct {
		fault string
		ok    func(outcome) bool
	}{
		{"hang", timeout}, {"hangheaders", timeout}, {"hangmidevent", timeout}, {"hangmidjson", timeout},
		{"reset", invalid}, {"resetmidevent", invalid}, {"resetmidjson", invalid},
		{"otherid", invalid}, {"both", invalid}, {"badutf8", invalid}, {"html500", invalid},
		{"redirect", invalid}, {"liar", invalid},
	} {
		o, err := faultCall(client, gwURL, "legacy__"+tt.fault, "x")
		if err != nil || !tt.ok(o) || strings.Contains(o.msg, host) || strings.Contains(o.msg, "legacy") {
			t.Errorf("%s: %+v %v", tt.fault, o, err)
		}
		if o, err := faultCall(client, gwURL, "legacy__echo", "after "+tt.fault); err != nil || o.text != "after "+tt.fault {
			t.Errorf("the healthy tool after %s: %+v %v", tt.fault, o, err)
		}
	}
}
