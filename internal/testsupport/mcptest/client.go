//lint:file-ignore SA1019 pre-2026 clients and backends still use logging, sampling and roots, deprecated in 2026-07-28 (SEP-2577); the gateway serves them on purpose

package mcptest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ClientName and ClientVersion are the clientInfo every [Connect] client sends.
const (
	ClientName    = "mcptest-client"
	ClientVersion = "1.0.0"
)

// connectTimeout bounds the discover (or initialize) exchange of [Connect],
// so a broken server fails the test instead of hanging it.
const connectTimeout = 30 * time.Second

// ClientOption configures a client made by [Connect].
type ClientOption func(*clientConfig)

type clientConfig struct {
	header  http.Header
	base    http.RoundTripper
	opts    mcp.ClientOptions
	version string
	roots   []*mcp.Root
	retries int
}

// WithBearer sends Authorization: Bearer token on every HTTP request.
func WithBearer(token string) ClientOption {
	return WithHeader("Authorization", "Bearer "+token)
}

// WithHeader sends the header on every HTTP request, replacing any value the
// go-sdk set. Repeat the option for several headers.
func WithHeader(name, value string) ClientOption {
	return func(c *clientConfig) {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Set(name, value)
	}
}

// WithRetries lets the client reconnect a stream the server ended, and resend a request that
// failed, up to n times without progress (the go-sdk's MaxRetries, as a client left at its
// defaults does). Without it the client does neither: a retry would hide the gateway's own
// failures from tests.
func WithRetries(n int) ClientOption {
	return func(c *clientConfig) { c.retries = n }
}

// WithRoundTripper sets the transport the client's HTTP requests go
// through; the default is http.DefaultTransport.
func WithRoundTripper(rt http.RoundTripper) ClientOption {
	return func(c *clientConfig) { c.base = rt }
}

// WithElicitation installs an elicitation handler. The go-sdk then declares
// the elicitation capability (form) in every request's _meta and answers
// input_required results by calling h and retrying, unless
// [WithManualMRTR] is also given.
func WithElicitation(h func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) ClientOption {
	return func(c *clientConfig) { c.opts.ElicitationHandler = h }
}

// WithSampling installs a sampling/createMessage handler; the go-sdk then declares the
// sampling capability.
func WithSampling(h func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)) ClientOption {
	return func(c *clientConfig) { c.opts.CreateMessageHandler = h }
}

// WithRoots gives the client roots to answer roots/list with (the go-sdk declares the roots
// capability unless [WithCapabilities] says otherwise).
func WithRoots(roots ...*mcp.Root) ClientOption {
	return func(c *clientConfig) { c.roots = append(c.roots, roots...) }
}

// WithProgress installs a handler for notifications/progress. Progress is
// only sent for calls whose params carry a progressToken (set it with
// params.SetProgressToken).
func WithProgress(h func(context.Context, *mcp.ProgressNotificationClientRequest)) ClientOption {
	return func(c *clientConfig) { c.opts.ProgressNotificationHandler = h }
}

// WithLogging installs a handler for notifications/message. A 2026-07-28
// client gets them only for requests that ask for a level; a pre-2026 one
// after logging/setLevel (ClientSession.SetLoggingLevel).
func WithLogging(h func(context.Context, *mcp.LoggingMessageRequest)) ClientOption {
	return func(c *clientConfig) { c.opts.LoggingMessageHandler = h }
}

// WithResourceUpdated installs a handler for notifications/resources/updated,
// which a pre-2026 client gets on its GET stream after resources/subscribe.
func WithResourceUpdated(h func(context.Context, *mcp.ResourceUpdatedNotificationRequest)) ClientOption {
	return func(c *clientConfig) { c.opts.ResourceUpdatedHandler = h }
}

// WithToolListChanged installs a handler for notifications/tools/list_changed, which a
// pre-2026 client gets on its GET stream.
func WithToolListChanged(h func(context.Context, *mcp.ToolListChangedRequest)) ClientOption {
	return func(c *clientConfig) { c.opts.ToolListChangedHandler = h }
}

// ResourceUpdates collects the URIs of the notifications/resources/updated a
// client receives; install it with WithResourceUpdated(u.Handler).
type ResourceUpdates struct {
	mu  sync.Mutex
	got []string
}

// Handler records r's URI.
func (u *ResourceUpdates) Handler(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	u.got = append(u.got, r.Params.URI)
	u.mu.Unlock()
}

// Seen returns the URIs received so far, oldest first.
func (u *ResourceUpdates) Seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.got)
}

// Drain returns the URIs received so far and forgets them.
func (u *ResourceUpdates) Drain() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	got := u.got
	u.got = nil
	return got
}

// WithManualMRTR turns off the go-sdk's automatic MRTR retries, so CallTool
// returns an input_required result (NeedsInput reports true) and the test
// performs the retry itself, for example to inspect or tamper with
// requestState.
func WithManualMRTR() ClientOption {
	return func(c *clientConfig) { c.opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true} }
}

// WithProtocolVersion makes the client start with another protocol version,
// for example "2025-11-25" for the legacy initialize handshake.
func WithProtocolVersion(v string) ClientOption {
	return func(c *clientConfig) { c.version = v }
}

// WithCapabilities sets the client capabilities declared on each request
// (the go-sdk adds elicitation when a handler is installed).
func WithCapabilities(caps *mcp.ClientCapabilities) ClientOption {
	return func(c *clientConfig) { c.opts.Capabilities = caps }
}

// Accept returns an elicitation handler that accepts with content.
func Accept(content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

// Decline returns an elicitation handler that declines.
func Decline() func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
}

// Connect connects a go-sdk client (2026-07-28 unless
// [WithProtocolVersion]) to the MCP endpoint at url and closes the session
// when tb ends. With 2026-07-28 the go-sdk sends server/discover and no
// initialize; with a legacy version it runs initialize and
// notifications/initialized and then uses Mcp-Session-Id.
//
// Each client has its own connection pool (unless [WithRoundTripper]),
// closed with the session, so no idle connection outlives the test and
// delays a server's graceful shutdown.
func Connect(tb testing.TB, url string, opts ...ClientOption) *mcp.ClientSession {
	tb.Helper()
	cs, closeIdle, err := dial(tb.Context(), url, opts)
	if err != nil {
		tb.Fatalf("mcptest: connecting to %s: %v", url, err)
	}
	tb.Cleanup(func() {
		_ = cs.Close()
		closeIdle()
	})
	return cs
}

// Dial is [Connect] for callers without a testing.TB, such as benchmarks
// run from a harness; the caller closes the session.
func Dial(ctx context.Context, url string, opts ...ClientOption) (*mcp.ClientSession, error) {
	cs, _, err := dial(ctx, url, opts)
	return cs, err
}

func dial(ctx context.Context, url string, opts []ClientOption) (*mcp.ClientSession, func(), error) {
	var cfg clientConfig
	for _, o := range opts {
		o(&cfg)
	}
	base, closeIdle := cfg.base, func() {}
	if base == nil {
		own := http.DefaultTransport.(*http.Transport).Clone()
		base, closeIdle = own, own.CloseIdleConnections
	}
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: &headerTransport{base: base, header: cfg.header}},
		// A retried POST would hide the gateway's own failures from tests.
		MaxRetries: -1,
	}
	if cfg.retries > 0 {
		transport.MaxRetries = cfg.retries
	}
	client := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: ClientVersion}, &cfg.opts)
	client.AddRoots(cfg.roots...)
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: cfg.version})
	if err != nil {
		closeIdle()
		return nil, nil, err
	}
	return cs, closeIdle, nil
}

// headerTransport adds fixed headers to every request. It clones the
// request, as http.RoundTripper implementations must not modify it.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for name, values := range t.header {
		r.Header[name] = append([]string(nil), values...)
	}
	return t.base.RoundTrip(r)
}

// RequestHeaders returns the headers of a well-formed 2026-07-28 Streamable HTTP request for
// method, with Mcp-Name when name is set, for tests that speak the wire protocol by hand.
func RequestHeaders(method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}
