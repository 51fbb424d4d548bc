package mcptest

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the live exchanges")

// capture is one reference exchange file: run drives real peers, and every
// exchange the server recorded while it ran is written to testdata/<name>.txt.
type capture struct {
	name   string
	title  string
	legacy bool
	opts   []Option
	run    func(t *testing.T, srv *Server)
	// keep, if set, selects the exchanges written to the file.
	keep func(Exchange) bool
}

// TestCapture writes (with -update) or compares the reference exchanges in
// testdata/*.txt, so a change in what go-sdk puts on the wire fails here
// first and the integrator's golden tests keep a true reference.
func TestCapture(t *testing.T) {
	for _, c := range captures() {
		t.Run(c.name, func(t *testing.T) {
			start := StartServer
			if c.legacy {
				start = StartLegacyServer
			}
			srv := start(t, "backend", c.opts...)
			c.run(t, srv)
			exchanges := srv.Requests()
			if c.keep != nil {
				exchanges = slices.DeleteFunc(exchanges, func(ex Exchange) bool { return !c.keep(ex) })
			}
			got := render(c.title, exchanges)
			Golden(t, filepath.Join("testdata", c.name+".txt"), got, *update, "go test -run TestCapture -update")
		})
	}
}

func captures() []capture {
	return []capture{
		{name: "discover", title: "Connect: the go-sdk client's first request to a 2026-07-28 server is server/discover; no initialize follows.",
			run: func(t *testing.T, srv *Server) { Connect(t, srv.URL(), WithElicitation(Decline())) }},
		{name: "tools_list", title: "tools/list (stateless server: every response is an SSE stream unless WithJSONResponse).",
			run: afterConnect(func(t *testing.T, cs *mcp.ClientSession) error { _, err := cs.ListTools(t.Context(), nil); return err })},
		{name: "tools_call_echo", title: "tools/call echo with a non-ASCII argument: Mcp-Name carries the tool name.",
			run: callTool(&mcp.CallToolParams{Name: ToolEcho, Arguments: map[string]any{"text": "Hello, 世界"}})},
		{name: "tools_call_progress", title: "tools/call progress with _meta.progressToken: the progress notifications precede the result on the same SSE stream.",
			run: callTool(withToken(&mcp.CallToolParams{Name: ToolProgress, Arguments: map[string]any{"steps": 3}}, "tok-1"))},
		{name: "tools_call_ask_name", title: "tools/call ask_name: input_required with an elicitation, then the client's automatic retry (new id, inputResponses, requestState echoed).",
			run: func(t *testing.T, srv *Server) {
				cs := Connect(t, srv.URL(), WithElicitation(Accept(map[string]any{"name": "Ada"})))
				srv.Reset()
				mustCall(t, cs, &mcp.CallToolParams{Name: ToolAskName})
			}},
		{name: "tools_call_fail", title: "tools/call fail: an execution failure is a result with isError, HTTP 200.",
			run: callTool(&mcp.CallToolParams{Name: ToolFail})},
		{name: "tools_call_unknown", title: "tools/call of an unknown tool: go-sdk answers -32602 as HTTP 400 application/json, not in-band.",
			run: func(t *testing.T, srv *Server) {
				cs := Connect(t, srv.URL())
				srv.Reset()
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope"}); err == nil {
					t.Error("unknown tool succeeded")
				}
			}},
		{name: "prompts_get", title: "prompts/get greet: Mcp-Name carries the prompt name.",
			run: afterConnect(func(t *testing.T, cs *mcp.ClientSession) error {
				_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: PromptGreet, Arguments: map[string]string{"name": "Ada"}})
				return err
			})},
		{name: "resources", title: "resources/list, resources/templates/list, resources/read (found and not found): Mcp-Name carries the URI.",
			run: afterConnect(func(t *testing.T, cs *mcp.ClientSession) error {
				if _, err := cs.ListResources(t.Context(), nil); err != nil {
					return err
				}
				if _, err := cs.ListResourceTemplates(t.Context(), nil); err != nil {
					return err
				}
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://items/alpha"}); err != nil {
					return err
				}
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://items/zeta"}); err == nil {
					return fmt.Errorf("reading a missing item succeeded")
				}
				return nil
			})},
		{name: "completion", title: "completion/complete for the greet prompt's name argument (no Mcp-Name).",
			run: afterConnect(func(t *testing.T, cs *mcp.ClientSession) error {
				_, err := cs.Complete(t.Context(), &mcp.CompleteParams{
					Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: PromptGreet}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"},
				})
				return err
			})},
		{name: "json_response", title: "A server with WithJSONResponse: application/json bodies; the progress notifications of a stateless request cannot be delivered (NotifyProgress fails) and are lost.",
			opts: []Option{WithJSONResponse(), WithCacheHints(60000, "private")},
			run: func(t *testing.T, srv *Server) {
				cs := Connect(t, srv.URL())
				srv.Reset()
				if _, err := cs.ListTools(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
				mustCall(t, cs, withToken(&mcp.CallToolParams{Name: ToolProgress, Arguments: map[string]any{"steps": 2}}, "tok-2"))
			}},
		{name: "non_ascii_name", title: "resources/read of a non-ASCII URI: the go-sdk client sends Mcp-Name as raw UTF-8, not in the =?base64?...?= form.",
			run: func(t *testing.T, srv *Server) {
				cs := Connect(t, srv.URL())
				srv.Reset()
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mem://items/é"}); err == nil {
					t.Error("reading a missing item succeeded")
				}
			}},
		{name: "cancelled", title: "Cancelling a call's context: the go-sdk client closes the response stream and also POSTs notifications/cancelled (answered 202). Only that POST is shown; the cancelled call's own exchange is racy.",
			run: func(t *testing.T, srv *Server) {
				<-cancelSlowCall(t, srv)
				waitFor(t, srv, func(ex Exchange) bool {
					return ex.Header.Get("Mcp-Method") == "notifications/cancelled" && ex.Status != 0
				})
			},
			keep: func(ex Exchange) bool { return ex.Header.Get("Mcp-Method") == "notifications/cancelled" }},
		{name: "raw_errors", title: "Raw HTTP against the stateless server: how go-sdk v1.8.0 rejects requests a gateway must also reject.",
			run: rawErrors},
		{name: "legacy_handshake", title: "A 2025-11-25 client and the stateful server: initialize, session id, notifications/initialized, and ask_name as a server-to-client elicitation/create request on the SSE stream. Standalone GET streams are listed last.",
			legacy: true,
			run: func(t *testing.T, srv *Server) {
				cs := Connect(t, srv.URL(), WithProtocolVersion("2025-11-25"), WithElicitation(Accept(map[string]any{"name": "Ada"})))
				mustCall(t, cs, &mcp.CallToolParams{Name: ToolAskName})
				// The call's result can reach the client before the server has answered the POST
				// that carried the elicitation result; wait for that answer, or the capture races it.
				waitFor(t, srv, func(ex Exchange) bool {
					return bytes.Contains(ex.Body, []byte(`"action":"accept"`)) && ex.Status != 0
				})
				waitForStandaloneGET(t, srv)
			}},
		{name: "modern_client_legacy_server", title: "A 2026-07-28 client and the stateful server: discover is answered with legacy supportedVersions only, so the client falls back to initialize.",
			legacy: true,
			run: func(t *testing.T, srv *Server) {
				Connect(t, srv.URL())
				waitForStandaloneGET(t, srv)
			}},
	}
}

func afterConnect(f func(*testing.T, *mcp.ClientSession) error) func(*testing.T, *Server) {
	return func(t *testing.T, srv *Server) {
		cs := Connect(t, srv.URL())
		srv.Reset()
		if err := f(t, cs); err != nil {
			t.Fatal(err)
		}
	}
}

func callTool(p *mcp.CallToolParams) func(*testing.T, *Server) {
	return afterConnect(func(t *testing.T, cs *mcp.ClientSession) error {
		_, err := cs.CallTool(t.Context(), p)
		return err
	})
}

func mustCall(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) {
	t.Helper()
	if _, err := cs.CallTool(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

func withToken(p *mcp.CallToolParams, token string) *mcp.CallToolParams {
	p.SetProgressToken(token)
	return p
}

// waitForStandaloneGET waits until the legacy client's standalone SSE GET,
// which it opens in the background after initialize, has been recorded, so
// the captured file does not depend on that race.
func waitForStandaloneGET(t *testing.T, srv *Server) {
	t.Helper()
	waitFor(t, srv, func(ex Exchange) bool { return ex.Method == http.MethodGet })
}

// waitFor polls, boundedly, until an exchange matching pred is recorded.
func waitFor(t *testing.T, srv *Server, pred func(Exchange) bool) {
	t.Helper()
	const pause, attempts = 10 * time.Millisecond, 3000
	for range attempts {
		if slices.ContainsFunc(srv.Requests(), pred) {
			return
		}
		time.Sleep(pause)
	}
	t.Fatal("the expected exchange never arrived")
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rawErrors sends hand-written requests, one per rejection case.
func rawErrors(t *testing.T, srv *Server) {
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	with := func(extra map[string]string, drop ...string) map[string]string {
		h := map[string]string{}
		for k, v := range modern {
			if !slices.Contains(drop, k) {
				h[k] = v
			}
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	cases := []struct {
		method string
		header map[string]string
		body   string
	}{
		{http.MethodGet, map[string]string{"Accept": "text/event-stream"}, ""},
		{http.MethodDelete, nil, ""},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list"}), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + modernMeta + `,"name":"add","arguments":{"a":1,"b":2}}}`},
		{http.MethodPost, with(nil), `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list"}, "Mcp-Protocol-Version"), `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list"}), `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list", "Mcp-Protocol-Version": "1900-01-01"}), `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "initialize"}), `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list", "Accept": "application/json"}), `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "tools/list", "Content-Type": "text/plain"}), `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + modernMeta + `}}`},
		{http.MethodPost, with(map[string]string{"Mcp-Method": "nope/nope"}), `{"jsonrpc":"2.0","id":10,"method":"nope/nope","params":{` + modernMeta + `}}`},
	}
	for _, c := range cases {
		req, err := http.NewRequestWithContext(t.Context(), c.method, srv.URL(), strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// volatileHeaders differ between runs and are left out of the files.
func volatileHeaders() []string { return []string{"Date"} }

// render writes the exchanges in a plain text form: ">>>" starts a request,
// "<<<" its response; headers are sorted, the session id is replaced.
func render(title string, exchanges []Exchange) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# Captured from go-sdk v1.8.0 peers by TestCapture; regenerate with go test -run TestCapture -update.\n", title)
	// Standalone GET streams race with the POSTs around them; keep the
	// file stable by listing them last.
	slices.SortStableFunc(exchanges, func(a, b Exchange) int {
		return boolInt(a.Method == http.MethodGet && a.Header.Get("Mcp-Session-Id") != "") -
			boolInt(b.Method == http.MethodGet && b.Header.Get("Mcp-Session-Id") != "")
	})
	for _, ex := range exchanges {
		fmt.Fprintf(&b, "\n>>> %s %s\n", ex.Method, ex.Path)
		writeHeaders(&b, ex.Header)
		fmt.Fprintf(&b, "\n%s\n", ex.Body)
		if ex.Method == http.MethodGet && ex.Header.Get("Mcp-Session-Id") != "" {
			b.WriteString("\n<<< (long-lived stream; not captured)\n")
			continue
		}
		fmt.Fprintf(&b, "\n<<< %d\n", ex.Status)
		writeHeaders(&b, ex.ResponseHeader)
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(string(ex.ResponseBody), "\n"))
	}
	sessionID := regexp.MustCompile(`[A-Z0-9]{26}`)
	return sessionID.ReplaceAll(b.Bytes(), []byte("<session-id>"))
}

func writeHeaders(b *bytes.Buffer, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		if !slices.Contains(volatileHeaders(), name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range h[name] {
			fmt.Fprintf(b, "%s: %s\n", name, v)
		}
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}
