package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/intercept"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/internal/testsupport/intercepttest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// askBackend is a raw modern backend that ignores the capabilities forwarded to it: every
// tools/call, prompts/get and resources/read is answered with the input_required result it
// holds at the time.
type askBackend struct {
	mu     sync.Mutex
	result string
}

func (b *askBackend) set(result string) {
	b.mu.Lock()
	b.result = result
	b.mu.Unlock()
}

func (b *askBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	res := b.result
	b.mu.Unlock()
	(&shapeBackend{results: map[string]string{
		"server/discover": `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"prompts":{},"resources":{}},` +
			`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}},"ttlMs":0,"cacheScope":"private"}`,
		"tools/call": res, "prompts/get": res, "resources/read": res,
	}}).ServeHTTP(w, r)
}

// askGateway serves a gateway of cfg over the one backend b, named be, with the interceptors
// ics.
func askGateway(t *testing.T, cfg Config, b http.Handler, ics ...intercept.Config) string {
	t.Helper()
	return askGatewayWith(t, cfg, b, func(deps *Deps) {
		if len(ics) > 0 {
			deps.Interceptors = newInterceptSet(t, ics)
		}
	})
}

// askGatewayWith serves a gateway of cfg over the one backend b, named be, with the
// dependencies edit sets.
func askGatewayWith(t *testing.T, cfg Config, b http.Handler, edit func(*Deps)) string {
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
	deps := Deps{Version: "test", MRTR: codec}
	edit(&deps)
	_, e := testServer(t, cfg, ucfg, upstreams.Options{}, deps)
	return serveTest(t, e).URL + "/mcp"
}

// askCall is one way of calling the backend's item through the gateway: the method and Mcp-Name
// the client sends and the params after its _meta.
type askCall struct {
	name, method, mcpName, params string
}

var askCalls = []askCall{
	{"tools/call", "tools/call", "be__t", `,"name":"be__t","arguments":{}`},
	{"prompts/get", "prompts/get", "be__t", `,"name":"be__t"`},
	{"resources/read", "resources/read", "be+mem://x", `,"uri":"be+mem://x"`},
	{"call_tool", "tools/call", "call_tool", `,"name":"call_tool","arguments":{"name":"be__t","arguments":{}}`},
}

// post sends c's request declaring caps through the gateway at url.
func (c askCall) post(t *testing.T, url, caps string) *mcptest.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `}` + c.params + `}}`
	return mcptest.Do(t, http.MethodPost, url, mcptest.RequestHeaders(c.method, c.mcpName), body)
}

// capPaths flattens a capabilities object into the paths it declares ("sampling",
// "sampling.tools", "elicitation.url"), an empty elicitation object read as its form mode.
func capPaths(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var caps map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &caps); err != nil {
		t.Fatalf("requiredCapabilities %s: %v", raw, err)
	}
	var out []string
	for k, sub := range caps {
		if len(sub) == 0 {
			if k == "elicitation" {
				k += ".form"
			}
			out = append(out, k)
		}
		for s := range sub {
			out = append(out, k+"."+s)
		}
	}
	sort.Strings(out)
	return out
}

// TestBackendAsksOnlyWhatWasDeclared: a backend's input_required result reaches the client only
// when every request in it is one the client declared on that request it can answer; otherwise
// the client gets -32021 (HTTP 400) whose data.requiredCapabilities, an object, names what was
// asked and not declared, and nothing of the round (no inputRequests, no requestState). For
// tools/call, prompts/get, resources/read and a call through the search endpoint's call_tool,
// each kind of request (form elicitation with and without its mode, URL elicitation, sampling
// plain, with tools, with context (relayed as "none"), with both, with context "none", roots) against each
// declaration (none as {}, elicitation {} meaning form, each mode, sampling and each of its
// sub-capabilities, roots, everything).
func TestBackendAsksOnlyWhatWasDeclared(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5`
	asks := []struct {
		name, entry string
		needs       []string // every capability path the request needs
	}{
		{"form", `{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}}`, []string{"elicitation.form"}},
		{"form without mode", `{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}`, []string{"elicitation.form"}},
		{"url", `{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com/x"}}`, []string{"elicitation.url"}},
		{"sampling", `{"method":"sampling/createMessage","params":{` + msgs + `}}`, []string{"sampling"}},
		{"sampling context none", `{"method":"sampling/createMessage","params":{` + msgs + `,"includeContext":"none"}}`, []string{"sampling"}},
		{"sampling with tools", `{"method":"sampling/createMessage","params":{` + msgs + `,"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`, []string{"sampling", "sampling.tools"}},
		{"sampling with toolChoice", `{"method":"sampling/createMessage","params":{` + msgs + `,"toolChoice":{"mode":"auto"}}}`, []string{"sampling", "sampling.tools"}},
		// Context is asked of no client for a backend not trusted with it: the client gets
		// includeContext "none", which needs no sampling.context (TestBackendSamplingAsksNoContext).
		{"sampling with context", `{"method":"sampling/createMessage","params":{` + msgs + `,"includeContext":"thisServer"}}`, []string{"sampling"}},
		{"sampling with tools and context", `{"method":"sampling/createMessage","params":{` + msgs + `,"includeContext":"allServers","tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`,
			[]string{"sampling", "sampling.tools"}},
		{"roots", `{"method":"roots/list"}`, []string{"roots"}},
		{"roots with params", `{"method":"roots/list","params":{}}`, []string{"roots"}},
	}
	decls := []struct {
		caps     string
		declares []string
	}{
		{`{}`, nil},
		{`{"elicitation":{}}`, []string{"elicitation.form"}},
		{`{"elicitation":{"form":{}}}`, []string{"elicitation.form"}},
		{`{"elicitation":{"url":{}}}`, []string{"elicitation.url"}},
		{`{"elicitation":{"form":{},"url":{}}}`, []string{"elicitation.form", "elicitation.url"}},
		{`{"sampling":{}}`, []string{"sampling"}},
		{`{"sampling":{"tools":{}}}`, []string{"sampling", "sampling.tools"}},
		{`{"sampling":{"context":{}}}`, []string{"sampling", "sampling.context"}},
		{`{"sampling":{"context":{},"tools":{}}}`, []string{"sampling", "sampling.context", "sampling.tools"}},
		{`{"roots":{}}`, []string{"roots"}},
		{`{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"extensions":{}}`,
			[]string{"elicitation.form", "elicitation.url", "roots", "sampling", "sampling.context", "sampling.tools"}},
	}
	b := &askBackend{}
	url := askGateway(t, Config{Search: SearchConfig{Enabled: true, AlwaysVisible: []string{"*"}}}, b)
	for _, ask := range asks {
		b.set(`{"resultType":"input_required","inputRequests":{"k":` + ask.entry + `},"requestState":"backend-state"}`)
		for _, d := range decls {
			var missing []string
			for _, n := range ask.needs {
				if !slices.Contains(d.declares, n) {
					missing = append(missing, n)
				}
			}
			if len(missing) > 1 && missing[0] == "sampling" {
				missing = missing[1:] // sampling.tools says sampling too
			}
			for _, c := range askCalls {
				r := c.post(t, url, d.caps)
				where := ask.name + " to " + c.name + " declaring " + d.caps
				if len(missing) == 0 {
					var res struct {
						ResultType    string                     `json:"resultType"`
						InputRequests map[string]json.RawMessage `json:"inputRequests"`
					}
					if r.Status != http.StatusOK || r.RPC.Error != nil || json.Unmarshal(r.RPC.Result, &res) != nil ||
						res.ResultType != "input_required" || res.InputRequests["k"] == nil {
						t.Fatalf("%s: %d %s, want the round relayed", where, r.Status, r.Body)
					}
					if strings.Contains(ask.entry, "includeContext") && !strings.Contains(string(res.InputRequests["k"]), `"includeContext":"none"`) {
						t.Fatalf("%s: relayed %s, want includeContext none", where, res.InputRequests["k"])
					}
					continue
				}
				if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32021 || strings.Contains(string(r.Body), "backend-state") {
					t.Fatalf("%s: %d %s, want 400 -32021 and nothing of the round", where, r.Status, r.Body)
				}
				var data struct {
					Required json.RawMessage `json:"requiredCapabilities"`
				}
				if json.Unmarshal(r.RPC.Error.Data, &data) != nil || !slices.Equal(capPaths(t, data.Required), missing) {
					t.Fatalf("%s: data %s, want requiredCapabilities naming %v", where, r.RPC.Error.Data, missing)
				}
			}
		}
	}
}

// TestBackendAsksReadAsClientsRead: the entries of a backend's round are read as a client reads
// them. An entry no client can be asked (a method a server may not ask, none, an unknown
// elicitation mode, params that are not an object, an entry that is not one) is an invalid
// result (-32010, 502); a member the check reads by its exact name spelt another way (which a
// client whose decoder folds names reads instead) is one too; an escaped spelling is the member
// it decodes to; and a round with several requests names in requiredCapabilities only those not
// declared.
func TestBackendAsksReadAsClientsRead(t *testing.T) {
	form := `"message":"m","requestedSchema":{"type":"object","properties":{}}`
	msgs := `"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5`
	all := `{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{}}`
	for _, tt := range []struct {
		name, requests, caps string
		code                 int64
		want                 string // in the message, or the requiredCapabilities paths for -32021
	}{
		{"a method no server may ask", `{"k":{"method":"tools/call","params":{}}}`, all, -32010, "not one a server may ask"},
		{"no method", `{"k":{"params":{}}}`, all, -32010, "not one a server may ask"},
		{"unknown elicitation mode", `{"k":{"method":"elicitation/create","params":{"mode":"popup",` + form + `}}}`, all, -32010, "unknown elicitation mode"},
		{"params not an object", `{"k":{"method":"sampling/createMessage","params":[1]}}`, all, -32010, "not an object"},
		{"elicitation without params", `{"k":{"method":"elicitation/create"}}`, all, -32010, "without params"},
		{"entry not an object", `{"k":"roots/list"}`, all, -32010, "not an object"},
		{"mode spelt another way", `{"k":{"method":"elicitation/create","params":{"mode":"form","Mode":"url",` + form + `}}}`, `{"elicitation":{}}`, -32010, "spells mode"},
		{"method spelt another way", `{"k":{"method":"roots/list","METHOD":"sampling/createMessage","params":{` + msgs + `}}}`, `{"roots":{}}`, -32010, "spells method"},
		{"params spelt another way", `{"k":{"method":"elicitation/create","params":{` + form + `},"Params":{"mode":"url"}}}`, `{"elicitation":{}}`, -32010, "spells params"},
		{"includeContext spelt another way", `{"k":{"method":"sampling/createMessage","params":{` + msgs + `,"include_context":"allServers"}}}`, `{"sampling":{}}`, -32010, "spells includeContext"},
		{"tools spelt another way", `{"k":{"method":"sampling/createMessage","params":{` + msgs + `,"Tools":[{"name":"x","inputSchema":{"type":"object"}}]}}}`, `{"sampling":{}}`, -32010, "spells tools"},
		{"toolChoice spelt another way", `{"k":{"method":"sampling/createMessage","params":{` + msgs + `,"tool_choice":{"mode":"auto"}}}}`, `{"sampling":{}}`, -32010, "spells toolChoice"},
		{"mode escaped", `{"k":{"method":"elicitation/create","params":{"mod\u0065":"url","url":"https://example.com",` + form + `}}}`, `{"elicitation":{}}`, -32021, "elicitation.url"},
		{"url escaped", `{"k":{"method":"elicitation/create","params":{"mode":"\u0075rl","url":"https://example.com",` + form + `}}}`, `{"elicitation":{"form":{}}}`, -32021, "elicitation.url"},
		{"method escaped", `{"k":{"method":"roots\/list"}}`, `{"elicitation":{}}`, -32021, "roots"},
		{"several, one undeclared", `{"a":{"method":"elicitation/create","params":{` + form + `}},"b":{"method":"roots/list"},"c":{"method":"sampling/createMessage","params":{` + msgs + `}}}`,
			`{"elicitation":{},"roots":{}}`, -32021, "sampling"},
		{"several, none declared", `{"a":{"method":"elicitation/create","params":{"mode":"url","url":"https://example.com",` + form + `}},"b":{"method":"roots/list"}}`,
			`{"elicitation":{"form":{}}}`, -32021, "elicitation.url roots"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &askBackend{}
			b.set(`{"resultType":"input_required","inputRequests":` + tt.requests + `,"requestState":"backend-state"}`)
			r := askCalls[0].post(t, askGateway(t, Config{}, b), tt.caps)
			if r.RPC.Error == nil || int64(r.RPC.Error.Code) != tt.code || strings.Contains(string(r.Body), "backend-state") {
				t.Fatalf("%d %s, want %d and nothing of the round", r.Status, r.Body, tt.code)
			}
			if tt.code == -32010 {
				if r.Status != http.StatusBadGateway || !strings.Contains(r.RPC.Error.Message, invalidResultPrefix) || !strings.Contains(r.RPC.Error.Message, tt.want) {
					t.Fatalf("%d %s, want 502 saying %q", r.Status, r.Body, tt.want)
				}
				return
			}
			var data struct {
				Required json.RawMessage `json:"requiredCapabilities"`
			}
			if r.Status != http.StatusBadRequest || json.Unmarshal(r.RPC.Error.Data, &data) != nil || strings.Join(capPaths(t, data.Required), " ") != tt.want {
				t.Fatalf("%d %s, want 400 naming %s", r.Status, r.Body, tt.want)
			}
		})
	}
}

// TestMutatedAsksOnlyWhatWasDeclared: a round an interceptor's response phase changed is held
// to the client's declaration as it reaches the client: a form elicitation the client declared,
// mutated into a URL one it did not, is -32021 naming elicitation.url, never relayed.
func TestMutatedAsksOnlyWhatWasDeclared(t *testing.T) {
	ics := intercepttest.Start(t, []intercepttest.Interceptor{{Name: "m", Type: intercept.TypeMutation, Handle: replace(`"mode":"form"`, `"mode":"url","url":"https://example.com/x"`)}})
	b := &askBackend{}
	b.set(`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form","message":"m",` +
		`"requestedSchema":{"type":"object","properties":{}}}}},"requestState":"backend-state"}`)
	url := askGateway(t, Config{}, b, governs("m", ics.URL(), intercept.TypeMutation, "response", []string{"*"}, nil, nil))
	r := askCalls[0].post(t, url, `{"elicitation":{}}`)
	var data struct {
		Required json.RawMessage `json:"requiredCapabilities"`
	}
	if r.Status != http.StatusBadRequest || r.RPC.Error == nil || r.RPC.Error.Code != -32021 || json.Unmarshal(r.RPC.Error.Data, &data) != nil ||
		strings.Join(capPaths(t, data.Required), " ") != "elicitation.url" || strings.Contains(string(r.Body), "example.com") {
		t.Fatalf("%d %s, want 400 -32021 naming elicitation.url", r.Status, r.Body)
	}
	// Declared, the mutated round is relayed.
	if r := askCalls[0].post(t, url, `{"elicitation":{"url":{}}}`); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"mode":"url"`) {
		t.Fatalf("%d %s, want the mutated round relayed", r.Status, r.Body)
	}
}

// TestUndeclaredAskSDKClient: a go-sdk client that declared form elicitation only, calling a
// tool whose backend asks for sampling, gets the JSON-RPC error -32021 naming sampling, and its
// elicitation handler is never called.
func TestUndeclaredAskSDKClient(t *testing.T) {
	b := &askBackend{}
	b.set(`{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}},"requestState":"x"}`)
	asked := false
	cs := mcptest.Connect(t, askGateway(t, Config{}, b), mcptest.WithProtocolVersion("2026-07-28"),
		mcptest.WithElicitation(func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = true
			return &mcp.ElicitResult{Action: "decline"}, nil
		}))
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "be__t", Arguments: map[string]any{}})
	var e *sdkjsonrpc.Error
	if !errors.As(err, &e) || e.Code != -32021 || !strings.Contains(string(e.Data), `"requiredCapabilities":{"sampling":{}}`) || asked {
		t.Fatalf("err = %v (data %s), asked %v; want -32021 naming sampling, nothing asked", err, dataOf(e), asked)
	}
}

func dataOf(e *sdkjsonrpc.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Data)
}

// TestBackendURLElicitationOnlyToAWebPage: a backend's URL-mode elicitation reaches a client
// only when its url is an absolute http(s) URL with a host and no user information: the client
// opens it in a browser, where a javascript: or data: URL runs script of the backend's, a
// file: URL opens the user's own files, and a user part or a backslash shows one host and
// goes to another; none of those is a host the guardrails' link allowlist is read against.
// Anything else, and a url that is missing or not a string, is an invalid result (-32010,
// 502) that names no part of the url, and nothing of the round reaches the client. The
// pre-2026 edge reads the entries the same way (era.InputRequests).
func TestBackendURLElicitationOnlyToAWebPage(t *testing.T) {
	b := &askBackend{}
	url := askGateway(t, Config{}, b)
	caps := `{"elicitation":{"url":{}}}`
	entry := func(u string) string {
		return `{"k":{"method":"elicitation/create","params":{"mode":"url","message":"m"` + u + `}}}`
	}
	for _, bad := range []string{
		``, `,"url":null`, `,"url":1`, `,"url":{"href":"https://example.com"}`, `,"url":""`,
		`,"url":"javascript:alert(1)"`, `,"url":"JavaScript:alert(document.cookie)//https://example.com"`,
		`,"url":"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="`, `,"url":"vbscript:msgbox(1)"`,
		`,"url":"file:///etc/passwd"`, `,"url":"ftp://example.com/x"`, `,"url":"/relative/path"`, `,"url":"//example.com/x"`,
		`,"url":"https://user:secret-pw@example.com/"`, `,"url":"https://example.com@attacker.test/"`,
		`,"url":"https:\\\\attacker.test"`, `,"url":"https://example.com\\@attacker.test"`, `,"url":"https:/attacker.test"`,
		`,"url":"https:attacker.test"`, `,"url":"https://"`, `,"url":"https://exa mple.com/"`, `,"url":"https://example.com/\tx"`,
		// A host a browser reads as another than written: example.com.attacker.test, 127.0.0.1.
		`,"url":"https://example.com%E3%80%82attacker.test/"`, `,"url":"http://0x7f.1/approve"`, `,"url":"https://ＥＸＡＭＰＬＥ.com/"`,
	} {
		b.set(`{"resultType":"input_required","inputRequests":` + entry(bad) + `,"requestState":"backend-state"}`)
		r := askCalls[0].post(t, url, caps)
		if r.Status != http.StatusBadGateway || r.RPC.Error == nil || r.RPC.Error.Code != -32010 ||
			!strings.Contains(r.RPC.Error.Message, "url") || strings.Contains(string(r.Body), "backend-state") ||
			strings.Contains(string(r.Body), "attacker") || strings.Contains(string(r.Body), "secret-pw") {
			t.Errorf("url member %s: %d %s, want 502 -32010 naming the url, and nothing of the round", bad, r.Status, r.Body)
		}
	}
	for _, good := range []string{`https://example.com/login?x=1#y`, `HTTPS://Example.COM`, `http://127.0.0.1:8080/approve`, `https://[::1]:8443/`} {
		b.set(`{"resultType":"input_required","inputRequests":` + entry(`,"url":"`+good+`"`) + `,"requestState":"backend-state"}`)
		r := askCalls[0].post(t, url, caps)
		if r.Status != http.StatusOK || r.RPC.Error != nil || !strings.Contains(string(r.RPC.Result), good) {
			t.Errorf("url %s: %d %s, want the round relayed", good, r.Status, r.Body)
		}
	}
}
