package gateway

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// card is a Server Card as a client reads it (the draft's schema.ts, ServerCard and Remote).
type card struct {
	Schema      string `json:"$schema"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Title       string `json:"title"`
	WebsiteURL  string `json:"websiteUrl"`
	Remotes     []struct {
		Type    string `json:"type"`
		URL     string `json:"url"`
		Headers []struct {
			Name                 string
			IsRequired, IsSecret bool
		} `json:"headers"`
		SupportedProtocolVersions []string `json:"supportedProtocolVersions"`
	} `json:"remotes"`
	Meta map[string]struct {
		Resource             string   `json:"resource"`
		ResourceMetadata     string   `json:"resource_metadata"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	} `json:"_meta"`
}

// cardNamePattern is the schema's pattern for a card's name.
var cardNamePattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// checkCardSchema checks what the draft's v1 schema requires of every card.
func checkCardSchema(t *testing.T, c card) {
	t.Helper()
	if c.Schema != "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json" ||
		!cardNamePattern.MatchString(c.Name) || len(c.Name) < 3 || len(c.Name) > 200 ||
		c.Version == "" || len(c.Version) > 255 ||
		utf8.RuneCountInString(c.Description) < 1 || utf8.RuneCountInString(c.Description) > 100 ||
		utf8.RuneCountInString(c.Title) > 100 || len(c.Remotes) != 1 || c.Remotes[0].Type != "streamable-http" {
		t.Errorf("card breaks the v1 schema: %+v", c)
	}
}

// TestServerCards: with server.serverCard on, the default endpoint and each tool set serve their
// Server Card at <endpoint>/server-card, and /.well-known/ai-catalog.json lists both, to anyone,
// with the draft's media types, CORS, caching and 304. A card describes the aggregate as
// server/discover and the protected resource metadata do (versions, URL, issuers, scopes) and
// holds no tool, no backend and no caller's data; two replicas serve the same bytes. Off (the
// default), none of it is served.
func TestServerCards(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	cfg := func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "use", Upstream: "alpha", AnyScope: []string{"tools:use"}}}
		c.Auth.ResourceMetadata.ScopesSupported = []string{"tools:use"}
		c.Server.ServerCard = mcphttp.ServerCardConfig{Enabled: true, AICatalog: true, Title: "Example gateway",
			WebsiteURL: "https://docs.example.com/mcp"}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "narrow", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}}}
	}
	replicas := []string{"http://" + startTestGateway(t, cfg, alpha).MCP, "http://" + startTestGateway(t, cfg, alpha).MCP}
	base := replicas[0]

	cards := map[string]card{}
	for _, path := range []string{"/mcp/server-card", "/mcp/narrow/server-card"} {
		status, h, body := exchange(t, http.MethodGet, base+path, http.Header{"Accept": {mcphttp.CardMediaType}}, "")
		if status != http.StatusOK || h.Get("Content-Type") != mcphttp.CardMediaType {
			t.Fatalf("GET %s: %d %s %s", path, status, h.Get("Content-Type"), body)
		}
		checkPublicDocument(t, base+path, h, body, replicas[1])
		for _, leak := range []string{"alpha", "echo", alpha.URL(), "tools\"", "inputSchema"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s names %q: %s", path, leak, body)
			}
		}
		var c card
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		checkCardSchema(t, c)
		cards[path] = c
	}

	main, set := cards["/mcp/server-card"], cards["/mcp/narrow/server-card"]
	if main.Name != "invalid.test.mcp/mcp-gateway" || set.Name != main.Name+"-narrow" || main.Title != "Example gateway" ||
		main.WebsiteURL != "https://docs.example.com/mcp" || main.Version != "dev" {
		t.Errorf("identity: %+v / %+v", main, set)
	}
	if main.Remotes[0].URL != testResource || set.Remotes[0].URL != testResource+"/narrow" {
		t.Errorf("remotes: %s, %s", main.Remotes[0].URL, set.Remotes[0].URL)
	}
	// The versions served: server/discover's, then the pre-2026 edge's.
	discovered := discoverVersions(t, base, mint(t, iss, map[string]any{"sub": "u", "scope": "tools:use"}))
	if want := append(discovered, "2025-11-25", "2025-06-18", "2025-03-26"); !slices.Equal(main.Remotes[0].SupportedProtocolVersions, want) {
		t.Errorf("supportedProtocolVersions %v, want %v", main.Remotes[0].SupportedProtocolVersions, want)
	}
	// Authorization as the protected resource metadata says it, and a secret bearer header.
	_, _, prmBody := exchange(t, http.MethodGet, base+"/.well-known/oauth-protected-resource/mcp", http.Header{}, "")
	var prm struct {
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	if err := json.Unmarshal([]byte(prmBody), &prm); err != nil {
		t.Fatal(err)
	}
	auth := main.Meta["io.mcp-gateway/authorization"]
	if !slices.Equal(auth.AuthorizationServers, prm.AuthorizationServers) || !slices.Contains(auth.AuthorizationServers, iss.URL()) ||
		!slices.Equal(auth.ScopesSupported, prm.ScopesSupported) || !slices.Equal(auth.ScopesSupported, []string{"tools:use"}) || auth.Resource != testResource ||
		auth.ResourceMetadata != "https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("authorization %+v, metadata %s", auth, prmBody)
	}
	if hs := main.Remotes[0].Headers; len(hs) != 1 || hs[0].Name != "Authorization" || !hs[0].IsRequired || !hs[0].IsSecret {
		t.Errorf("headers %+v", hs)
	}
	if set.Meta["io.mcp-gateway/authorization"].ResourceMetadata != "https://mcp.test.invalid/.well-known/oauth-protected-resource/mcp/narrow" {
		t.Errorf("the set's card: %+v", set.Meta)
	}

	// The catalog lists both cards.
	status, h, body := exchange(t, http.MethodGet, base+mcphttp.CatalogPath, http.Header{}, "")
	if status != http.StatusOK || h.Get("Content-Type") != mcphttp.CatalogMediaType {
		t.Fatalf("catalog: %d %s %s", status, h.Get("Content-Type"), body)
	}
	checkPublicDocument(t, base+mcphttp.CatalogPath, h, body, replicas[1])
	var catalog struct {
		SpecVersion string `json:"specVersion"`
		Entries     []struct{ Identifier, Type, URL string }
	}
	if err := json.Unmarshal([]byte(body), &catalog); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, e := range catalog.Entries {
		if e.Type != mcphttp.CardMediaType || !strings.HasPrefix(e.Identifier, "urn:air:mcp.test.invalid:mcp:") {
			t.Errorf("entry %+v", e)
		}
		urls = append(urls, e.URL)
	}
	if catalog.SpecVersion != "1.0" || !slices.Equal(urls, []string{testResource + "/server-card", testResource + "/narrow/server-card"}) {
		t.Errorf("catalog %s", body)
	}

	// Off by default: no card, no catalog.
	off := "http://" + startTestGateway(t, func(c *Config) { trustIssuers(c, iss) }, alpha).MCP
	for _, path := range []string{"/mcp/server-card", mcphttp.CatalogPath} {
		if status, h, _ := exchange(t, http.MethodGet, off+path, http.Header{}, ""); status == http.StatusOK || h.Get("Content-Type") == mcphttp.CardMediaType {
			t.Errorf("off: GET %s is %d %s", path, status, h.Get("Content-Type"))
		}
	}
}

// checkPublicDocument checks what the draft asks of every card and catalog response: CORS for
// any origin, public caching with an ETag honoured by If-None-Match, a preflight, 405 for writes,
// and the same bytes from another replica.
func checkPublicDocument(t *testing.T, url string, h http.Header, body, other string) {
	t.Helper()
	for k, v := range map[string]string{
		"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET",
		"Access-Control-Allow-Headers": "Content-Type, If-None-Match", "Access-Control-Expose-Headers": "ETag",
		"Cache-Control": "public, max-age=3600",
	} {
		if h.Get(k) != v {
			t.Errorf("%s: %s %q, want %q", url, k, h.Get(k), v)
		}
	}
	etag := h.Get("ETag")
	if status, _, _ := exchange(t, http.MethodGet, url, http.Header{"If-None-Match": {`"other", ` + etag}}, ""); etag == "" || status != http.StatusNotModified {
		t.Errorf("%s: If-None-Match %s: %d", url, etag, status)
	}
	if status, ph, _ := exchange(t, http.MethodOptions, url, http.Header{"Origin": {"https://app.example"},
		"Access-Control-Request-Method": {"GET"}}, ""); status != http.StatusNoContent || ph.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s: preflight %d %v", url, status, ph)
	}
	if status, _, _ := exchange(t, http.MethodPost, url, http.Header{"Content-Type": {"application/json"}}, "{}"); status != http.StatusMethodNotAllowed {
		t.Errorf("%s: POST %d", url, status)
	}
	path := url[strings.Index(url[len("http://"):], "/")+len("http://"):]
	if _, oh, ob := exchange(t, http.MethodGet, other+path, http.Header{}, ""); ob != body || oh.Get("ETag") != etag {
		t.Errorf("%s: another replica serves %s %s", path, oh.Get("ETag"), ob)
	}
}

// discoverVersions is server/discover's supportedVersions at the endpoint.
func discoverVersions(t *testing.T, base, tok string) []string {
	t.Helper()
	h := modernHeaders("server/discover", "")
	h.Set("Authorization", "Bearer "+tok)
	status, _, body := post(t, base+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+testMeta+`}}`)
	var r struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || status != http.StatusOK || len(r.Result.SupportedVersions) == 0 {
		t.Fatalf("server/discover: %d %s", status, body)
	}
	return r.Result.SupportedVersions
}

// TestServerCardDPoP: with DPoP on, the card says what the protected resource metadata says of
// it (the accepted proof algorithms, whether bound tokens are required), and its Authorization
// header names the scheme the endpoint accepts: DPoP where every issuer requires bound tokens
// (a client that sent the card's Bearer would only be refused), Bearer where bearer tokens are
// still accepted.
func TestServerCardDPoP(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	for _, mode := range []string{authz.DPoPRequired, authz.DPoPAllowed} {
		t.Run(mode, func(t *testing.T) {
			base := "http://" + startTestGateway(t, func(c *Config) {
				trustIssuers(c, iss)
				c.MRTR.Keys = testKeys
				c.Auth.DPoP.Mode = mode
				c.Auth.DPoP.Algorithms = []string{"ES256", "EdDSA"}
				c.Server.ServerCard = mcphttp.ServerCardConfig{Enabled: true}
			}, alpha).MCP
			_, _, prmBody := exchange(t, http.MethodGet, base+"/.well-known/oauth-protected-resource/mcp", http.Header{}, "")
			_, _, body := exchange(t, http.MethodGet, base+"/mcp/server-card", http.Header{}, "")
			var prm, c struct {
				Algs     []string `json:"dpop_signing_alg_values_supported"`
				Required bool     `json:"dpop_bound_access_tokens_required"`
				Meta     map[string]struct {
					Algs     []string `json:"dpop_signing_alg_values_supported"`
					Required bool     `json:"dpop_bound_access_tokens_required"`
				} `json:"_meta"`
				Remotes []struct {
					Headers []struct{ Name, Value string } `json:"headers"`
				} `json:"remotes"`
			}
			if err := json.Unmarshal([]byte(prmBody), &prm); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(body), &c); err != nil {
				t.Fatal(err)
			}
			auth := c.Meta["io.mcp-gateway/authorization"]
			if !slices.Equal(auth.Algs, prm.Algs) || !slices.Equal(auth.Algs, []string{"ES256", "EdDSA"}) || auth.Required != prm.Required ||
				auth.Required != (mode == authz.DPoPRequired) {
				t.Errorf("card's DPoP %+v, metadata's %v %v", auth, prm.Algs, prm.Required)
			}
			want := map[string]string{authz.DPoPRequired: "DPoP {token}", authz.DPoPAllowed: "Bearer {token}"}[mode]
			if h := c.Remotes[0].Headers; len(h) == 0 || h[0].Name != "Authorization" || h[0].Value != want {
				t.Errorf("headers %+v, want Authorization: %s", h, want)
			}
		})
	}
}
