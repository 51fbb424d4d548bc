package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/embeddings"
	"github.com/mcp-gateway/gateway/internal/testsupport/embedtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// embedKey is the stand-in endpoint's API key; it must never appear in the gateway's log.
const embedKey = "sk-embed-test-key-9f8e7d6c"

// embedQuery is a task whose words rank kb__print_page first lexically ("page" is in both
// descriptions and in print_page's name) and whose misspelled "scrennshot" only the stand-in
// vectors (hashed character trigrams) bring near kb__take_screenshot: first of the dense
// ranking, second of the lexical one, first once fused. kb__print_page is fourth of the dense
// ranking, behind two tools near "scrennshot" in spelling.
const embedQuery = "scrennshot of this page"

// kbBackend serves the tools of the test: two that match the task's words, one near it in
// spelling only, one the search set hides (nearest of all to the task), and others.
func kbBackend(t *testing.T) *mcptest.Server {
	t.Helper()
	opts := []mcptest.Option{mcptest.WithoutDefaults()}
	for _, tl := range []struct{ name, desc string }{
		{"print_page", "Print the current page to a PDF file."},
		{"take_screenshot", "Capture an image of the current page."},
		{"screen_recording", "Record a video of the screen."},
		{"delete_screenshot", "Delete a saved screenshot."},
		{"scrennshot_admin", "Capture a scrennshot of this page for administrators."},
		{"translate_text", "Translate text into another language."},
		{"archive_document", "Move a document to the archive."},
	} {
		opts = append(opts, mcptest.WithTool(&mcp.Tool{Name: tl.name, Description: tl.desc,
			InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			}))
	}
	return mcptest.StartServer(t, "kb", opts...)
}

// TestEmbeddingsSearch: with an embeddings endpoint configured (the stand-in, speaking the
// OpenAI protocol), find_tools fuses its ranking with the lexical one for a 2026-07-28 client
// and pre-2026 clients (the Go SDK at 2025-11-25, the TypeScript SDK v1) alike; a tool the set hides is never returned although it is the
// nearest; when the endpoint fails, the same search answers at once with the lexical ranking,
// counted, logged without the key or the query, and the endpoint is not asked again per search.
func TestEmbeddingsSearch(t *testing.T) {
	srv := embedtest.Start(t, embedKey)
	keyFile := filepath.Join(t.TempDir(), "embed-key")
	if err := os.WriteFile(keyFile, []byte(embedKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gw, logs, stop := startLoggedGateway(t, func(c *Config) {
		c.Auth.Disabled = true
		c.Log.Level = "warn"
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "search", Include: []mcphttp.SelectorConfig{{}},
			Exclude: []mcphttp.SelectorConfig{{Upstream: "kb", Tools: []string{"scrennshot_admin"}}},
			Search:  mcphttp.SearchConfig{Enabled: true}}}
		c.Search.Embeddings = EmbeddingsConfig{Config: embeddings.Config{URL: srv.URL, Model: "stand-in"},
			APIKey: Secret{File: keyFile}}
	}, kbBackend(t))
	url := "http://" + gw.MCP + "/mcp/search"
	modern := mcptest.Connect(t, url)
	legacy := mcptest.Connect(t, url, mcptest.WithProtocolVersion("2025-11-25"))

	// The first search builds the version's index and starts embedding its tools; wait for them.
	findTools(t, modern, embedQuery)
	mcptest.WaitFor(t, "the tools' vectors", func() bool {
		return metricValue(t, gw, `mcp_gateway_search_embeddings_requests_total{kind="tools",result="ok"}`) >= 1
	})
	for name, cs := range map[string]*mcp.ClientSession{"2026-07-28": modern, "2025-11-25": legacy} {
		got := findTools(t, cs, embedQuery)
		if len(got) == 0 || got[0] != "kb__take_screenshot" || !slices.Contains(got, "kb__print_page") {
			t.Errorf("%s client, fused: %v; want kb__take_screenshot first, kb__print_page among them", name, got)
		}
		if slices.Contains(got, "kb__scrennshot_admin") {
			t.Errorf("%s client: the hidden kb__scrennshot_admin was returned: %v", name, got)
		}
	}
	// The TypeScript SDK v1 client (2025-11-25) sees the same fused ranking.
	steps := legacyclient.RunTS(t, legacyclient.Scenario{URL: url, Steps: []string{"connect", "call_tool"},
		Tools: legacyclient.Tools{Echo: "find_tools"}, Arguments: map[string]map[string]any{"call_tool": {"query": embedQuery, "limit": 5}}})
	var found findResult
	if s := steps["call_tool"]; !s.OK || s.IsError || json.Unmarshal([]byte(s.Text), &found) != nil ||
		len(found.Tools) == 0 || found.Tools[0].Name != "kb__take_screenshot" {
		t.Errorf("TS SDK v1 find_tools: %+v", s)
	}
	if in := srv.Inputs(); !slices.Contains(in, embedQuery) {
		t.Errorf("the endpoint never received the query: %q", in)
	}

	// The endpoint fails: the same search ranks lexically at once.
	srv.SetFault(embedtest.Fault{Status: 500})
	for i, cs := range []*mcp.ClientSession{modern, legacy} {
		if got := findTools(t, cs, embedQuery); len(got) == 0 || got[0] != "kb__print_page" {
			t.Errorf("search %d with the endpoint failing: %v; want the lexical ranking, kb__print_page first", i, got)
		}
	}
	requests, _ := srv.Counts()
	for series, want := range map[string]float64{
		`mcp_gateway_search_embeddings_failures_total{reason="status"}`:  1,
		`mcp_gateway_search_embeddings_fallbacks_total{reason="status"}`: 1,
		// The second search did not reach the endpoint: it backs off.
		`mcp_gateway_search_embeddings_fallbacks_total{reason="backoff"}`: 1,
	} {
		if got := metricValue(t, gw, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	findTools(t, modern, embedQuery)
	if again, _ := srv.Counts(); again != requests {
		t.Errorf("a search while backing off reached the endpoint (%d requests, then %d)", requests, again)
	}
	// The log is written behind the requests (a queue drained in batches): stopping the gateway
	// writes out every line.
	stop()
	out := logs.String()
	if !strings.Contains(out, "embeddings endpoint failed") {
		t.Errorf("no failure line in the log:\n%s", out)
	}
	for _, secret := range []string{embedKey, "scrennshot", "Capture an image"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
}

// TestEmbeddingsConfig: an endpoint over plain http off loopback and an unknown fusion are
// refused by validate, and an unreadable key file by check-config (which reads every secret as
// building the gateway will), each at its key.
func TestEmbeddingsConfig(t *testing.T) {
	c := testConfig("error", "text")
	c.Auth.Disabled = true
	c.Search.Embeddings = EmbeddingsConfig{Config: embeddings.Config{URL: "http://embed.example.com/v1/embeddings", Model: "m", Fusion: "max"},
		APIKey: Secret{File: filepath.Join(t.TempDir(), "missing")}}
	c.applyDefaults()
	err := c.validate()
	if err == nil {
		t.Fatal("validate accepted a cleartext endpoint")
	}
	for _, want := range []string{"search.embeddings.url", "want https", "search.embeddings.fusion"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v; want it to name %q", err, want)
		}
	}
	if local := errors.Join(c.checkLocal(os.Getenv)...); local == nil || !strings.Contains(local.Error(), "search.embeddings.apiKey") {
		t.Errorf("check-config's local checks: %v; want the unreadable key file named at search.embeddings.apiKey", local)
	}
}

// TestCheckConfigOnlineEmbeddings: check-config --online asks the embeddings endpoint for one
// vector with the configured key: the stand-in answers it; with a key it refuses, the item fails,
// named, without the key in the output.
func TestCheckConfigOnlineEmbeddings(t *testing.T) {
	srv := embedtest.Start(t, embedKey)
	backend := mcptest.StartServer(t, "one")
	for _, tc := range []struct{ key, want string }{
		{embedKey, `(?m)^ok     search\.embeddings ` + regexp.QuoteMeta(srv.URL) + `: model stand-in: 256 dimensions$`},
		{"sk-refused-key", `(?m)^FAILED search\.embeddings ` + regexp.QuoteMeta(srv.URL) + `: embeddings: refused_key \(HTTP 401\)$`},
	} {
		cfg := writeConfigWith(t, "search:\n  embeddings:\n    url: "+srv.URL+"\n    model: stand-in\n    apiKey: {value: "+tc.key+"}\n", backend)
		out, stderr, err := runGateway(t, "check-config", "--config", cfg, "--online")
		if !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", tc.want, out)
		}
		if failed := strings.HasPrefix(tc.want, "(?m)^FAILED"); failed != (err != nil) {
			t.Errorf("key %s: err = %v", tc.key, err)
		}
		if strings.Contains(out+stderr, tc.key) {
			t.Errorf("the output shows the key:\n%s%s", out, stderr)
		}
	}
}

// TestReloadTurnsEmbeddingsOn: a reload that sets search.embeddings makes the next find_tools
// fused; one that removes it makes the next lexical again, and the endpoint is asked nothing more.
func TestReloadTurnsEmbeddingsOn(t *testing.T) {
	srv := embedtest.Start(t, "")
	kb := kbBackend(t)
	base := "auth: {disabled: true}\ntoolsets: [{name: search, include: [{}], exclude: [{upstream: kb, tools: [scrennshot_admin]}], search: {enabled: true}}]\nupstreams:\n" + upstreamYAML(kb)
	on := base + "search:\n  embeddings: {url: \"" + srv.URL + "\", model: stand-in}\n"
	f := startReloadGateway(t, "30s", base)
	cs := mcptest.Connect(t, f.url()+"/search")
	first := func() string {
		if got := findTools(t, cs, embedQuery); len(got) > 0 {
			return got[0]
		}
		return ""
	}
	if got := first(); got != "kb__print_page" {
		t.Fatalf("before the reload: %q first, want the lexical kb__print_page", got)
	}
	if err := f.reload(t, "30s", on); err != nil {
		t.Fatalf("reload: %v", err)
	}
	mcptest.WaitFor(t, "the fused ranking after the reload", func() bool { return first() == "kb__take_screenshot" })
	if err := f.reload(t, "30s", base); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := first(); got != "kb__print_page" {
		t.Errorf("after removing the endpoint: %q first, want the lexical kb__print_page", got)
	}
	before, _ := srv.Counts()
	first()
	if after, _ := srv.Counts(); after != before {
		t.Errorf("the endpoint was asked %d more time(s) after it was removed", after-before)
	}
}
