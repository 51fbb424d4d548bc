package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// toolsetGateway fronts alpha and beta with a policy under which a tools:use caller may call
// every alpha tool (echo only once confirmed, add at most twice a minute) and no rule grants any
// beta tool (hidden), and
// with three tool sets: alpha-ro (echo and add), wide (everything) and search (everything, in
// search mode, with alpha__add always listed).
func toolsetGateway(t *testing.T, iss *devissuer.Issuer, alpha, beta *mcptest.Server) Listeners {
	t.Helper()
	return startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.PageSize = 2
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "echo-confirm", Upstream: "alpha", Tools: []string{"echo"}, AnyScope: []string{"tools:use"}, Confirm: authz.ConfirmForm},
			{ID: "add-limited", Upstream: "alpha", Tools: []string{"add"}, AnyScope: []string{"tools:use"}, RateLimit: "2/m"},
			{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}, AnyScope: []string{"tools:use"}},
		}
		c.Toolsets = []mcphttp.ToolsetConfig{
			{Name: "alpha-ro", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo", "add", "fail"}}},
				Exclude:      []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"fail"}}},
				Instructions: "Echo and add only."},
			{Name: "wide", Include: []mcphttp.SelectorConfig{{}}},
			{Name: "search", Include: []mcphttp.SelectorConfig{{}},
				Search: mcphttp.SearchConfig{Enabled: true, AlwaysVisible: []string{"alpha__add"}}},
		}
	}, alpha, beta)
}

// TestToolsets: a set lists and calls only what it selects and the policy allows, has its own
// discover, protected resource metadata and cursors.
func TestToolsets(t *testing.T) {
	iss := newIssuer(t)
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	gw := toolsetGateway(t, iss, alpha, beta)
	base := "http://" + gw.MCP
	tok := mintFor(t, iss, "alice")
	ctx := context.Background()

	t.Run("include and exclude", func(t *testing.T) {
		cs := mcptest.Connect(t, base+"/mcp/alpha-ro", mcptest.WithBearer(tok))
		if got := toolNames(t, cs); !slices.Equal(got, []string{"alpha__add", "alpha__echo"}) {
			t.Fatalf("alpha-ro lists %v", got)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
		if err != nil || mcptest.ResultText(res) != "3" {
			t.Fatalf("add on the set: %v %+v", err, res)
		}
		alpha.Reset()
		for _, name := range []string{"alpha__fail", "alpha__whoami"} {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("%s outside the set: %v", name, err)
			}
		}
		if n := toolCalls(alpha); n != 0 {
			t.Errorf("calls outside the set reached the backend %d times", n)
		}
	})
	t.Run("a set never widens policy", func(t *testing.T) {
		cs := mcptest.Connect(t, base+"/mcp/wide", mcptest.WithBearer(tok))
		for _, n := range toolNames(t, cs) {
			if strings.HasPrefix(n, "beta__") {
				t.Errorf("wide shows %s, which policy hides", n)
			}
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("beta__echo on wide: %v", err)
		}
	})
	t.Run("cursors are per set", func(t *testing.T) {
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+tok)
		// /mcp and wide show alice the same tools: only the endpoint tells the cursors apart.
		_, _, page := post(t, base+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		var res struct {
			Result struct{ NextCursor string } `json:"result"`
		}
		if err := json.Unmarshal([]byte(page), &res); err != nil || res.Result.NextCursor == "" {
			t.Fatalf("no cursor: %v %s", err, page)
		}
		next := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + testMeta + `,"cursor":"` + res.Result.NextCursor + `"}}`
		if status, _, body := post(t, base+"/mcp", h, next); status != 200 {
			t.Fatalf("the cursor on its own endpoint: %d %s", status, body)
		}
		if status, _, body := post(t, base+"/mcp/wide", h, next); status != 400 || !strings.Contains(body, "-32602") {
			t.Fatalf("the cursor of /mcp on wide: %d %s", status, body)
		}
	})
	t.Run("discover and protected resource metadata", func(t *testing.T) {
		h := modernHeaders("server/discover", "")
		h.Set("Authorization", "Bearer "+tok)
		_, _, body := post(t, base+"/mcp/alpha-ro", h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
		if !strings.Contains(body, `"instructions":"Echo and add only."`) {
			t.Errorf("discover on alpha-ro: %s", body)
		}
		prm := get(t, base+"/.well-known/oauth-protected-resource/mcp/alpha-ro")
		if !strings.Contains(prm, `"resource":"`+strings.TrimSuffix(testResource, "/mcp")+`/mcp/alpha-ro"`) || !strings.Contains(prm, iss.URL()) {
			t.Errorf("alpha-ro metadata: %s", prm)
		}
		status, hdr, _ := post(t, base+"/mcp/alpha-ro", modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`)
		if status != 401 || !strings.Contains(hdr.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/mcp/alpha-ro") {
			t.Errorf("challenge on alpha-ro: %d %q", status, hdr.Get("WWW-Authenticate"))
		}
	})
	t.Run("a token for one set opens no other endpoint", func(t *testing.T) {
		setTok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use",
			"aud": strings.TrimSuffix(testResource, "/mcp") + "/mcp/alpha-ro"})
		h := modernHeaders("tools/list", "")
		h.Set("Authorization", "Bearer "+setTok)
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`
		if status, _, body := post(t, base+"/mcp/alpha-ro", h, list); status != 200 {
			t.Errorf("the set's own token on the set: %d %s", status, body)
		}
		for _, p := range []string{"/mcp", "/mcp/wide"} {
			if status, _, _ := post(t, base+p, h, list); status != 401 {
				t.Errorf("alpha-ro's token on %s: %d, want 401", p, status)
			}
		}
		// Another audience beside the set's does not make it a token for the gateway.
		mixed := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use",
			"aud": []string{strings.TrimSuffix(testResource, "/mcp") + "/mcp/alpha-ro", "https://elsewhere.example"}})
		h.Set("Authorization", "Bearer "+mixed)
		if status, _, _ := post(t, base+"/mcp", h, list); status != 401 {
			t.Errorf("a token for alpha-ro and elsewhere on /mcp: %d, want 401", status)
		}
		// Unless it also names the gateway's own resource: then it is a token for the gateway.
		both := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "tools:use",
			"aud": []string{strings.TrimSuffix(testResource, "/mcp") + "/mcp/alpha-ro", testResource}})
		h.Set("Authorization", "Bearer "+both)
		for _, p := range []string{"/mcp", "/mcp/wide", "/mcp/alpha-ro"} {
			if status, _, body := post(t, base+p, h, list); status != 200 {
				t.Errorf("a token for alpha-ro and the gateway on %s: %d %s", p, status, body)
			}
		}
		// The gateway's own token works on every set.
		h.Set("Authorization", "Bearer "+tok)
		if status, _, body := post(t, base+"/mcp/alpha-ro", h, list); status != 200 {
			t.Errorf("the gateway's token on alpha-ro: %d %s", status, body)
		}
	})
}

// findResult is find_tools' structured content.
type findResult struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

func findTools(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": query, "limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools %q: %v %+v", query, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var fr findResult
	if err := json.Unmarshal(b, &fr); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range fr.Tools {
		if len(tl.InputSchema) == 0 {
			t.Errorf("find_tools returned %s without its input schema", tl.Name)
		}
		names = append(names, tl.Name)
	}
	if text := mcptest.ResultText(res); !strings.Contains(text, `"tools"`) {
		t.Errorf("find_tools' text content: %q", text)
	}
	return names
}

// TestToolSearch: a real go-sdk client drives find_tools then call_tool through the gateway;
// the inner call is treated exactly as a direct call of the inner tool.
func TestToolSearch(t *testing.T) {
	iss := newIssuer(t)
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	gw := toolsetGateway(t, iss, alpha, beta)
	url := "http://" + gw.MCP + "/mcp/search"
	tok := mintFor(t, iss, "alice")
	ctx := context.Background()
	var asked string
	cs := mcptest.Connect(t, url, mcptest.WithBearer(tok), mcptest.WithElicitation(
		func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}))

	if got := toolNames(t, cs); !slices.Equal(got, []string{"find_tools", "call_tool", "alpha__add"}) {
		t.Fatalf("search tools/list: %v", got)
	}
	dh := modernHeaders("server/discover", "")
	dh.Set("Authorization", "Bearer "+tok)
	if _, _, body := post(t, url, dh, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`); !strings.Contains(body, "find_tools") {
		t.Errorf("discover on a search endpoint does not tell how to search: %s", body)
	}
	if got := findTools(t, cs, "sum two integers"); len(got) == 0 || got[0] != "alpha__add" {
		t.Errorf("find 'sum two integers': %v", got)
	}
	// beta__echo matches best of all, but alice may not call it: never returned, not even last.
	for _, q := range []string{"return text unchanged", "echo", "beta echo"} {
		got := findTools(t, cs, q)
		for _, n := range got {
			if strings.HasPrefix(n, "beta__") {
				t.Errorf("find %q returned the hidden %s", q, n)
			}
		}
		if q == "return text unchanged" && (len(got) == 0 || got[0] != "alpha__echo") {
			t.Errorf("find %q: %v", q, got)
		}
	}

	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": name, "arguments": args}})
	}
	res, err := call("alpha__add", map[string]any{"a": 2, "b": 5})
	if err != nil || mcptest.ResultText(res) != "7" {
		t.Fatalf("call_tool alpha__add: %v %+v", err, res)
	}
	// Direct calls work on a search endpoint too.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 1}}); err != nil || mcptest.ResultText(res) != "2" {
		t.Fatalf("direct alpha__add: %v %+v", err, res)
	}
	// The third add within the minute: the inner tool's rate limit applies.
	if _, err := call("alpha__add", map[string]any{"a": 1, "b": 1}); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("third add through call_tool: %v", err)
	}
	beta.Reset()
	for _, name := range []string{"beta__echo", "no__such", "call_tool", "find_tools"} {
		if _, err := call(name, map[string]any{"text": "x"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("call_tool %s: %v", name, err)
		}
	}
	if n := toolCalls(beta); n != 0 {
		t.Errorf("hidden tool reached through call_tool %d times", n)
	}
	alpha.Reset()
	res, err = call("alpha__echo", map[string]any{"text": "rm -rf"})
	if err != nil || res.IsError || mcptest.ResultText(res) != "rm -rf" {
		t.Fatalf("confirmed echo through call_tool: %v %+v", err, res)
	}
	if !strings.Contains(asked, "alpha__echo") || strings.Contains(asked, "call_tool") {
		t.Errorf("confirmation message %q does not name the inner tool", asked)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("backend received %d calls, want 1", n)
	}
	if v := metricValue(t, gw, `mcp_gateway_tool_search_calls_total{outcome="ok",tool="echo",upstream="alpha"}`); v != 1 {
		t.Errorf("call_tool metric for alpha echo = %v, want 1", v)
	}
	searches := metricValue(t, gw, `mcp_gateway_tool_searches_total{set="search"}`)
	if searches < 4 {
		t.Errorf("searches metric = %v, want at least 4", searches)
	}
	// Every find_tools observes the tools it returned, once.
	if v := metricValue(t, gw, `mcp_gateway_tool_search_hits_count{set="search"}`); v != searches {
		t.Errorf("tool_search_hits observed %v searches, tool_searches_total counted %v", v, searches)
	}
	if v := metricValue(t, gw, `mcp_gateway_tool_search_hits_sum{set="search"}`); v <= 0 {
		t.Errorf("tool_search_hits sum %v: no search returned a tool", v)
	}
	// Both sides of the context saved are counted (with seven tools, the meta-tools cost more).
	full := metricValue(t, gw, `mcp_gateway_tool_list_bytes_total{list="full",set="search"}`)
	sent := metricValue(t, gw, `mcp_gateway_tool_list_bytes_total{list="sent",set="search"}`)
	if full <= 0 || sent <= 0 {
		t.Errorf("tools/list bytes: full %v, sent %v", full, sent)
	}
}

// TestToolsetSettingsCarried: every setting of a tool set and of the default endpoint's search
// mode, written in the file, reaches the endpoint's configuration unchanged. The settings are
// enumerated by reflection, so a field added to mcphttp's types is covered without touching
// this test.
func TestToolsetSettingsCarried(t *testing.T) {
	seed := 0
	var ts mcphttp.ToolsetConfig
	fillSettings(t, reflect.ValueOf(&ts).Elem(), &seed)
	ts.Name = "set-one"
	ts.Path = "/mcp/set-one"
	ts.Search.MaxResults = 7
	for _, l := range []*[]mcphttp.SelectorConfig{&ts.Include, &ts.Exclude} {
		var sel mcphttp.SelectorConfig
		fillSettings(t, reflect.ValueOf(&sel).Elem(), &seed)
		*l = append(*l, sel)
	}
	var search mcphttp.SearchConfig
	fillSettings(t, reflect.ValueOf(&search).Elem(), &seed)
	search.MaxResults = 9

	set := map[string]any{}
	addYAML(t, set, ts)
	srv := map[string]any{}
	addYAML(t, srv, map[string]any{"search": search})
	raw, err := yaml.Marshal(map[string]any{"toolsets": []any{set}, "server": srv})
	if err != nil {
		t.Fatal(err)
	}
	c := newConfig()
	if err := decodeYAML(bytes.NewReader(raw), &c); err != nil {
		t.Fatalf("the file with every setting does not load: %v\n%s", err, raw)
	}
	_ = c.validate() // carries toolsets: into the endpoint's configuration; other blocks are unset
	if got := c.serverConfig().Toolsets; !reflect.DeepEqual(got, []mcphttp.ToolsetConfig{ts}) {
		t.Errorf("toolsets differ from the file:\n got %+v\nwant %+v\nfile:\n%s", got, ts, raw)
	}
	if !reflect.DeepEqual(c.Server.Search, search) {
		t.Errorf("server.search differs from the file:\n got %+v\nwant %+v", c.Server.Search, search)
	}
}

// TestCallToolParamHeaders: call_tool's inner call carries the Mcp-Param-* headers the inner
// tool declares, computed from the inner arguments, and the backend is told the inner name; a
// Mcp-Param-* header sent on call_tool itself is refused, as on any tool that declares none.
func TestCallToolParamHeaders(t *testing.T) {
	sb := startStructBackend(t, "m", false)
	gw := startTestGateway(t, func(c *Config) {
		c.Upstreams = []UpstreamConfig{sb.upstream()}
		c.HealthInterval = time.Hour
		c.Server.Search.Enabled = true
	})
	url := "http://" + gw.MCP + "/mcp"
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + testMeta +
		`,"name":"call_tool","arguments":{"name":"m__set_region","arguments":{"region":"eu-west"}}}}`
	status, _, body := post(t, url, modernHeaders("tools/call", "call_tool"), call)
	if status != 200 || strings.Contains(body, `"error"`) {
		t.Fatalf("call_tool m__set_region: %d %s", status, body)
	}
	got := sb.received()
	if len(got) != 1 || got[0].Target != "set_region" || got[0].Repo != "eu-west" {
		t.Fatalf("backend received %+v", got)
	}
	if h := got[0].Header.Get("Mcp-Param-Region"); h != "eu-west" {
		t.Errorf("Mcp-Param-Region at the backend = %q, want eu-west", h)
	}
	sb.reset()
	h := modernHeaders("tools/call", "call_tool")
	h.Set("Mcp-Param-Region", "us-east")
	if status, _, body := post(t, url, h, call); status != 400 || !strings.Contains(body, "not declared") {
		t.Errorf("a Mcp-Param header on call_tool: %d %s", status, body)
	}
	// The outer request's Mcp-Name must name call_tool, as for any call.
	if status, _, _ := post(t, url, modernHeaders("tools/call", "m__set_region"), call); status != 400 {
		t.Errorf("Mcp-Name naming the inner tool on the outer call: %d, want 400", status)
	}
	// find_tools declares none either: refused, never passed on to the lists it fetches.
	h = modernHeaders("tools/call", "find_tools")
	h.Set("Mcp-Param-Region", "us-east")
	find := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + testMeta +
		`,"name":"find_tools","arguments":{"query":"region"}}}`
	if status, _, body := post(t, url, h, find); status != 400 || !strings.Contains(body, "not declared") {
		t.Errorf("a Mcp-Param header on find_tools: %d %s", status, body)
	}
	if status, _, body := post(t, url, modernHeaders("tools/call", "find_tools"), find); status != 200 || strings.Contains(body, `"error"`) {
		t.Errorf("find_tools: %d %s", status, body)
	}
	if n := len(sb.received()); n != 0 {
		t.Errorf("refused calls reached the backend %d times", n)
	}
}

// TestListenOnSet: a listen on a set hears resources/updated only for resources the set selects,
// although the policy would let the caller read the others: with a backend that sends every
// listen updates for mem://hr/salaries/ceo, which the set excludes, the listener subscribed to
// mem://readme and mem://hr hears only mem://readme, and the excluded update is counted as
// hidden.
func TestListenOnSet(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	const excluded = "mem://hr/salaries/ceo"
	_ = subscribeEveryListen(alpha, []string{excluded})
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Server.WriteTimeout = 5 * time.Minute
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "docs", Upstream: "alpha", Resources: []string{"*"}, Tools: []string{"*"}, AnyScope: []string{"docs:read"}},
		}
		// listen() posts to <MCP>/mcp: the set's path ends so.
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "docs", Path: "/docs/mcp", Include: []mcphttp.SelectorConfig{{}},
			Exclude: []mcphttp.SelectorConfig{{Upstream: "alpha", Resources: []string{"mem://hr/*"}, Tools: []string{}, Prompts: []string{}}}}}
	}, alpha)
	tok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "docs:read"})
	onSet := gw
	onSet.MCP += "/docs"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := listen(t, ctx, onSet, `{"resourceSubscriptions":["alpha+mem://readme","alpha+mem://hr"]}`, tok)
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %s", ack)
	}
	heard := 0
	for i := 0; heard == 0 || droppedCount(t, gw, "hidden") == 0; i++ {
		if i == 300 {
			t.Fatalf("after %d rounds: %d updates heard, hidden drops %v", i, heard, droppedCount(t, gw, "hidden"))
		}
		for _, uri := range []string{excluded, mcptest.ResourceReadme} {
			_ = alpha.MCP().ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		for _, ev := range pending(events) {
			if !strings.Contains(ev, `"uri":"alpha+mem://readme"`) {
				t.Fatalf("the listener on the set got %s", ev)
			}
			heard++
		}
	}
}

// TestToolsetUnknownUpstream: check-config refuses a set rule naming no configured backend,
// which would leave the set silently without what it meant to select.
func TestToolsetUnknownUpstream(t *testing.T) {
	c := newConfig()
	raw := "upstreams: [{name: github, url: 'http://127.0.0.1:1/mcp'}]\n" +
		"toolsets: [{name: gh, include: [{upstream: githb}], exclude: [{upstream: 'git*'}]}]\n"
	if err := decodeYAML(strings.NewReader(raw), &c); err != nil {
		t.Fatal(err)
	}
	err := c.validate()
	if err == nil || !strings.Contains(err.Error(), `upstream "githb" matches no configured backend`) {
		t.Fatalf("validate: %v", err)
	}
	if strings.Contains(err.Error(), `"git*"`) {
		t.Errorf("a glob that matches was refused: %v", err)
	}
}

// TestMetaToolNameCollision: with search mode on, a backend whose name and the namespace
// separator begin a meta-tool's name is refused at start (check-config and serve validate
// alike), with every such backend named; without search mode, or with another separator, the
// names mean nothing special.
func TestMetaToolNameCollision(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
	}{
		{"namespace: {separator: _}\nserver: {search: {enabled: true}}\n" +
			"upstreams: [{name: find, url: 'http://127.0.0.1:1/mcp'}, {name: call, url: 'http://127.0.0.1:2/mcp'}, {name: ok, url: 'http://127.0.0.1:3/mcp'}]\n",
			[]string{`upstreams[0].name: "find"`, `would be named "find_tools"`, `upstreams[1].name: "call"`, `"call_tool"`}},
		{"namespace: {separator: _}\n" +
			"upstreams: [{name: find, url: 'http://127.0.0.1:1/mcp'}]\n" +
			"toolsets: [{name: all, include: [{}], search: {enabled: true}}]\n",
			[]string{`upstreams[0].name: "find"`}},
		{"namespace: {separator: _}\nupstreams: [{name: find, url: 'http://127.0.0.1:1/mcp'}]\n", nil},
		{"server: {search: {enabled: true}}\nupstreams: [{name: find, url: 'http://127.0.0.1:1/mcp'}]\n", nil},
	} {
		cfg := newConfig()
		if err := decodeYAML(strings.NewReader(c.raw), &cfg); err != nil {
			t.Fatal(err)
		}
		err := cfg.Complete()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want an error with %s", c.raw, err, w)
			}
		}
		if c.want == nil && err != nil && strings.Contains(err.Error(), "meta-tool") {
			t.Errorf("%s: refused: %v", c.raw, err)
		}
	}
}

// TestCallToolConfirmationBinding: a confirmation asked for a call made through call_tool is
// bound to the inner tool and its arguments, as for a direct call: its requestState retried with
// other inner arguments, another inner tool or the direct call with other arguments is refused
// and nothing reaches the backend; the confirmed call itself, through call_tool, runs once.
func TestCallToolConfirmationBinding(t *testing.T) {
	iss := newIssuer(t)
	alpha, beta := mcptest.StartServer(t, "alpha"), mcptest.StartServer(t, "beta")
	gw := toolsetGateway(t, iss, alpha, beta)
	tok := mintFor(t, iss, "alice")
	call := func(name, args, retry string) urlAsk {
		h := modernHeaders("tools/call", name)
		h.Set("Authorization", "Bearer "+tok)
		_, _, body := post(t, "http://"+gw.MCP+"/mcp/search", h,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+elicitMeta+`,"name":"`+name+`","arguments":`+args+retry+`}}`)
		var r urlAsk
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return r
	}
	via := func(inner, args string) string { return `{"name":"` + inner + `","arguments":` + args + `}` }
	asked := call("call_tool", via("alpha__echo", `{"text":"safe"}`), "")
	if asked.Result.ResultType != "input_required" || !strings.Contains(asked.Result.InputRequests["io.mcp-gateway/confirm"].Params.Message, `text="safe"`) {
		t.Fatalf("call_tool alpha__echo: %+v", asked)
	}
	approve := `,"inputResponses":{"io.mcp-gateway/confirm":{"action":"accept","content":{"approve":true}}},"requestState":"` + asked.Result.RequestState + `"`
	alpha.Reset()
	for _, c := range []struct{ name, args string }{
		{"call_tool", via("alpha__echo", `{"text":"rm -rf"}`)},
		{"call_tool", via("alpha__add", `{"a":1,"b":2}`)},
		{"alpha__echo", `{"text":"rm -rf"}`},
	} {
		if r := call(c.name, c.args, approve); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("the confirmation retried as %s %s: %+v", c.name, c.args, r)
		}
	}
	if n := toolCalls(alpha); n != 0 {
		t.Fatalf("the backend received %d calls", n)
	}
	if r := call("call_tool", via("alpha__echo", `{"text":"safe"}`), approve); r.Error != nil || len(r.Result.Content) == 0 || r.Result.Content[0].Text != "safe" {
		t.Errorf("the confirmed call: %+v", r)
	}
	if n := toolCalls(alpha); n != 1 {
		t.Errorf("the backend received %d calls, want 1", n)
	}
}
