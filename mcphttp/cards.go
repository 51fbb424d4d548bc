package mcphttp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Server Cards and the AI Catalog (SEP-2127, a draft; docs/server-card.md): a static, public
// description of each endpoint (the default one and every tool set's) served at
// <endpoint>/server-card, and /.well-known/ai-catalog.json listing them. A card describes the
// aggregate the endpoint is (name, version, the protocol versions served, its URL, that it needs
// a bearer token and from whom) and nothing a caller could not learn from the protected resource
// metadata: no tool, no backend, nothing of any caller. It is built once, when the server is, and
// served from memory to anyone; nothing in it decides anything.

// Media types, schema and paths of the draft (experimental-ext-server-card docs/discovery.md,
// schema.ts; Agent-Card ai-catalog).
const (
	// CardMediaType is a Server Card's media type.
	CardMediaType = "application/mcp-server-card+json"
	// CatalogMediaType is an AI Catalog's media type.
	CatalogMediaType = "application/ai-catalog+json"
	// CardSchema is the $schema every v1 card names.
	CardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
	// CardSuffix is appended to an endpoint's path for its card.
	CardSuffix = "/server-card"
	// CatalogPath is where the AI Catalog is served.
	CatalogPath = "/.well-known/ai-catalog.json"
	// DefaultCardDescription is a card's description when serverCard.description is empty.
	DefaultCardDescription = "MCP gateway: many MCP servers behind one endpoint"
	// cardCacheControl is the draft's caching advice.
	cardCacheControl = "public, max-age=3600"
	// cardCORSHeaders are the request headers the draft's CORS headers allow.
	cardCORSHeaders = "Content-Type, If-None-Match"
	// metaCardAuthorization is the card's _meta key for how to get a token.
	metaCardAuthorization = "io.mcp-gateway/authorization"
)

// ServerCardConfig is server.serverCard.
type ServerCardConfig struct {
	// Enabled serves the Server Card of the default endpoint at its path + "/server-card" and
	// of each tool set at the set's path + "/server-card". Needs server.publicURL. Default false.
	Enabled bool `yaml:"enabled"`
	// Name is the card's name: reverse-DNS, one '/', such as com.example/gateway. A tool set's
	// card is named Name + "-" + the set's name. Default: the public URL's host with its labels
	// reversed, "/" and the gateway's serverInfo name (com.example.mcp/mcp-gateway).
	Name string `yaml:"name"`
	// Title is the card's display name, optional: at most 68 characters on one line, since a
	// tool set's card adds the set's name (the draft allows 100).
	Title string `yaml:"title"`
	// Description says what the endpoint is: at most 68 characters on one line, since a tool
	// set's card adds the set's name. Default "MCP gateway: many MCP servers behind one endpoint".
	Description string `yaml:"description"`
	// WebsiteURL is an absolute http(s) URL of the deployment's documentation, optional.
	WebsiteURL string `yaml:"websiteURL"`
	// AICatalog also serves /.well-known/ai-catalog.json listing every card: only where the
	// gateway owns its host's root, which the catalog speaks for. Needs Enabled. Default false.
	AICatalog bool `yaml:"aiCatalog"`
}

// cardName is the draft's pattern for a card's name.
var cardName = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// maxCardName and maxCardText are the draft schema's bounds.
const (
	maxCardName = 200
	maxCardText = 100
)

func (c ServerCardConfig) validate(publicURL string) []error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, configerr.At("server.serverCard."+key, format, args...))
	}
	if c.AICatalog && !c.Enabled {
		add("aiCatalog", "lists the cards, which need serverCard.enabled")
	}
	if !c.Enabled {
		return errs
	}
	if publicURL == "" {
		add("enabled", "needs server.publicURL: a card gives the endpoint's URL")
	}
	if c.Name != "" && (!cardName.MatchString(c.Name) || len(c.Name) < 3 || len(c.Name) > maxCardName-64) {
		add("name", "%q: want reverse-DNS with one '/' (com.example/gateway), of letters, digits, '.', '-' and '_', at most %d characters",
			c.Name, maxCardName-64)
	}
	for key, v := range map[string]string{"title": c.Title, "description": c.Description} {
		if n := utf8.RuneCountInString(v); n > maxCardText-32 || strings.ContainsAny(v, "\x00\r\n") {
			add(key, "at most %d characters on one line (a tool set's name is added to it)", maxCardText-32)
		}
	}
	if c.WebsiteURL != "" {
		if u, err := url.Parse(c.WebsiteURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("websiteURL", "%q: want an absolute http(s) URL", c.WebsiteURL)
		} else if u.User != nil {
			add("websiteURL", "%q: want a URL with no user information: the card is served to anyone", configerr.URL(c.WebsiteURL))
		}
	}
	return errs
}

// cardPaths are the paths cards are served at, given the endpoints' paths: a tool set must not
// take one of them.
func cardPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, strings.TrimSuffix(p, "/")+CardSuffix)
	}
	return out
}

// cards are the documents served, by path.
type cards struct {
	docs map[string]*document
}

// The card's shape (experimental-ext-server-card schema.ts, ServerCard and Remote).
type (
	serverCard struct {
		Schema      string          `json:"$schema"`
		Name        string          `json:"name"`
		Version     string          `json:"version"`
		Description string          `json:"description"`
		Title       string          `json:"title,omitempty"`
		WebsiteURL  string          `json:"websiteUrl,omitempty"`
		Remotes     []cardRemote    `json:"remotes"`
		Meta        json.RawMessage `json:"_meta,omitempty"`
	}
	cardRemote struct {
		Type                      string       `json:"type"`
		URL                       string       `json:"url"`
		Headers                   []cardHeader `json:"headers,omitempty"`
		SupportedProtocolVersions []string     `json:"supportedProtocolVersions"`
	}
	cardHeader struct {
		Name        string               `json:"name"`
		Description string               `json:"description"`
		IsRequired  bool                 `json:"isRequired"`
		IsSecret    bool                 `json:"isSecret"`
		Value       string               `json:"value"`
		Variables   map[string]cardInput `json:"variables"`
	}
	cardInput struct {
		Description string `json:"description"`
		IsRequired  bool   `json:"isRequired"`
		IsSecret    bool   `json:"isSecret"`
	}
	aiCatalog struct {
		SpecVersion string         `json:"specVersion"`
		Entries     []catalogEntry `json:"entries"`
	}
	catalogEntry struct {
		Identifier string `json:"identifier"`
		Type       string `json:"type"`
		URL        string `json:"url"`
	}
)

// endpointCard is what differs between the cards of one gateway: the endpoint.
type endpointCard struct {
	suffix   string // "" for the default endpoint, "-" + the set's name for a set
	setName  string
	path     string // where the endpoint is served on this listener
	url      string // the endpoint's public URL
	metadata string // its protected resource metadata URL
}

// initCards builds every card and the catalog, once. serverInfo is the gateway's name and
// version, versions the protocol versions the endpoint serves.
func (s *Server) initCards(name, version string, versions []string) error {
	cc := s.cfg.ServerCard
	if !cc.Enabled {
		return nil
	}
	u, err := url.Parse(s.cfg.PublicURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("mcphttp: server.serverCard needs server.publicURL")
	}
	base := cc.Name
	if base == "" {
		base = defaultCardName(u.Hostname(), name)
	}
	eps := []endpointCard{{path: s.cfg.Path, url: s.cfg.PublicURL}}
	if s.auth != nil {
		eps[0].metadata = s.auth.MetadataURL()
	}
	for _, ts := range s.sortedSets() {
		eps = append(eps, endpointCard{suffix: "-" + ts.name, setName: ts.name, path: ts.path, url: ts.resource, metadata: ts.metadataURL})
	}
	s.cards = &cards{docs: map[string]*document{}}
	var entries []catalogEntry
	for _, ep := range eps {
		card := s.buildCard(cc, base+ep.suffix, version, versions, ep)
		if !cardName.MatchString(card.Name) || len(card.Name) > maxCardName {
			return fmt.Errorf("mcphttp: the Server Card's name %q is not reverse-DNS with one '/': set server.serverCard.name", card.Name)
		}
		doc, err := newDocument(card, CardMediaType, cardCacheControl, cardCORSHeaders)
		if err != nil {
			return err
		}
		s.cards.docs[strings.TrimSuffix(ep.path, "/")+CardSuffix] = doc
		_, short, _ := strings.Cut(card.Name, "/")
		entries = append(entries, catalogEntry{Identifier: "urn:air:" + u.Hostname() + ":mcp:" + short,
			Type: CardMediaType, URL: strings.TrimSuffix(ep.url, "/") + CardSuffix})
	}
	if cc.AICatalog {
		doc, err := newDocument(aiCatalog{SpecVersion: "1.0", Entries: entries}, CatalogMediaType, cardCacheControl, cardCORSHeaders)
		if err != nil {
			return err
		}
		s.cards.docs[CatalogPath] = doc
	}
	return nil
}

// buildCard is the card of one endpoint.
func (s *Server) buildCard(cc ServerCardConfig, name, version string, versions []string, ep endpointCard) serverCard {
	desc := cc.Description
	if desc == "" {
		desc = DefaultCardDescription
	}
	title := cc.Title
	if ep.setName != "" {
		desc = boundText(desc + " (tool set " + ep.setName + ")")
		if title != "" {
			title = boundText(title + " (" + ep.setName + ")")
		}
	}
	remote := cardRemote{Type: "streamable-http", URL: ep.url, SupportedProtocolVersions: versions}
	card := serverCard{Schema: CardSchema, Name: name, Version: version, Description: desc, Title: title,
		WebsiteURL: cc.WebsiteURL}
	if s.auth != nil {
		remote.Headers = []cardHeader{authorizationHeader(ep.metadata, s.auth.BearerAccepted())}
		card.Meta = s.cardAuthorization(ep)
	}
	card.Remotes = []cardRemote{remote}
	return card
}

// authorizationHeader is the Authorization header a client must send: a token from one of the
// issuers the protected resource metadata names, with the Bearer scheme, or the DPoP scheme
// (and a proof of possession, RFC 9449) where no issuer's tokens are accepted as Bearer.
func authorizationHeader(metadata string, bearer bool) cardHeader {
	value, what := "Bearer {token}", "An OAuth 2.1 access token for this endpoint"
	if !bearer {
		value, what = "DPoP {token}", "A DPoP-bound OAuth 2.1 access token for this endpoint, each request with a DPoP proof (RFC 9449)"
	}
	return cardHeader{Name: "Authorization", IsRequired: true, IsSecret: true, Value: value,
		Description: what + "; see the protected resource metadata at " + metadata,
		Variables: map[string]cardInput{"token": {Description: "An access token from one of the authorization servers " +
			"the protected resource metadata lists", IsRequired: true, IsSecret: true}}}
}

// cardAuth is the card's _meta entry for authorization (RFC 9728's member names).
type cardAuth struct {
	Resource             string   `json:"resource"`
	ResourceMetadata     string   `json:"resource_metadata,omitempty"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	// The DPoP members (RFC 9449 §5.2), with auth.dpop.
	DPoPAlgs     []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

// cardAuthorization is the card's _meta: where the endpoint's protected resource metadata is,
// and what it says, so a client can prepare a sign-in before it connects. The live metadata,
// and the live 401 challenge, are what count.
func (s *Server) cardAuthorization(ep endpointCard) json.RawMessage {
	doc := s.auth.Metadata()
	b, _ := json.Marshal(map[string]cardAuth{metaCardAuthorization: {Resource: ep.url, ResourceMetadata: ep.metadata,
		AuthorizationServers: doc.AuthorizationServers, ScopesSupported: doc.ScopesSupported,
		DPoPAlgs: doc.DPoPSigningAlgValuesSupported, DPoPRequired: doc.DPoPBoundAccessTokensRequired}})
	return b
}

// boundText cuts s to the draft's 100 characters.
func boundText(s string) string {
	if utf8.RuneCountInString(s) <= maxCardText {
		return s
	}
	r := []rune(s)
	return string(r[:maxCardText-1]) + "…"
}

// defaultCardName is host with its labels reversed, "/" and the server's name, each character
// the draft does not allow replaced by '-'.
func defaultCardName(host, name string) string {
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	clean := func(s string, allowed string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(allowed, r)) {
				return r
			}
			return '-'
		}, s)
	}
	return clean(strings.Join(labels, "."), ".-") + "/" + clean(name, "._-")
}

// sortedSets are the tool sets in the order of their paths, so the catalog lists them the same
// way on every replica.
func (s *Server) sortedSets() []*toolset {
	out := make([]*toolset, 0, len(s.sets))
	for _, ts := range s.sets {
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b *toolset) int { return strings.Compare(a.path, b.path) })
	return out
}

// registerCards serves the documents to anyone (no token, any origin), with no admission: they
// are bytes in memory, as the protected resource metadata is.
func (s *Server) registerCards(e *echo.Echo) {
	if s.cards == nil {
		return
	}
	for path, doc := range s.cards.docs {
		doc.register(e, path)
	}
}
