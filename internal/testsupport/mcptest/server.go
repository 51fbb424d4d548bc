package mcptest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EndpointPath is the path of the MCP endpoint on every server this package
// starts.
const EndpointPath = "/mcp"

// ServerVersion is the version every test server reports in serverInfo.
const ServerVersion = "1.0.0"

// Server is a running go-sdk MCP server on a loopback httptest server. It
// records every HTTP exchange and what its slow tool observed.
type Server struct {
	name   string
	mcp    *mcp.Server
	http   *httptest.Server
	rec    *recorder
	slow   slowTracker
	legacy bool

	closeOnce sync.Once
}

// Option configures a server started by [StartServer] or [StartLegacyServer].
type Option func(*serverConfig)

type serverConfig struct {
	noDefaults    bool
	jsonResponse  bool
	pageSize      int
	cacheable     *mcp.Cacheable
	instructions  string
	required      http.Header
	tools         []toolEntry
	prompts       []promptEntry
	resources     []resourceEntry
	templates     []templateEntry
	completion    func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	completionSet bool
	subscribe     bool
	noListChanged bool
	logger        *slog.Logger
	middleware    func(http.Handler) http.Handler
	routes        map[string]http.Handler
}

type toolEntry struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

type promptEntry struct {
	prompt  *mcp.Prompt
	handler mcp.PromptHandler
}

type resourceEntry struct {
	resource *mcp.Resource
	handler  mcp.ResourceHandler
}

type templateEntry struct {
	template *mcp.ResourceTemplate
	handler  mcp.ResourceHandler
}

// WithoutDefaults starts the server without the default tools, resource,
// template, prompt and completion handler, so that only what other options
// add is served.
func WithoutDefaults() Option { return func(c *serverConfig) { c.noDefaults = true } }

// WithTool adds a tool with a raw handler (arguments arrive as
// json.RawMessage in req.Params.Arguments).
func WithTool(t *mcp.Tool, h mcp.ToolHandler) Option {
	return func(c *serverConfig) { c.tools = append(c.tools, toolEntry{t, h}) }
}

// WithPrompt adds a prompt.
func WithPrompt(p *mcp.Prompt, h mcp.PromptHandler) Option {
	return func(c *serverConfig) { c.prompts = append(c.prompts, promptEntry{p, h}) }
}

// WithResource adds a concrete resource.
func WithResource(r *mcp.Resource, h mcp.ResourceHandler) Option {
	return func(c *serverConfig) { c.resources = append(c.resources, resourceEntry{r, h}) }
}

// WithResourceTemplate adds a resource template.
func WithResourceTemplate(t *mcp.ResourceTemplate, h mcp.ResourceHandler) Option {
	return func(c *serverConfig) { c.templates = append(c.templates, templateEntry{t, h}) }
}

// WithCompletion replaces the default completion handler; nil removes
// completion support (the completions capability is then not advertised).
func WithCompletion(h func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)) Option {
	return func(c *serverConfig) { c.completion, c.completionSet = h, true }
}

// WithRequiredHeader makes the server answer 401 to any request whose
// header name does not equal value exactly, like a backend that expects the
// gateway's own credential. The request is still recorded. Repeat the
// option to require several headers.
func WithRequiredHeader(name, value string) Option {
	return func(c *serverConfig) {
		if c.required == nil {
			c.required = http.Header{}
		}
		c.required.Set(name, value)
	}
}

// WithMiddleware wraps the MCP endpoint's handler (not the other routes), for example in a
// bearer-token check.
func WithMiddleware(m func(http.Handler) http.Handler) Option {
	return func(c *serverConfig) { c.middleware = m }
}

// WithRoute serves h at path beside the MCP endpoint, for example the protected resource
// metadata.
func WithRoute(path string, h http.Handler) Option {
	return func(c *serverConfig) {
		if c.routes == nil {
			c.routes = map[string]http.Handler{}
		}
		c.routes[path] = h
	}
}

// WithSubscriptions makes the server accept resource subscriptions (it then advertises
// resources.subscribe), so listens can ask it for resources/updated.
func WithSubscriptions() Option { return func(c *serverConfig) { c.subscribe = true } }

// WithoutListChanged makes the server declare no list_changed notification for its tools,
// prompts and resources, as a server whose lists never change does (the Python SDK's default).
func WithoutListChanged() Option { return func(c *serverConfig) { c.noListChanged = true } }

// WithJSONResponse makes the server answer with application/json instead of
// an SSE stream. go-sdk v1.8.0 then has nowhere to put notifications made
// during a stateless request, so progress notifications are lost.
func WithJSONResponse() Option { return func(c *serverConfig) { c.jsonResponse = true } }

// WithPageSize sets how many items a list page holds, to exercise the
// gateway's cursor handling. Zero keeps the go-sdk default (1000).
func WithPageSize(n int) Option { return func(c *serverConfig) { c.pageSize = n } }

// WithCacheHints sets ttlMs and cacheScope ("public" or "private") on every
// cacheable result: server/discover, the list methods and resources/read.
func WithCacheHints(ttlMs int, scope string) Option {
	return func(c *serverConfig) { c.cacheable = &mcp.Cacheable{TTLMs: ttlMs, CacheScope: scope} }
}

// WithInstructions sets the instructions the server reports.
func WithInstructions(s string) Option { return func(c *serverConfig) { c.instructions = s } }

// WithLogger gives the go-sdk server and HTTP handler a logger; the default
// discards everything.
func WithLogger(l *slog.Logger) Option { return func(c *serverConfig) { c.logger = l } }

// StartServer starts a go-sdk MCP server named name in the stateless
// 2026-07-28 mode on a loopback httptest server, closed when tb ends.
//
// Unless [WithoutDefaults] is given it serves the default tools
//
//	echo{text}        returns text
//	add{a,b}          returns a+b (integers) as text and structuredContent {"sum":n}
//	progress{steps}   sends steps progress notifications, then returns "done <steps>"
//	slow{ms}          sleeps ms milliseconds or until cancelled; see [Server.SlowStats]
//	ask_name          MRTR: input_required with a form elicitation "name", then "Hello, <name>"
//	fail              returns isError with the text "failed on purpose"
//	whoami            returns which request headers the backend saw (see [WhoAmI])
//
// the resource mem://readme, the template mem://items/{id}, the prompt
// greet{name} and completion of greet's name and the template's id.
func StartServer(tb testing.TB, name string, opts ...Option) *Server {
	tb.Helper()
	return start(tb, name, false, opts)
}

// StartLegacyServer starts the same server as [StartServer] in the stateful
// 2025-11-25 mode: clients must initialize and then send Mcp-Session-Id.
// A modern request (one carrying the 2026-07-28 _meta) is answered with
// -32022 naming the legacy versions. ask_name still works: the go-sdk turns
// its input_required result into a server-to-client elicitation request.
func StartLegacyServer(tb testing.TB, name string, opts ...Option) *Server {
	tb.Helper()
	return start(tb, name, true, opts)
}

func start(tb testing.TB, name string, legacy bool, opts []Option) *Server {
	tb.Helper()
	var cfg serverConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{name: name, rec: &recorder{}, legacy: legacy}
	s.slow.changed = make(chan struct{})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: name, Version: ServerVersion}, s.serverOptions(&cfg))
	s.register(&cfg)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:    !legacy,
		JSONResponse: cfg.jsonResponse,
		Logger:       cfg.logger,
		// A closed response stream is a cancellation (spec §2.1); without
		// this the go-sdk would let the slow handler run on.
		PropagateRequestCancellation: true,
	})
	mux := http.NewServeMux()
	var endpoint http.Handler = requireHeaders(cfg.required, handler)
	if cfg.middleware != nil {
		endpoint = cfg.middleware(endpoint)
	}
	mux.Handle(EndpointPath, endpoint)
	for path, h := range cfg.routes {
		mux.Handle(path, h)
	}
	s.http = httptest.NewServer(s.rec.wrap(mux))
	tb.Cleanup(s.Close)
	return s
}

func (s *Server) serverOptions(cfg *serverConfig) *mcp.ServerOptions {
	o := &mcp.ServerOptions{
		Instructions: cfg.instructions,
		Logger:       cfg.logger,
		PageSize:     cfg.pageSize,
	}
	if cfg.subscribe {
		o.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	if cfg.noListChanged {
		// Declared, so the SDK adds none with listChanged; a SubscribeHandler still adds
		// resources.subscribe.
		o.Capabilities = &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
			Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}}
	}
	if cfg.cacheable != nil {
		hints := *cfg.cacheable
		o.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { *c = hints }
	}
	switch {
	case cfg.completionSet:
		o.CompletionHandler = cfg.completion
	case !cfg.noDefaults:
		o.CompletionHandler = defaultCompletion
	}
	return o
}

func (s *Server) register(cfg *serverConfig) {
	if !cfg.noDefaults {
		s.addDefaults()
	}
	for _, t := range cfg.tools {
		s.mcp.AddTool(t.tool, t.handler)
	}
	for _, p := range cfg.prompts {
		s.mcp.AddPrompt(p.prompt, p.handler)
	}
	for _, r := range cfg.resources {
		s.mcp.AddResource(r.resource, r.handler)
	}
	for _, t := range cfg.templates {
		s.mcp.AddResourceTemplate(t.template, t.handler)
	}
}

// requireHeaders answers 401 unless every header in want is present with
// exactly the wanted value.
func requireHeaders(want http.Header, next http.Handler) http.Handler {
	if len(want) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range want {
			if r.Header.Get(name) != want.Get(name) {
				http.Error(w, fmt.Sprintf("missing or wrong %s header", name), http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Name is the name the server was started with; it is also its serverInfo name.
func (s *Server) Name() string { return s.name }

// URL is the absolute URL of the MCP endpoint, for example
// http://127.0.0.1:41234/mcp.
func (s *Server) URL() string { return s.http.URL + EndpointPath }

// MCP is the underlying go-sdk server, for adding features after start.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Requests returns a copy of every exchange received since start or the last
// [Server.Reset], oldest first. An exchange whose response is still being
// written has Status 0.
func (s *Server) Requests() []Exchange { return s.rec.all() }

// Forwarded returns the recorded exchanges except server/discover, which a gateway sends on its
// own (health probes, capability discovery) at any time, and the lists, which it reads on its own
// to route, pin and check the names a call uses: what is left is what a client's request could
// have made the backend run.
func (s *Server) Forwarded() []Exchange {
	var out []Exchange
	for _, e := range s.rec.all() {
		switch e.Header.Get("Mcp-Method") {
		case "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		default:
			out = append(out, e)
		}
	}
	return out
}

// RequestsOf returns the recorded exchanges whose Mcp-Method header is method, oldest first: the
// requests of one kind, without the probes and discovery a gateway sends on its own.
func (s *Server) RequestsOf(method string) []Exchange {
	var out []Exchange
	for _, e := range s.rec.all() {
		if e.Header.Get("Mcp-Method") == method {
			out = append(out, e)
		}
	}
	return out
}

// Reset forgets the recorded exchanges.
func (s *Server) Reset() { s.rec.reset() }

// Close stops the HTTP server, waiting for in-flight requests. It is
// registered with tb.Cleanup and safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		// Dropping the connections first cancels handlers still streaming
		// (slow, progress), so Close never waits on them.
		s.http.CloseClientConnections()
		s.http.Close()
	})
}

// slowTracker counts the slow tool's calls and lets tests wait for a count.
type slowTracker struct {
	mu      sync.Mutex
	stats   SlowStats
	changed chan struct{}
}
