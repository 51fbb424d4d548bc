//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The traffic of TestSecretsAndValuesStayIn, and the backends it goes to.

// flowDenyMarker in an argument makes the interceptor refuse the call.
const flowDenyMarker = "refusethis"

// flowTraffic is one client era's traffic: successes, and every way the gateway refuses.
func flowTraffic(t *testing.T, gw Listeners, token, era string, cs *canaries, out *outputs) {
	ctx := t.Context()
	answer := cs.argument("an elicitation answer " + era)
	sessions := &sessionIDs{next: http.DefaultTransport}
	client := mcptest.Connect(t, "http://"+gw.MCP+"/mcp?q="+cs.secret("the client's query string "+era),
		mcptest.WithBearer(token), mcptest.WithProtocolVersion(era), mcptest.WithRoundTripper(sessions),
		mcptest.WithHeader("Cookie", "session="+cs.secret("the client's cookie "+era)),
		// Baggage and tracestate reach the backends (docs/observability.md), never a span.
		mcptest.WithHeader("Baggage", "user="+cs.argument("the client's baggage "+era)),
		mcptest.WithHeader("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
		mcptest.WithHeader("Tracestate", "vendor="+cs.argument("the client's tracestate "+era)),
		mcptest.WithLogging(func(context.Context, *mcp.LoggingMessageRequest) {}),
		mcptest.WithElicitation(func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if schema, _ := json.Marshal(r.Params.RequestedSchema); strings.Contains(string(schema), `"name"`) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": answer}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}))
	// call calls a tool; want is what its answer must hold (a refusal's text, or a value
	// that went through), so that the traffic is known to have taken its path.
	call := func(name string, args map[string]any, ch outChannel, want string) {
		t.Helper()
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		got := fmt.Sprint(err)
		if err == nil {
			b, _ := json.Marshal(res)
			got = string(b)
		}
		out.add(ch, got)
		if !strings.Contains(got, want) {
			t.Errorf("%s: %.400s, want %q in it", name, got, want)
		}
	}
	for _, be := range []string{"alpha", "beta"} {
		v := cs.argument("a nested argument value " + era + " " + be)
		call(be+"__doc", map[string]any{"doc": map[string]any{"deep": []any{map[string]any{"v": v}}}}, outClient, "stored")
		call(be+"__doc", map[string]any{"doc": map[string]any{cs.argument("a member name " + era + " " + be): 1}}, outClient, "stored")
		v = cs.argument("a confirmed call's argument " + era + " " + be)
		call(be+"__echo", map[string]any{"text": v}, outClient, v)
		if be == "alpha" || era != "2026-07-28" { // a pre-2026 backend's mid-call ask reaches a pre-2026 client only
			call(be+"__ask_name", map[string]any{}, outClient, answer)
		}
		meta := mcp.Meta{"progressToken": cs.argument("a progress token " + era + " " + be),
			"com.example/note": cs.argument("a member of the client's _meta " + era + " " + be)}
		v = cs.argument("a value the backend's notifications echo " + era + " " + be)
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: be + "__notify", Arguments: map[string]any{"v": v}, Meta: meta})
		if b, _ := json.Marshal(res); err != nil || !strings.Contains(string(b), "notified") {
			t.Errorf("%s__notify: %v %s", be, err, b)
		}
		v = cs.argument("a value the backend's error echoes " + era + " " + be)
		call(be+"__complain", map[string]any{"text": v}, outClient, v)
		call(be+"__doc", map[string]any{"code": cs.refused("a value the schema refuses " + era + " " + be)}, outRefusal, "must match the pattern")
		call(be+"__doc", map[string]any{"doc": map[string]any{"mail": cs.refused("a value a guardrail blocks "+era+" "+be) + "@mail.example.org"}},
			outRefusal, "found pii")
		call(be+"__doc", map[string]any{cs.pathName("a member the schema refuses " + era + " " + be): 1}, outRefusal, "does not allow")
		call(be+"__doc", map[string]any{"doc": map[string]any{"v": flowDenyMarker + cs.argument("a value an interceptor refuses "+era+" "+be)}},
			outRefusal, "refused by the gateway's interceptor")
		if era == "2026-07-28" {
			flowApproval(t, gw, token, be+"__page", cs.argument("a call's argument waiting for approval "+be), out)
		}
		// A backend answering garbage that quotes the call: the gateway's refusal does not
		// quote it, whatever the way the answer is broken.
		for _, mode := range []string{"html", "status", "result", "error", "sse", "double"} {
			call(be+"__garble", map[string]any{"mode": mode, "v": cs.argument("an argument a broken answer quotes " + era + " " + be + " " + mode)},
				outClient, "")
		}
		v = cs.argument("a prompt argument " + era + " " + be)
		p, err := client.GetPrompt(ctx, &mcp.GetPromptParams{Name: be + "__greet", Arguments: map[string]string{"name": v}})
		b, _ := json.Marshal(p)
		out.add(outClient, string(b), fmt.Sprint(err))
		if !strings.Contains(string(b), v) {
			t.Errorf("prompts/get %s: %v %s", be, err, b)
		}
		c, err := client.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: be + "__greet"},
			Argument: mcp.CompleteParamsArgument{Name: "name", Value: cs.argument("a value completed " + era + " " + be)}})
		b, _ = json.Marshal(c)
		out.add(outClient, string(b), fmt.Sprint(err))
		if era != "2026-07-28" {
			out.add(outClient, fmt.Sprint(client.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})))
			// The session's subscriptions are kept in the store sealed: Redis holds none in clear.
			subscribed := cs.uri("a subscribed URI " + era + " " + be)
			if err := client.Subscribe(ctx, &mcp.SubscribeParams{URI: be + "+mem://docs/" + subscribed}); err != nil {
				t.Errorf("resources/subscribe %s: %v", be, err)
			}
		}
		v = cs.uri("a resource URI read " + era + " " + be)
		r, err := client.ReadResource(ctx, &mcp.ReadResourceParams{URI: be + "+mem://docs/" + v})
		b, _ = json.Marshal(r)
		out.add(outClient, string(b), fmt.Sprint(err))
		if err != nil {
			t.Errorf("resources/read %s: %v", be, err)
		}
		// An unknown item: the backend's own not-found error names the URI.
		r, err = client.ReadResource(ctx, &mcp.ReadResourceParams{URI: be + "+mem://items/" + cs.uri("an unknown resource URI "+era+" "+be)})
		b, _ = json.Marshal(r)
		out.add(outClient, string(b), fmt.Sprint(err))
	}
	flowSearch(t, gw, token, era, cs, out)
	for _, id := range sessions.seen() {
		cs.also("the client's session id "+era, id, outClient)
	}
}

// flowSearch searches the tools on the search endpoint and calls them through call_tool: the
// query is a value of the caller's like any argument.
func flowSearch(t *testing.T, gw Listeners, token, era string, cs *canaries, out *outputs) {
	t.Helper()
	ctx := t.Context()
	client := mcptest.Connect(t, "http://"+gw.MCP+"/mcp/search", mcptest.WithBearer(token), mcptest.WithProtocolVersion(era))
	query := "store a doc " + cs.add("a find_tools query "+era, outClient)
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": query}})
	b, _ := json.Marshal(res)
	out.add(outClient, string(b), fmt.Sprint(err))
	if !strings.Contains(string(b), "alpha__doc") {
		t.Errorf("find_tools: %v %s", err, b)
	}
	v := cs.argument("an argument through call_tool " + era)
	res, err = client.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "alpha__doc",
		"arguments": map[string]any{"doc": map[string]any{"v": v}}}})
	b, _ = json.Marshal(res)
	out.add(outClient, string(b), fmt.Sprint(err))
	if !strings.Contains(string(b), "stored") {
		t.Errorf("call_tool: %v %s", err, b)
	}
	res, err = client.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "alpha__doc",
		"arguments": map[string]any{"code": cs.refused("a value call_tool's inner schema refuses " + era)}}})
	b, _ = json.Marshal(res)
	out.add(outRefusal, string(b), fmt.Sprint(err))
}

// flowStoreDown calls what needs the store once it is gone: a confirmation, a pre-2026
// session's log level, the approval page's wait.
func flowStoreDown(t *testing.T, gw Listeners, token string, cs *canaries, out *outputs) {
	t.Helper()
	ctx := t.Context()
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		client, err := mcptest.Dial(ctx, "http://"+gw.MCP+"/mcp", mcptest.WithBearer(token), mcptest.WithProtocolVersion(era),
			mcptest.WithElicitation(mcptest.Accept(map[string]any{"approve": true})))
		if err != nil {
			out.add(outRefusal, err.Error())
			continue
		}
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": cs.refused("a call's argument while the store is down " + era)}})
		b, _ := json.Marshal(res)
		out.add(outRefusal, string(b), fmt.Sprint(err))
		out.add(outRefusal, fmt.Sprint(client.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})))
		_ = client.Close()
	}
	_, r := callWithMeta(t, gw, token, urlElicitMeta, "alpha__page", `{"v":"`+cs.refused("a call's argument for the page while the store is down")+`"}`, "")
	b, _ := json.Marshal(r)
	out.add(outRefusal, string(b))
}

// flowApproval asks for the approval page's confirmation of a call, which waits in the store
// sealed, and opens the page (without signing in) as the user would.
func flowApproval(t *testing.T, gw Listeners, token, name, value string, out *outputs) {
	t.Helper()
	_, r := callWithMeta(t, gw, token, urlElicitMeta, name, `{"v":"`+value+`"}`, "")
	b, _ := json.Marshal(r)
	out.add(outClient, string(b))
	for _, ask := range r.Result.InputRequests {
		if ask.Params.URL == "" {
			continue
		}
		// The public URL names no host of this machine; the page is served on the MCP listener.
		page := strings.Replace(ask.Params.URL, strings.TrimSuffix(testResource, "/mcp"), "http://"+gw.MCP, 1)
		_, _, body := exchange(t, http.MethodGet, page, http.Header{}, "")
		out.add(outClient, body)
		return
	}
	t.Errorf("%s: no approval asked: %s", name, b)
}

// flowMalformed sends what a careless or hostile client might, each carrying its own canary:
// credentials in the wrong shape or place, and requests the gateway refuses before any
// backend, whose refusals name what is wrong and never the value.
func flowMalformed(t *testing.T, gw Listeners, token string, cs *canaries, out *outputs) {
	t.Helper()
	body := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + testMeta + `,"name":"alpha__doc","arguments":` + args + `}}`
	}
	send := func(what string, method string, h http.Header, url, b string) {
		t.Helper()
		if url == "" {
			url = "http://" + gw.MCP + "/mcp"
		}
		status, _, got := exchange(t, method, url, h, b)
		if status == http.StatusOK && !strings.Contains(got, `"isError":true`) {
			t.Errorf("%s: accepted: %.300s", what, got)
		}
		out.add(outRefusal, got)
	}
	auth := func(v string) http.Header {
		h := modernHeaders("tools/call", "alpha__doc")
		h.Set("Authorization", v)
		return h
	}
	for _, v := range []string{
		"Bearer " + cs.secret("a bearer token that is no JWT"),
		cs.secret("a credential without a scheme"),
		"Basic " + cs.secret("a Basic credential"),
		"Bearer " + cs.secret("a JWT header") + "." + cs.secret("a JWT payload") + "." + cs.secret("a JWT signature"),
		"Bearer " + token + " " + cs.secret("a word after the token"),
		"DPoP " + token,
		"bearer  " + cs.secret("a token after two spaces"),
	} {
		send("Authorization "+v, http.MethodPost, auth(v), "", body(`{}`))
	}
	h := auth("Bearer " + token)
	h.Add("Authorization", "Bearer "+cs.secret("a second Authorization header"))
	send("two Authorization headers", http.MethodPost, h, "", body(`{}`))
	send("a token in the query", http.MethodPost, modernHeaders("tools/call", "alpha__doc"),
		"http://"+gw.MCP+"/mcp?access_token="+cs.secret("a token in the query string"), body(`{}`))
	// Without auth.dpop a DPoP header is no credential of the call: served, and not forwarded.
	h = auth("Bearer " + token)
	h.Set("DPoP", cs.secret("a DPoP proof with a Bearer token"))
	_, _, got := exchange(t, http.MethodPost, "http://"+gw.MCP+"/mcp", h, body(`{}`))
	out.add(outClient, got)

	for what, args := range map[string]string{
		"duplicate members": `{"doc":{"v":"` + cs.refused("a duplicated member's first value") + `","v":"` +
			cs.refused("a duplicated member's second value") + `"}}`,
		"a lone surrogate":          `{"doc":{"v":"` + cs.refused("a value beside a lone surrogate") + `\` + `ud800"}}`,
		"an unfinished string":      `{"doc":{"v":"` + cs.refused("a value in JSON cut short"),
		"a number out of range":     `{"doc":{"v":"` + cs.refused("a value beside a huge number") + `","n":1e999999}}`,
		"a bad escape":              `{"doc":{"v":"` + cs.refused("a value with a bad escape") + `\q"}}`,
		"a control character":       `{"doc":{"v":"` + cs.refused("a value with a raw control character") + "\x01" + `"}}`,
		"a case-folded member name": `{"DOC":{"v":"` + cs.refused("a value under a member spelt otherwise") + `"}}`,
	} {
		send(what, http.MethodPost, auth("Bearer "+token), "", body(args))
	}
	send("a forged requestState", http.MethodPost, auth("Bearer "+token), "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
		elicitMeta+`,"name":"alpha__echo","arguments":{"text":"x"},"requestState":"`+cs.secret("a forged requestState")+
		`","inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":"`+
		cs.refused("an answer to a question never asked")+`"}}}}}`)
	h = auth("Bearer " + token)
	h.Set("Mcp-Name", "alpha__"+cs.add("an Mcp-Name the body contradicts", outRefusal))
	send("Mcp-Name against the body", http.MethodPost, h, "", body(`{"doc":{"v":"`+cs.refused("an argument under a contradicted Mcp-Name")+`"}}`))
	h = auth("Bearer " + token)
	h.Set("MCP-Protocol-Version", "2025-11-25")
	h.Set("Mcp-Session-Id", cs.secret("a session id the gateway never gave"))
	send("an unknown session", http.MethodPost, h, "", body(`{}`))
	h.Set("Last-Event-ID", cs.secret("a Last-Event-ID never sent"))
	send("a GET of an unknown session", http.MethodGet, h, "", "")
}

// seenQueries records the query strings the backends were sent.
type seenQueries struct {
	mu sync.Mutex
	qs []string
}

func (s *seenQueries) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.qs
}

// sessionIDs records the Mcp-Session-Id values the gateway gives its client.
type sessionIDs struct {
	next http.RoundTripper
	mu   sync.Mutex
	ids  []string
}

func (s *sessionIDs) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.next.RoundTrip(r)
	if err == nil {
		if id := res.Header.Get("Mcp-Session-Id"); id != "" {
			s.mu.Lock()
			s.ids = append(s.ids, id)
			s.mu.Unlock()
		}
	}
	return res, err
}

func (s *sessionIDs) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids
}

// flowTools are the backends' tools beside the defaults: doc takes a document (any object)
// and a numeric code, and nothing else; complain answers a JSON-RPC error quoting its
// arguments; page needs the approval page; garble's answer is broken in the way its mode
// names, quoting the request it got. Resources mem://docs/{id} exist whatever the id.
func flowTools(queries *seenQueries) []mcptest.Option {
	docSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"doc":  {Type: "object"},
		"code": {Type: "string", Pattern: "^[0-9]+$"},
	}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	object := &jsonschema.Schema{Type: "object"}
	return []mcptest.Option{
		mcptest.WithTool(&mcp.Tool{Name: "doc", InputSchema: docSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: text("stored")}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "complain", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &sdkrpc.Error{Code: -32602, Message: "cannot take " + string(req.Params.Arguments)}
		}),
		mcptest.WithTool(&mcp.Tool{Name: "page", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: text("approved")}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "notify", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := string(req.Params.Arguments)
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: args, Data: args})
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: args})
			}
			return &mcp.CallToolResult{Content: text("notified")}, nil
		}),
		mcptest.WithTool(&mcp.Tool{Name: "garble", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: text("not garbled")}, nil
		}),
		mcptest.WithSubscriptions(),
		mcptest.WithResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://docs/{id}", Name: "docs"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a doc"}}}, nil
			}),
		mcptest.WithMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				queries.mu.Lock()
				queries.qs = append(queries.qs, r.URL.RawQuery)
				queries.mu.Unlock()
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if !bytes.Contains(body, []byte(`"name":"garble"`)) {
					next.ServeHTTP(w, r)
					return
				}
				garbleAnswer(w, body)
			})
		}),
	}
}

// garbleAnswer answers a garble call broken as its argument mode says, quoting the request.
func garbleAnswer(w http.ResponseWriter, body []byte) {
	var req struct {
		ID     json.RawMessage
		Params struct{ Arguments struct{ Mode string } }
	}
	_ = json.Unmarshal(body, &req)
	quoted, _ := json.Marshal(string(body))
	switch req.Params.Arguments.Mode {
	case "html":
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(append([]byte("<html>"), body...))
	case "status":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(body)
	case "result":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, quoted)
	case "error":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%s,"message":%s,"data":%s}}`, req.ID, quoted, quoted, quoted)
	case "sse":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, body...))
	}
}
