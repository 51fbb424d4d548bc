package mcphttp

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/authz/dpop"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/metrics"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Tool sets (docs/toolsets.md): a curated subset of the gateway's tools, prompts and resources,
// served as a full MCP endpoint of its own at its own path. A set is a view: it narrows what a
// caller sees and may call, on top of the same policy, and never grants anything the policy does
// not. Names are the gateway's namespaced names, the same on every set.

// ToolsetConfig is one tool set (the top-level toolsets: list).
type ToolsetConfig struct {
	// Name names the set in metrics and logs: lower-case letters, digits, '-' and '_'.
	Name string `yaml:"name"`
	// Path is where the set is served, written as every client sends it (as server.path).
	// Default: the MCP path, "/" and the name (/mcp/github-ro).
	Path string `yaml:"path"`
	// Include selects what the set shows: an item is in the set when any include rule selects it
	// and no exclude rule does. At least one include rule is required.
	Include []SelectorConfig `yaml:"include" minItems:"1"`
	// Exclude removes items the include rules selected.
	Exclude []SelectorConfig `yaml:"exclude"`
	// Search turns on search mode for the set: tools/list shows find_tools and call_tool (and
	// the tools of Search.AlwaysVisible) instead of the whole set.
	Search SearchConfig `yaml:"search"`
	// Instructions, if set, are what server/discover returns on this set's path.
	Instructions string `yaml:"instructions"`
}

// SelectorConfig selects items by backend and by backend-side name, with globs in which '*'
// matches any run of characters and '?' one character: the terms policy rules use.
type SelectorConfig struct {
	// Upstream is a glob over backend names. Default "*".
	Upstream string `yaml:"upstream"`
	// Tools are globs over backend-side tool names. Absent: every tool of the matching
	// backends; an empty list: none.
	Tools []string `yaml:"tools"`
	// Prompts are globs over backend-side prompt names, as Tools.
	Prompts []string `yaml:"prompts"`
	// Resources are globs over resource URIs and resource template URI templates, as Tools.
	Resources []string `yaml:"resources"`
}

// SearchConfig is the search mode of an endpoint (a tool set, or server.search for the default
// endpoint).
type SearchConfig struct {
	// Enabled shows find_tools and call_tool in tools/list instead of the catalog. Default false.
	Enabled bool `yaml:"enabled"`
	// AlwaysVisible are globs over namespaced tool names listed besides the meta-tools (still
	// filtered by the set and the caller's policy).
	AlwaysVisible []string `yaml:"alwaysVisible"`
	// MaxResults bounds find_tools' limit. Default DefaultSearchResults; at most MaxSearchResults.
	MaxResults int `yaml:"maxResults"`
}

// Search defaults and limits.
const (
	// DefaultSearchResults is the limit of a find_tools call that gives none, and the default
	// bound on the limit a call may ask for.
	DefaultSearchResults = 10
	// MaxSearchResults is the largest SearchConfig.MaxResults accepted.
	MaxSearchResults = 50
)

// toolsetName is what a set's name may be: it labels metrics and ends its default path.
var toolsetName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// validateToolsets reports every problem in the tool sets of c at once.
func (c Config) validateToolsets() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	errs = append(errs, c.Search.validate("server.search")...)
	base := c.WithDefaults().Path
	names, paths := map[string]int{}, map[string]bool{base: true}
	for i, ts := range c.Toolsets {
		at := fmt.Sprintf("toolsets[%d]", i)
		if !toolsetName.MatchString(ts.Name) {
			add(at+".name", "%q: want 1 to 63 lower-case letters, digits, '-' or '_', starting with a letter or digit", ts.Name)
		} else if first, dup := names[ts.Name]; dup {
			add(at+".name", "%q is also the name of toolsets[%d]; names are unique", ts.Name, first)
		} else {
			names[ts.Name] = i
		}
		path := ts.path(base)
		switch {
		case !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#*:") || strings.HasSuffix(path, "/"):
			add(at+".path", "%q: want an absolute path without query, wildcards, parameters or trailing slash", path)
		case paths[path] || strings.HasPrefix(path, "/.well-known/"):
			add(at+".path", "%q is already served (by the MCP endpoint, another set or the metadata)", path)
		case PathProblem(path) != "":
			add(at+".path", "%q: %s", path, PathProblem(path))
		}
		paths[path] = true
		if len(ts.Include) == 0 {
			add(at+".include", "at least one rule is required (a set selects what it shows)")
		}
		for j, r := range ts.Include {
			errs = append(errs, r.validate(fmt.Sprintf("%s.include[%d]", at, j))...)
		}
		for j, r := range ts.Exclude {
			errs = append(errs, r.validate(fmt.Sprintf("%s.exclude[%d]", at, j))...)
		}
		errs = append(errs, ts.Search.validate(at+".search")...)
	}
	if c.ServerCard.Enabled {
		// A set must not take the path of an endpoint's card.
		cards := cardPaths(slices.Collect(maps.Keys(paths)))
		for i, ts := range c.Toolsets {
			if slices.Contains(cards, ts.path(base)) {
				add(fmt.Sprintf("toolsets[%d].path", i), "%q is where an endpoint's Server Card is served", ts.path(base))
			}
		}
	}
	return errors.Join(errs...)
}

func (r SelectorConfig) validate(at string) []error {
	var errs []error
	for _, l := range []struct {
		key   string
		globs []string
	}{{"tools", r.Tools}, {"prompts", r.Prompts}, {"resources", r.Resources}} {
		for k, g := range l.globs {
			if g == "" {
				errs = append(errs, configerr.At(fmt.Sprintf("%s.%s[%d]", at, l.key, k), "an empty glob selects nothing; leave the list empty instead"))
			}
		}
	}
	return errs
}

func (sc SearchConfig) validate(at string) []error {
	var errs []error
	if sc.MaxResults < 0 || sc.MaxResults > MaxSearchResults {
		errs = append(errs, configerr.At(at+".maxResults", "%d: want 0 (the default, %d) to %d", sc.MaxResults, DefaultSearchResults, MaxSearchResults))
	}
	for k, g := range sc.AlwaysVisible {
		if g == "" {
			errs = append(errs, configerr.At(fmt.Sprintf("%s.alwaysVisible[%d]", at, k), "an empty glob"))
		}
	}
	return errs
}

// path is where the set is served.
func (ts ToolsetConfig) path(base string) string {
	if ts.Path != "" {
		return ts.Path
	}
	return strings.TrimSuffix(base, "/") + "/" + ts.Name
}

// toolset is a compiled endpoint view: a tool set, or the default endpoint when it is in search
// mode. A request on the default endpoint without search has none (request.set is nil), so the
// default path costs nothing.
type toolset struct {
	name    string // metrics label: the set's name, or "default"
	path    string
	include []selector // nil: everything (the default endpoint)
	exclude []selector
	// caseless are the backends whose resource paths are case-insensitive: their resource URIs
	// are selected case-folded (Deps.CaseInsensitive); nil when there are none.
	caseless authz.Caseless
	search   *searchMode // nil: search mode off
	// instructions answer server/discover on this path; "" keeps the gateway's.
	instructions string
	// resource is the set's RFC 8707 resource URI (setResource), metadataURL where its
	// RFC 9728 metadata is served, htu resource in the form DPoP proofs are compared in; "" without
	// a public URL.
	resource, metadataURL, htu string
}

// selector is a compiled SelectorConfig; a nil glob list means "every item of that kind".
type selector struct {
	upstream                           authz.Glob
	tools, prompts, resources          []authz.Glob
	hasTools, hasPrompts, hasResources bool
	// foldedResources are resources case-folded (authz.FoldGlobs), for backends with
	// case-insensitive paths.
	foldedResources []authz.Glob
	// may and every are, per kind (selTools, selPrompts, selResources), whether the rule may
	// select an item of that kind of a backend it matches (its list is absent or not empty)
	// and whether it selects every one (its list is absent or holds a glob of '*' alone).
	may, every [selKinds]bool
}

// The kinds a selector's lists name, indexing selector.may and selector.every.
const (
	selTools = iota
	selPrompts
	selResources
	selKinds
)

// toolsets is the Server's part for tool sets and search mode.
type toolsets struct {
	sets         map[string]*toolset // by path
	defaultSet   *toolset            // the default endpoint in search mode; nil otherwise
	setResources map[string]bool     // every set's resource URI
	// spelled maps the CanonicalResource spelling of the public URL and of each set's resource,
	// where it differs, to the configured one: the audience a client's token for it carries.
	spelled    map[string]string
	setMetrics *metrics.ToolsetRecorder
	search     *searcher
}

// defaultSetName labels the default endpoint in metrics when it is in search mode.
const defaultSetName = "default"

func compileSelectors(cs []SelectorConfig) []selector {
	out := make([]selector, 0, len(cs))
	for _, c := range cs {
		up := c.Upstream
		if up == "" {
			up = "*"
		}
		sel := selector{
			upstream: authz.CompileGlob(up),
			tools:    compileGlobs(c.Tools), hasTools: c.Tools != nil,
			prompts: compileGlobs(c.Prompts), hasPrompts: c.Prompts != nil,
			resources: compileGlobs(c.Resources), hasResources: c.Resources != nil,
			foldedResources: authz.FoldGlobs(c.Resources),
		}
		for k, globs := range [selKinds][]string{selTools: c.Tools, selPrompts: c.Prompts, selResources: c.Resources} {
			sel.may[k] = globs == nil || len(globs) > 0
			sel.every[k] = globs == nil || slices.ContainsFunc(globs, authz.TakesEveryName)
		}
		out = append(out, sel)
	}
	return out
}

// selects reports whether sel selects the item; folded says t.Name is a case-folded resource
// URI or template, to be matched with the case-folded patterns. An include rule reads names as
// an allow rule does (authz.Glob.Match); an exclude rule (excluding) applies a protection and
// reads them as a deny rule does (authz.CoversAny): a '?' takes a run of bytes that are not
// UTF-8 too, and a resource URI is excluded also when its pattern covers the URI without its
// user information (mem://user@items/a for mem://items/*), which an HTTP client sends as
// credentials for the same resource.
func (sel *selector) selects(kind upstreams.Kind, t upstreams.Target, folded, excluding bool) bool {
	upstream := sel.upstream.Match
	if excluding {
		upstream = sel.upstream.Covers
	}
	if !upstream(t.Upstream) {
		return false
	}
	var ps []authz.Glob
	var has bool
	switch kind {
	case upstreams.KindTool:
		ps, has = sel.tools, sel.hasTools
	case upstreams.KindPrompt:
		ps, has = sel.prompts, sel.hasPrompts
	default:
		ps, has = sel.resources, sel.hasResources
		if folded {
			ps = sel.foldedResources
		}
	}
	if !has {
		return true
	}
	if excluding {
		return authz.CoversAny(ps, t.Name, kind != upstreams.KindTool && kind != upstreams.KindPrompt)
	}
	for _, p := range ps {
		if p.Match(t.Name) {
			return true
		}
	}
	return false
}

// selects reports whether the item is in the set: selected by an include rule and by no exclude
// rule. The default endpoint selects everything.
func (ts *toolset) selects(kind upstreams.Kind, t upstreams.Target) bool {
	if ts.include == nil {
		return true
	}
	folded := false
	if kind != upstreams.KindTool && kind != upstreams.KindPrompt {
		t.Name, folded = ts.caseless.Fold(t.Upstream, t.Name)
	}
	in := false
	for i := range ts.include {
		if ts.include[i].selects(kind, t, folded, false) {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for i := range ts.exclude {
		if ts.exclude[i].selects(kind, t, folded, true) {
			return false
		}
	}
	return true
}

// coversBackend reports whether the set may select anything of backend upstream: of some kind
// (tools, prompts, resources), an include rule matching it may select items and no exclude rule
// matching it takes every one, however the rules spell it (a list absent, or holding '*'). A rule
// {upstream: b, tools: ["*"]} excludes all of b, prompts and resources included, as an empty list
// in every kind of an include rule selects nothing of it. What is said of a whole backend (its
// server instructions), its list_changed and a list of a backend acting as each caller are for
// the set's endpoint only then: a set showing nothing of a backend serves its instructions,
// which describe its tools, to no one, and makes no list of it with a caller's own account.
func (ts *toolset) coversBackend(upstream string) bool {
	if ts.include == nil {
		return true
	}
	for k := range selKinds {
		if selectorsMatch(ts.include, upstream, func(sel *selector) bool { return sel.may[k] }) &&
			!selectorsMatch(ts.exclude, upstream, func(sel *selector) bool { return sel.every[k] }) {
			return true
		}
	}
	return false
}

// selectorsMatch reports whether one of sels matches backend upstream and holds for it.
func selectorsMatch(sels []selector, upstream string, holds func(*selector) bool) bool {
	for i := range sels {
		if holds(&sels[i]) && sels[i].upstream.Match(upstream) {
			return true
		}
	}
	return false
}

// initToolsets compiles the configured sets and the default endpoint's search mode.
func (s *Server) initToolsets(deps Deps) error {
	if s.cfg.Search.Enabled {
		s.defaultSet = &toolset{name: defaultSetName, path: s.cfg.Path, search: newSearchMode(s.cfg.Search)}
	}
	s.sets = map[string]*toolset{}
	for _, c := range s.cfg.Toolsets {
		ts := &toolset{
			name: c.Name, path: c.path(s.cfg.Path),
			include: compileSelectors(c.Include), exclude: compileSelectors(c.Exclude),
			instructions: c.Instructions, caseless: authz.NewCaseless(deps.CaseInsensitive),
		}
		if c.Search.Enabled {
			ts.search = newSearchMode(c.Search)
		}
		if ts.resource = setResource(s.cfg.PublicURL, s.cfg.Path, ts.path); ts.resource != "" {
			if u, err := authz.MetadataURL(ts.resource); err == nil {
				ts.metadataURL = u
			}
			ts.htu, _ = dpop.NormalizeURL(ts.resource)
		}
		s.sets[ts.path] = ts
	}
	s.setResources, s.spelled = map[string]bool{}, map[string]string{}
	resources := []string{s.cfg.PublicURL}
	for _, ts := range s.sets {
		if ts.resource != "" {
			s.setResources[ts.resource] = true
			resources = append(resources, ts.resource)
		}
	}
	for _, r := range resources {
		if c := authz.CanonicalResource(r); c != r && r != "" {
			s.spelled[c] = r
		}
	}
	s.setMetrics = deps.ToolsetMetrics
	s.search = &searcher{backends: deps.Backends, index: newIndexCache(s.log, indexBytes(deps.Backends)), metrics: deps.ToolsetMetrics}
	s.search.index.embed = deps.Embeddings
	s.search.index.onEvict = deps.Metrics.SearchIndexEviction
	return nil
}

// registerToolsets adds each set's routes: POST on its path, 405 for the other methods, and its
// protected resource metadata (RFC 9728) at the well-known URI of its path.
func (s *Server) registerToolsets(e *echo.Echo) {
	for path, ts := range s.sets {
		e.POST(path, func(c echo.Context) error {
			c.Set(toolsetKey, ts)
			return s.handlePost(c)
		})
		methods := []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch}
		if s.edge != nil {
			// A pre-2026 client's GET stream, narrowed to the set like everything else here.
			e.GET(path, func(c echo.Context) error {
				c.Set(toolsetKey, ts)
				return s.handleGet(c)
			})
			methods = methods[1:]
		}
		refuseOtherMethods(e, path, methods)
		e.OPTIONS(path, corsPreflight(s.origins, endpointMethods(s.edge)))
		if s.auth == nil || ts.metadataURL == "" {
			continue
		}
		doc := s.auth.Metadata()
		doc.Resource = ts.resource
		registerMetadataAt(e, s.log, doc, ts.metadataURL)
	}
}

// toolsetKey is the echo context key under which a set's route hands its set to handlePost.
const toolsetKey = "mcp-gateway.toolset"

// endpointSet is the view of the endpoint c was routed to: its tool set, the default endpoint's
// search mode, or nil for the plain default endpoint.
func (s *Server) endpointSet(c echo.Context) *toolset {
	if ts, ok := c.Get(toolsetKey).(*toolset); ok {
		return ts
	}
	return s.defaultSet
}

// ToolsetResources are the RFC 8707 resource URIs of the configured tool sets under publicURL,
// which tokens may name as their audience besides the gateway's own (authz.Options).
func ToolsetResources(cfg Config) []string {
	cfg = cfg.WithDefaults()
	var out []string
	for _, ts := range cfg.Toolsets {
		if r := setResource(cfg.PublicURL, cfg.Path, ts.path(cfg.Path)); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// ServedPaths are the paths the MCP endpoints take on their listener under cfg: the default
// endpoint's and each tool set's, their Server Cards and the AI Catalog when on, and the
// protected resource metadata of each. Another feature served on that listener (the approval
// page, the connect pages, each owning every path under its own) must take none of them: echo
// keeps one handler per path and method, and the route registered last would answer in the
// other's place without a word.
func ServedPaths(cfg Config) []string {
	cfg = cfg.WithDefaults()
	endpoints := []string{cfg.Path}
	for _, ts := range cfg.Toolsets {
		endpoints = append(endpoints, ts.path(cfg.Path))
	}
	out := slices.Clone(endpoints)
	if cfg.ServerCard.Enabled {
		out = append(out, cardPaths(endpoints)...)
		if cfg.ServerCard.AICatalog {
			out = append(out, CatalogPath)
		}
	}
	metadata := []string{rootMetadataURL(cfg.PublicURL)}
	for _, r := range append([]string{cfg.PublicURL}, ToolsetResources(cfg)...) {
		m, _ := authz.MetadataURL(r)
		metadata = append(metadata, m)
	}
	for _, m := range metadata {
		if u, err := url.Parse(m); err == nil && m != "" && u.Path != "" {
			out = append(out, u.Path)
		}
	}
	return out
}

// setResource is the public URL of the set served at path, given that the default endpoint,
// served at base, is published at publicURL; "" without a public URL. What a balancer puts in
// front of base is put in front of the set's path too: publicURL https://host/team-a/mcp with
// base /mcp publishes /mcp/ro at https://host/team-a/mcp/ro and /docs/mcp at
// https://host/team-a/docs/mcp. When publicURL does not end in base (the balancer rewrites the
// path), only a set under base can be placed (publicURL and the rest of its path); any other set
// is taken to be published at its own path on publicURL's origin.
func setResource(publicURL, base, path string) string {
	u, err := url.Parse(publicURL)
	if err != nil || publicURL == "" || u.Host == "" {
		return ""
	}
	if base := strings.TrimSuffix(base, "/"); path == base || strings.HasPrefix(path, base+"/") {
		return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/") + path[len(base):]
	}
	return PublicBase(publicURL, base) + path
}

// PublicBase is where publicURL, the public URL of the default endpoint served at base, places
// the gateway's paths outside base: its scheme and host, and the path prefix a balancer routing
// by path puts before them (https://host/team-a for https://host/team-a/mcp and base /mcp). When
// publicURL's path does not end in base (a balancer that rewrites the path) no prefix can be
// known, and the paths are taken to be published as they are on publicURL's host. "" without a
// public URL. The gateway's pages (approval, per-user OAuth) are reached there, and a tool set
// at a path of its own (setResource).
func PublicBase(publicURL, base string) string {
	u, err := url.Parse(publicURL)
	if err != nil || publicURL == "" || u.Host == "" {
		return ""
	}
	origin := u.Scheme + "://" + u.Host
	if pub, base := strings.TrimSuffix(u.EscapedPath(), "/"), strings.TrimSuffix(base, "/"); strings.HasSuffix(pub, base) {
		return origin + strings.TrimSuffix(pub, base)
	}
	return origin
}

// narrow composes a visibility filter with the endpoint's set: what the set does not select is
// invisible whatever the policy says. A set never widens: with a policy filter, both must hold.
// A nil set (the plain default endpoint) narrows nothing.
func (ts *toolset) narrow(visible func(upstreams.Kind, upstreams.Target) bool) func(upstreams.Kind, upstreams.Target) bool {
	if ts == nil || ts.include == nil {
		return visible
	}
	if visible == nil {
		return ts.selects
	}
	return func(k upstreams.Kind, t upstreams.Target) bool { return ts.selects(k, t) && visible(k, t) }
}

// inSet is stage route's check for a set: a routed call to something the set does not select is
// refused exactly like an unknown name, before policy is asked.
// A nil set holds everything.
func (ts *toolset) inSet(kind upstreams.Kind, t upstreams.Target) error {
	if ts == nil || ts.selects(kind, t) {
		return nil
	}
	return errUnknownName(kindNoun(kind))
}

// challenge is Server.challenge pointing at the protected resource metadata of the endpoint the
// request came to, so a client of a set discovers the set's resource.
func (x *request) challenge(status int, cs ...authz.Challenge) *Error {
	if x.set != nil && x.set.metadataURL != "" {
		for i := range cs {
			cs[i].ResourceMetadata = x.set.metadataURL
		}
	}
	return x.s.challenge(status, cs...)
}

// checkAudience refuses a token minted for other tool sets on this endpoint (forOtherEndpoint).
func (s *Server) checkAudience(x *request) error {
	if !s.forOtherEndpoint(s.cfg.PublicURL, x.set, x.caller.principal) {
		return nil
	}
	return x.challenge(http.StatusUnauthorized, s.auth.InScheme(authz.Challenge{Error: authz.ChallengeInvalidToken,
		Description: "the token's audience is another endpoint"}, x.caller.dpop))
}

// forOtherEndpoint reports whether p's token was minted for other tool sets than the endpoint of
// set (nil: the default endpoint), served under publicURL: its "aud" names a set's resource but
// neither the endpoint's resource nor the gateway's own (the public URL), each as configured or
// in the CanonicalResource spelling authz accepts too (spelled). A token for a narrow
// set must not open a wider endpoint; a token for the gateway works on every set, which only
// narrows it; a token whose audiences name no set (an operator's own audience values) is left
// to the issuer's audience check alone. No principal (no authentication) is for every endpoint.
func (t *toolsets) forOtherEndpoint(publicURL string, set *toolset, p *authz.Principal) bool {
	if p == nil {
		return false
	}
	own := publicURL
	if set != nil && set.resource != "" {
		own = set.resource
	}
	namesSet := false
	for _, a := range audiences(p.Claims["aud"]) {
		if configured, ok := t.spelled[a]; ok {
			a = configured
		}
		if a == own || a == publicURL {
			return false
		}
		namesSet = namesSet || t.setResources[a]
	}
	return namesSet
}

// AcceptsStream reports whether s would serve the GET stream r opened, for the caller its token
// was verified as (p; nil without authentication). A reload judges by it each stream open on
// the configuration it replaces, which would otherwise run on under the rules it was opened
// with: a stream is refused when s serves none at r's path (its tool set removed or moved, the
// endpoint's path changed, the pre-2026 edge or its stream turned off), when r's session no
// longer opens there (EraEdge.KeepsStream: its version no longer served), when s refuses r's
// origin, and when p's token is for another endpoint (checkAudience): for a tool set whose
// resource changed, or on an endpoint a new set made narrower than the token's audience.
func (s *Server) AcceptsStream(r *http.Request, p *authz.Principal) bool {
	if s.edge == nil || !s.edge.KeepsStream(r, p) || s.origins.check(r) != nil {
		return false
	}
	// The route echo finds for r (Register): the endpoint's path, or a set's.
	set := s.defaultSet
	if path := echo.GetPath(r); path != s.cfg.Path {
		if set = s.sets[path]; set == nil {
			return false
		}
	}
	return !s.forOtherEndpoint(s.cfg.PublicURL, set, p)
}

// StreamURL is the public URL, in dpop.NormalizeURL form, of the endpoint s would serve the GET
// stream r at (a tool set's, or its own): the htu the stream's DPoP proof must name there, as
// endpointURL is a request's. A function, not a method: Server keeps its method budget.
func StreamURL(s *Server, r *http.Request) string {
	if set := s.sets[echo.GetPath(r)]; set != nil && set.htu != "" {
		return set.htu
	}
	return s.htu
}

// audiences reads an "aud" claim: a string or an array of strings.
func audiences(v any) []string {
	switch a := v.(type) {
	case string:
		return []string{a}
	case []any:
		out := make([]string, 0, len(a))
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// compileGlobs compiles a selector's globs: policy's (authz.Glob), so a set selects in the
// terms rules are written in.
func compileGlobs(gs []string) []authz.Glob {
	out := make([]authz.Glob, 0, len(gs))
	for _, g := range gs {
		out = append(out, authz.CompileGlob(g))
	}
	return out
}

// UnmatchedUpstreams returns the upstream globs of the set's rules that match none of the
// backends named, so that check-config can refuse a set whose rule can never select anything
// (a misspelt backend name would otherwise leave the set silently empty).
func (ts ToolsetConfig) UnmatchedUpstreams(backends []string) []string {
	var out []string
	for _, r := range append(append([]SelectorConfig(nil), ts.Include...), ts.Exclude...) {
		g := r.Upstream
		if g == "" {
			g = "*"
		}
		p := authz.CompileGlob(g)
		matched := false
		for _, b := range backends {
			matched = matched || p.Match(b)
		}
		if !matched {
			out = append(out, g)
		}
	}
	return out
}
