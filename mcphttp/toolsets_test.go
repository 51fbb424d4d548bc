package mcphttp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// findNames posts find_tools to url and returns the names it found.
func findNames(t *testing.T, url, query string) []string {
	t.Helper()
	return find(t, url, query).names()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSearchReindexesOnListChanged: the index is built once per catalog version, shared by
// searches, and rebuilt when a backend's list changes, so a tool it adds is found at once.
func TestSearchReindexesOnListChanged(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	s, e := testServer(t, Config{Search: SearchConfig{Enabled: true}}, oneBackend(be.URL()), upstreams.Options{}, Deps{})
	var builds atomic.Int32
	s.search.index.onBuild = func(int) { builds.Add(1) }
	url := serveTest(t, e).URL + DefaultPath

	r := do(t, "POST", url, modern("tools/list", ""), body("tools/list", ""))
	if !strings.Contains(string(r.Body), `"name":"find_tools"`) || strings.Contains(string(r.Body), "be__echo") {
		t.Fatalf("search-mode tools/list: %s", r.Body)
	}
	// docs/search.md: search ranks tools only; prompts and resources are listed as usual.
	for method, want := range map[string]string{"prompts/list": `"name":"be__` + mcptest.PromptGreet + `"`, "resources/list": `"name":"readme"`} {
		if r := do(t, "POST", url, modern(method, ""), body(method, "")); !strings.Contains(string(r.Body), want) {
			t.Errorf("search-mode %s: %s", method, r.Body)
		}
	}
	for range 3 {
		if got := findNames(t, url, "adds two integers"); len(got) == 0 || got[0] != "be__add" {
			t.Fatalf("find: %v", got)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d index builds for one catalog version, want 1", n)
	}
	mcp.AddTool(be.MCP(), &mcp.Tool{Name: "translate", Description: "Translates text into another language."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	s.backends.ListChanged("be", "notifications/tools/list_changed")
	if got := findNames(t, url, "translate this into French"); len(got) == 0 || got[0] != "be__translate" {
		t.Fatalf("after list_changed: %v", got)
	}
	if n := builds.Load(); n != 2 {
		t.Fatalf("%d index builds after a change, want 2", n)
	}
	// docs/search.md: the last four catalog versions stay indexed. Three more tools make
	// versions 3 to 5; removing them again returns to versions 4, 3 and 2 without a build, and
	// then to the first, which the fifth pushed out.
	step := func(change func(), wantBuilds int32) {
		t.Helper()
		change()
		s.backends.ListChanged("be", "notifications/tools/list_changed")
		findNames(t, url, "translate this into French")
		if n := builds.Load(); n != wantBuilds {
			t.Fatalf("%d index builds, want %d", n, wantBuilds)
		}
	}
	extra := []string{"extra_a", "extra_b", "extra_c"}
	for i, name := range extra {
		step(func() { mcp.AddTool(be.MCP(), &mcp.Tool{Name: name, Description: "An extra tool."}, noopTyped) }, int32(3+i))
	}
	for i := range extra {
		step(func() { be.MCP().RemoveTools(extra[len(extra)-1-i]) }, 5)
	}
	step(func() { be.MCP().RemoveTools("translate") }, 6)
}

func noopTyped(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{}, nil, nil
}

// TestToolsetValidation: check-config refuses what would make a set ambiguous or empty.
func TestToolsetValidation(t *testing.T) {
	for name, c := range map[string]Config{
		"bad name":         {Toolsets: []ToolsetConfig{{Name: "Bad Name", Include: []SelectorConfig{{}}}}},
		"duplicate name":   {Toolsets: []ToolsetConfig{{Name: "a", Include: []SelectorConfig{{}}}, {Name: "a", Path: "/x", Include: []SelectorConfig{{}}}}},
		"path of /mcp":     {Toolsets: []ToolsetConfig{{Name: "a", Path: "/mcp", Include: []SelectorConfig{{}}}}},
		"duplicate path":   {Toolsets: []ToolsetConfig{{Name: "a", Path: "/x", Include: []SelectorConfig{{}}}, {Name: "b", Path: "/x", Include: []SelectorConfig{{}}}}},
		"wildcard path":    {Toolsets: []ToolsetConfig{{Name: "a", Path: "/mcp/*", Include: []SelectorConfig{{}}}}},
		"no include":       {Toolsets: []ToolsetConfig{{Name: "a"}}},
		"empty glob":       {Toolsets: []ToolsetConfig{{Name: "a", Include: []SelectorConfig{{Tools: []string{""}}}}}},
		"too many results": {Search: SearchConfig{Enabled: true, MaxResults: 51}},
		"well-known path":  {Toolsets: []ToolsetConfig{{Name: "a", Path: "/.well-known/a", Include: []SelectorConfig{{}}}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A path some client rewrites before sending (dot segments, an empty segment, a
	// percent-escape, a character sent escaped), as a set's path or as server.path.
	for _, path := range []string{"/mcp/x/../b", "/mcp/./b", "/mcp/..", "/mcp//b", "/mcp/%62", "/mcp/%2Fb", "/mcp/\u00e9", "/mcp/a b", `/mcp/a\\b`, "/mcp/a\"b", "/mcp/a\tb"} {
		if err := (Config{Toolsets: []ToolsetConfig{{Name: "a", Path: path, Include: []SelectorConfig{{}}}}}).Validate(); err == nil ||
			!strings.Contains(err.Error(), "toolsets[0].path") {
			t.Errorf("set path %q: %v", path, err)
		}
		if err := (Config{Path: path}).Validate(); err == nil || !strings.Contains(err.Error(), "server.path") {
			t.Errorf("server.path %q: %v", path, err)
		}
	}
	for _, path := range []string{"/", "/mcp/", "/team-a/mcp", "/mcp/all-search", "/a.b/c_d~e@f"} {
		if err := (Config{Path: path}).Validate(); err != nil {
			t.Errorf("server.path %q: %v", path, err)
		}
	}
	ok := Config{Search: SearchConfig{Enabled: true, MaxResults: 50},
		Toolsets: []ToolsetConfig{{Name: "github-ro", Include: []SelectorConfig{{Upstream: "github", Tools: []string{"get_*"}}}}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
}

// TestToolsetResources: a set's public URL is its path under what the balancer puts in front of
// server.path (a path prefix), whether it sits under server.path or at a path of its own; with a
// rewriting balancer (publicURL not ending in server.path) a set under server.path follows
// publicURL.
func TestToolsetResources(t *testing.T) {
	sets := []ToolsetConfig{{Name: "ro", Include: []SelectorConfig{{}}}, {Name: "docs", Path: "/docs/mcp", Include: []SelectorConfig{{}}}}
	for _, tc := range []struct {
		public, path string
		want         []string
	}{
		{"https://h.example/mcp", "", []string{"https://h.example/mcp/ro", "https://h.example/docs/mcp"}},
		{"https://h.example/team-a/mcp", "", []string{"https://h.example/team-a/mcp/ro", "https://h.example/team-a/docs/mcp"}},
		{"https://h.example/team-a/mcp/", "/mcp/", []string{"https://h.example/team-a/mcp/ro", "https://h.example/team-a/docs/mcp"}},
		{"https://h.example/gw", "/mcp", []string{"https://h.example/gw/ro", "https://h.example/docs/mcp"}},
		{"https://h.example", "/", []string{"https://h.example/ro", "https://h.example/docs/mcp"}},
		{"", "", nil},
	} {
		got := ToolsetResources(Config{PublicURL: tc.public, Path: tc.path, Toolsets: sets})
		if !slices.Equal(got, tc.want) {
			t.Errorf("publicURL %q, path %q: %v, want %v", tc.public, tc.path, got, tc.want)
		}
	}
}

// TestToolsetSelects: include rules select, exclude rules remove; an absent list selects every
// item of its kind, an empty one none; globs match backend-side names.
func TestToolsetSelects(t *testing.T) {
	ts := &toolset{
		include: compileSelectors([]SelectorConfig{
			{Upstream: "git*", Tools: []string{"get_*", "list_?ssues"}, Prompts: []string{}},
			{Upstream: "docs"},
		}),
		exclude: compileSelectors([]SelectorConfig{{Upstream: "docs", Resources: []string{"file:///private/*"}, Tools: []string{}, Prompts: []string{}}}),
	}
	tool, prompt, res := upstreams.KindTool, upstreams.KindPrompt, upstreams.KindResource
	for _, c := range []struct {
		kind     upstreams.Kind
		up, name string
		want     bool
	}{
		{tool, "github", "get_issue", true},
		{tool, "gitlab", "list_issues", true},
		{tool, "github", "create_issue", false},
		{prompt, "github", "summarize", false},
		{res, "github", "repo://x", true},
		{tool, "docs", "anything", true},
		{res, "docs", "file:///public/a", true},
		{res, "docs", "file:///private/a", false},
		{tool, "other", "get_issue", false},
	} {
		if got := ts.selects(c.kind, upstreams.Target{Upstream: c.up, Name: c.name}); got != c.want {
			t.Errorf("%v %s/%s: %v, want %v", c.kind, c.up, c.name, got, c.want)
		}
	}
}

// TestToolsetCoversBackend: a set covers a backend (its server instructions are served on the
// set, its list_changed heard, a list of it made with a caller's own account) only when it may
// select something of it, however the rules spell "all" or "none": an exclude rule whose every
// kind is absent or holds '*' takes the whole backend, whether in one rule or several, and an
// include rule whose every list is empty selects nothing of it.
func TestToolsetCoversBackend(t *testing.T) {
	none, all := []string{}, []string{"*"}
	for _, c := range []struct {
		name             string
		include, exclude []SelectorConfig
		want             bool
	}{
		{"everything", []SelectorConfig{{}}, nil, true},
		{"excluded with no lists", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be"}}, false},
		{"excluded by tools * (prompts, resources absent: all)", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be", Tools: all}}, false},
		{"excluded by ** and *", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "b*", Tools: []string{"x_*", "**"}, Prompts: all, Resources: all}}, false},
		{"excluded over two rules", []SelectorConfig{{}}, []SelectorConfig{
			{Upstream: "be", Tools: all, Prompts: none, Resources: none}, {Upstream: "*", Tools: none, Prompts: all}}, false},
		{"prompts left", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be", Tools: all, Prompts: none}}, true},
		{"some tools left", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be", Tools: []string{"delete_*"}}}, true},
		{"excluded by *? (every name has a character)", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be", Tools: []string{"*?"}, Prompts: []string{"?*"}, Resources: []string{"*?**"}}}, false},
		{"names of one character left by *??", []SelectorConfig{{}}, []SelectorConfig{{Upstream: "be", Tools: []string{"*??"}, Prompts: none, Resources: none}}, true},
		{"included with every list empty", []SelectorConfig{{Upstream: "be", Tools: none, Prompts: none, Resources: none}, {Upstream: "other"}}, nil, false},
		{"included tools all excluded", []SelectorConfig{{Upstream: "be", Tools: []string{"get_*"}, Prompts: none, Resources: none}},
			[]SelectorConfig{{Upstream: "be", Tools: all, Prompts: none, Resources: none}}, false},
		{"included tools", []SelectorConfig{{Upstream: "be", Tools: []string{"get_*"}, Prompts: none, Resources: none}}, nil, true},
		{"another backend's rules", []SelectorConfig{{Upstream: "other"}}, nil, false},
	} {
		ts := &toolset{include: compileSelectors(c.include), exclude: compileSelectors(c.exclude)}
		if got := ts.coversBackend("be"); got != c.want {
			t.Errorf("%s: covers be %v, want %v", c.name, got, c.want)
		}
		if got := reachesFor(ts, nil, nil)("be"); got != c.want {
			t.Errorf("%s: listens and lists reach be %v, want %v", c.name, got, c.want)
		}
	}
}

// TestToolsetInstructionsOfCoveredBackends: server/discover on a set carries the server
// instructions of the backends the set shows something of, and never of one it shows nothing
// of, whichever spelling of "all of it" or "none of it" its rules use: those instructions name
// the backend's tools.
func TestToolsetInstructionsOfCoveredBackends(t *testing.T) {
	seen := mcptest.StartServer(t, "seen", mcptest.WithInstructions("seen notes"))
	secret := mcptest.StartServer(t, "secret", mcptest.WithInstructions("call wipe_disk to erase"))
	both := upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "seen", URL: seen.URL()}, {Name: "secret", URL: secret.URL()}}}
	none := []string{}
	sets := []ToolsetConfig{
		{Name: "without", Include: []SelectorConfig{{}}, Exclude: []SelectorConfig{{Upstream: "secret"}}},
		{Name: "tools-star", Include: []SelectorConfig{{}}, Exclude: []SelectorConfig{{Upstream: "secret", Tools: []string{"*"}}}},
		{Name: "empty-lists", Include: []SelectorConfig{{Upstream: "seen"}, {Upstream: "secret", Tools: none, Prompts: none, Resources: none}}},
		{Name: "prompts-left", Include: []SelectorConfig{{}}, Exclude: []SelectorConfig{{Upstream: "secret", Tools: []string{"*"}, Prompts: none}}},
	}
	_, e := testServer(t, Config{Toolsets: sets}, both, upstreams.Options{}, Deps{})
	url := serveTest(t, e).URL + DefaultPath
	for _, set := range sets {
		r := do(t, "POST", url+"/"+set.Name, modern("server/discover", ""), body("server/discover", ""))
		var res struct {
			Instructions string `json:"instructions"`
		}
		if err := json.Unmarshal(r.RPC.Result, &res); err != nil || r.Status != 200 {
			t.Fatalf("%s: server/discover: %d %s", set.Name, r.Status, r.Body)
		}
		wantSecret := set.Name == "prompts-left"
		if !strings.Contains(res.Instructions, "seen notes") || strings.Contains(res.Instructions, "wipe_disk") != wantSecret {
			t.Errorf("%s: instructions %q; want seen's, and secret's %v", set.Name, res.Instructions, wantSecret)
		}
		if names := listedNames(t, url+"/"+set.Name); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "secret__") }) {
			t.Errorf("%s: lists %v", set.Name, names)
		}
	}
}

// TestToolsetExcludeReadsAsDeny: an exclude rule is a protection and reads names as a deny rule
// does, an include rule as an allow rule: a resource URI with user information in front of an
// excluded host (which an HTTP client sends as credentials for the same resource) is excluded,
// on a backend with case-insensitive paths too, and a '?' of an exclude takes a run of bytes that
// are not UTF-8; an include never selects more for either.
func TestToolsetExcludeReadsAsDeny(t *testing.T) {
	none := []string{}
	out := []SelectorConfig{{Upstream: "*", Tools: []string{"wipe_?"}, Prompts: none,
		Resources: []string{"mem://items/*", "https://internal.example/*"}}}
	sets := map[string]*toolset{
		"everything but": {include: compileSelectors([]SelectorConfig{{}}), exclude: compileSelectors(out),
			caseless: authz.NewCaseless([]string{"mac"})},
		"only": {include: compileSelectors([]SelectorConfig{{Upstream: "*", Tools: []string{"wipe_?"}, Prompts: none,
			Resources: []string{"mem://items/*"}}})},
	}
	tool, res := upstreams.KindTool, upstreams.KindResource
	for _, c := range []struct {
		set      string
		kind     upstreams.Kind
		up, name string
		want     bool
	}{
		{"everything but", res, "be", "mem://items/alpha", false},
		{"everything but", res, "be", "mem://u@items/alpha", false},
		{"everything but", res, "be", "mem://u:p@items/alpha", false},
		{"everything but", res, "be", "https://bob:pw@internal.example/salaries", false},
		{"everything but", res, "mac", "https://bob@internal.example/Salaries", false},
		{"everything but", res, "be", "mem://other/alpha", true},
		{"everything but", tool, "be", "wipe_\xff\xfe", false},
		{"everything but", tool, "be", "wipe_ab", true},
		{"only", res, "be", "mem://items/alpha", true},
		{"only", res, "be", "mem://u@items/alpha", false},
		{"only", tool, "be", "wipe_a", true},
		{"only", tool, "be", "wipe_\xff\xfe", false},
	} {
		if got := sets[c.set].selects(c.kind, upstreams.Target{Upstream: c.up, Name: c.name}); got != c.want {
			t.Errorf("%s: %v %s/%q: %v, want %v", c.set, c.kind, c.up, c.name, got, c.want)
		}
	}
}

// TestToolsetExcludedUserinfoNeverRead: through a set excluding a backend's mem://items/*, a read
// of the same resource spelled with user information is refused as an unknown resource, and the
// backend is sent nothing.
func TestToolsetExcludedUserinfoNeverRead(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	none := []string{}
	set := ToolsetConfig{Name: "s", Include: []SelectorConfig{{}},
		Exclude: []SelectorConfig{{Upstream: "be", Resources: []string{"mem://items/*"}, Tools: none, Prompts: none}}}
	_, e := testServer(t, Config{Toolsets: []ToolsetConfig{set}}, oneBackendNamed("be", be.URL()), upstreams.Options{}, Deps{})
	url := serveTest(t, e).URL + DefaultPath + "/s"
	for _, u := range []string{"be+mem://items/alpha", "be+mem://u@items/alpha", "be+mem://u:p@items/alpha"} {
		r := do(t, "POST", url, modern("resources/read", u), body("resources/read", `,"uri":`+jsonString(u)))
		if r.RPC.Error == nil || !strings.Contains(r.RPC.Error.Message, "unknown resource") {
			t.Errorf("%s through the set: %d %s", u, r.Status, r.Body)
		}
	}
	if n := len(be.RequestsOf("resources/read")); n != 0 {
		t.Errorf("the backend was sent %d reads of an excluded resource", n)
	}
}

// TestToolsetSelectsCaseFolded: for a backend with case-insensitive paths a set's resource
// patterns match case-folded, so an exclude of file:///private/* also keeps file:///PRIVATE/a
// out of the set; other backends and other kinds are matched exactly.
func TestToolsetSelectsCaseFolded(t *testing.T) {
	ts := &toolset{
		include:  compileSelectors([]SelectorConfig{{Upstream: "*", Tools: []string{"get_*"}, Resources: []string{"file:///**"}}}),
		exclude:  compileSelectors([]SelectorConfig{{Upstream: "*", Resources: []string{"file:///private/*"}, Tools: []string{}, Prompts: []string{}}}),
		caseless: authz.NewCaseless([]string{"mac"}),
	}
	tool, res := upstreams.KindTool, upstreams.KindResource
	for _, c := range []struct {
		kind     upstreams.Kind
		up, name string
		want     bool
	}{
		{res, "mac", "file:///PRIVATE/a", false},
		{res, "mac", "file:///Private/A", false},
		{res, "mac", "file:///public/a", true},
		{res, "lin", "file:///PRIVATE/a", true}, // a backend that tells case apart: another file
		{res, "lin", "file:///private/a", false},
		{tool, "mac", "GET_x", false}, // tool names are not paths
		{tool, "mac", "get_x", true},
	} {
		if got := ts.selects(c.kind, upstreams.Target{Upstream: c.up, Name: c.name}); got != c.want {
			t.Errorf("%v %s/%s: %v, want %v", c.kind, c.up, c.name, got, c.want)
		}
	}
}

// TestSearchSameOnEveryReplica: three replicas, each with its own registry, cache and index,
// answer the same find_tools with the same bytes: no replica-local state shapes a ranking.
func TestSearchSameOnEveryReplica(t *testing.T) {
	a, b := mcptest.StartServer(t, "a"), mcptest.StartServer(t, "b")
	ucfg := upstreams.Config{Upstreams: []upstreams.UpstreamConfig{{Name: "a", URL: a.URL()}, {Name: "b", URL: b.URL()}}}
	var answers []string
	for range 3 {
		_, e := testServer(t, Config{Search: SearchConfig{Enabled: true}}, ucfg, upstreams.Options{}, Deps{})
		url := serveTest(t, e).URL + DefaultPath
		for _, q := range []string{"echo text back", "report request headers", "sleep for a while"} {
			r := do(t, "POST", url, modern("tools/call", findToolsName),
				body("tools/call", `,"name":"find_tools","arguments":{"query":`+jsonString(q)+`,"limit":4}`))
			if r.Status != 200 {
				t.Fatalf("find %q: %d %s", q, r.Status, r.Body)
			}
			answers = append(answers, string(r.RPC.Result))
		}
	}
	for i := 3; i < len(answers); i++ {
		if answers[i] != answers[i%3] {
			t.Errorf("replica %d answers differently:\n%s\n%s", i/3, answers[i], answers[i%3])
		}
	}
	// Both backends have echo: the tie is broken by name, a before b.
	if !strings.Contains(answers[0], `"a__echo"`) || strings.Index(answers[0], `"a__echo"`) > strings.Index(answers[0], `"b__echo"`) {
		t.Errorf("echo tie: %s", answers[0])
	}
}

// TestPublicBase: the gateway's paths outside server.path are placed behind the prefix that
// publicURL puts before server.path, and on publicURL's host alone when its path does not end in
// server.path.
func TestPublicBase(t *testing.T) {
	for _, tc := range []struct{ public, base, want string }{
		{"https://host/team-a/mcp", "/mcp", "https://host/team-a"},
		{"https://host/team-a/mcp/", "/mcp", "https://host/team-a"},
		{"https://host/mcp", "/mcp", "https://host"},
		{"https://host:8443/a/b/mcp", "/mcp", "https://host:8443/a/b"},
		{"https://host/gw", "/mcp", "https://host"},
		{"https://host/team-a/xmcp", "/mcp", "https://host"},
		{"", "/mcp", ""},
	} {
		if got := PublicBase(tc.public, tc.base); got != tc.want {
			t.Errorf("PublicBase(%q, %q) = %q, want %q", tc.public, tc.base, got, tc.want)
		}
	}
}

// TestServedPathsAreRegistered: every path Register routes (the endpoint, tool sets at a
// default and a chosen path, their Server Cards and the AI Catalog) is among ServedPaths, the
// list configuration checks pages against, so a page can never be given a path that one of
// these routes would take without a word.
func TestServedPathsAreRegistered(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	cfg := Config{PublicURL: "https://gw.example/mcp", ServerCard: ServerCardConfig{Enabled: true, AICatalog: true},
		Toolsets: []ToolsetConfig{{Name: "ro", Path: "/tools/ro", Include: []SelectorConfig{{Upstream: "be"}}},
			{Name: "all", Include: []SelectorConfig{{}}}}}
	_, e := testServer(t, cfg, oneBackend(be.URL()), upstreams.Options{}, Deps{})
	served := ServedPaths(cfg)
	routes := e.Routes()
	if len(routes) == 0 {
		t.Fatal("no routes registered")
	}
	for _, r := range routes {
		if !slices.Contains(served, r.Path) {
			t.Errorf("%s %s is routed but not in ServedPaths %q", r.Method, r.Path, served)
		}
	}
	for _, want := range []string{"/mcp", "/tools/ro", "/mcp/all", "/tools/ro/server-card", CatalogPath} {
		if !slices.ContainsFunc(routes, func(r *echo.Route) bool { return r.Path == want }) {
			t.Errorf("%s is not routed: %q", want, served)
		}
	}
}
