package mcphttp

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestServerCardValidation: check-config reports every wrong server.serverCard setting at once,
// including a tool set whose path is where an endpoint's card is served.
func TestServerCardValidation(t *testing.T) {
	c := Config{ServerCard: ServerCardConfig{Enabled: true, Name: "no-slash", Title: strings.Repeat("t", 69),
		Description: "two\nlines", WebsiteURL: "ftp://x"},
		Toolsets: []ToolsetConfig{{Name: "server-card", Include: []SelectorConfig{{}}}}}
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"server.serverCard.enabled: needs server.publicURL", "server.serverCard.name:",
		"server.serverCard.title:", "server.serverCard.description:", "server.serverCard.websiteURL:",
		`toolsets[0].path: "/mcp/server-card" is where an endpoint's Server Card is served`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %s", err, want)
		}
	}
	// The name's bound leaves room for a tool set's suffix; the description's is the title's.
	long := Config{PublicURL: "https://gw.example/mcp", ServerCard: ServerCardConfig{Enabled: true,
		Name: "com.example/" + strings.Repeat("n", 136-len("com.example/")+1), Description: strings.Repeat("d", 69)}}
	if err := long.Validate(); err == nil || !strings.Contains(err.Error(), "server.serverCard.name:") ||
		!strings.Contains(err.Error(), "server.serverCard.description:") {
		t.Errorf("a name of 137 characters, a description of 69: %v", err)
	}
	long.ServerCard.Name, long.ServerCard.Description = long.ServerCard.Name[:136], long.ServerCard.Description[:68]
	if err := long.Validate(); err != nil {
		t.Errorf("a name of 136 characters, a description of 68: %v", err)
	}
	if err := (Config{ServerCard: ServerCardConfig{AICatalog: true}}).Validate(); err == nil || !strings.Contains(err.Error(), "server.serverCard.aiCatalog") {
		t.Errorf("a catalog without cards: %v", err)
	}
	ok := Config{PublicURL: "https://gw.example/mcp", ServerCard: ServerCardConfig{Enabled: true, AICatalog: true,
		Name: "com.example/gateway", Title: "Gateway", WebsiteURL: "https://docs.example"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
}

// TestDefaultCardName: without serverCard.name, the card is named after the public host,
// reversed, and the server's name, each character the draft's pattern refuses replaced.
func TestDefaultCardName(t *testing.T) {
	for host, want := range map[string]string{
		"mcp.example.com":       "com.example.mcp/mcp-gateway",
		"localhost":             "localhost/mcp-gateway",
		"::1":                   "--1/mcp-gateway",
		"xn--bcher-kva.example": "example.xn--bcher-kva/mcp-gateway",
	} {
		got := defaultCardName(host, "mcp-gateway")
		if got != want || !cardName.MatchString(got) {
			t.Errorf("%s: %q, want %q", host, got, want)
		}
	}
	if got := defaultCardName("h", "my gateway/é"); got != "h/my-gateway--" {
		t.Errorf("server name: %q", got)
	}
}

// TestCardWithoutAuthentication: a gateway that authenticates no one (development) serves a card
// that asks for no header and names no issuer, for GET and HEAD alike, and a set's card at the
// set's own path.
func TestCardWithoutAuthentication(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	cfg := Config{PublicURL: "https://gw.example/mcp", ServerCard: ServerCardConfig{Enabled: true},
		Toolsets: []ToolsetConfig{{Name: "ro", Path: "/tools/ro", Include: []SelectorConfig{{Upstream: "be"}}}}}
	_, e := testServer(t, cfg, oneBackend(be.URL()), upstreams.Options{}, Deps{})
	url := serveTest(t, e).URL
	r := do(t, http.MethodGet, url+"/mcp/server-card", http.Header{}, "")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != CardMediaType ||
		strings.Contains(string(r.Body), "Authorization") || strings.Contains(string(r.Body), "_meta") ||
		!strings.Contains(string(r.Body), `"name":"example.gw/mcp-gateway"`) {
		t.Errorf("card: %d %s", r.Status, r.Body)
	}
	if h := do(t, http.MethodHead, url+"/mcp/server-card", http.Header{}, ""); h.Status != http.StatusOK || len(h.Body) != 0 || h.Header.Get("ETag") != r.Header.Get("ETag") {
		t.Errorf("HEAD: %d %q", h.Status, h.Body)
	}
	if s := do(t, http.MethodGet, url+"/tools/ro/server-card", http.Header{}, ""); s.Status != http.StatusOK ||
		!strings.Contains(string(s.Body), `"url":"https://gw.example/tools/ro"`) {
		t.Errorf("the set's card: %d %s", s.Status, s.Body)
	}
	if c := do(t, http.MethodGet, url+CatalogPath, http.Header{}, ""); c.Status == http.StatusOK {
		t.Errorf("catalog served without aiCatalog: %s", c.Body)
	}
}
