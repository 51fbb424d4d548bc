package intercept

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/upstreams"
	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// MethodList is the JSON-RPC method with which an Interceptor Server lists the interceptors it
// hosts: it invokes nothing, so operator tooling may send it.
const MethodList = "interceptors/list"

// Probe is what an Interceptor Server answered check-config --online.
type Probe struct {
	// Modern says the server speaks 2026-07-28 (server/discover); otherwise a pre-2026 session
	// (initialize).
	Modern bool
	// Protocol is the MCP revision it speaks.
	Protocol string
	// Extension says its capabilities declare ExtensionID.
	Extension bool
}

// ProbeServer asks the Interceptor Server of c (not a webhook) what the gateway's first
// invocation would learn, and invokes nothing: server/discover (initialize, for a pre-2026
// server) through the client an invocation uses (its TLS, headers and credentials), then
// interceptors/list, which must list c's interceptor with c's type. A server that lists it
// fails every invocation (-32602 for an unknown name), and one of the other type has its
// answers routed wrongly.
func ProbeServer(ctx context.Context, c Config) (*Probe, error) {
	c = c.WithDefaults()
	b, err := probeBackend(c)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	d, err := b.Discover(ctx)
	if err != nil {
		return nil, err
	}
	p := &Probe{Modern: b.Protocol() == backend.ProtocolVersion, Protocol: b.Protocol()}
	_, p.Extension = d.Caps.Extensions[ExtensionID]
	body := `{"jsonrpc":"2.0","id":1,"method":"` + MethodList + `","params":{"_meta":` + modernMeta + `}}`
	m, err := b.RoundTrip(ctx, &backend.Request{Method: MethodList, Body: []byte(body)})
	if err != nil {
		return p, err
	}
	if m.Error != nil {
		return p, fmt.Errorf("%w: %s answered error %d", upstreams.ErrBadResponse, MethodList, m.Error.Code)
	}
	var list struct {
		Interceptors []hosted `json:"interceptors"`
	}
	if err := json.Unmarshal(m.Result, &list); err != nil {
		return p, fmt.Errorf("%w: %s: %v", upstreams.ErrBadResponse, MethodList, err)
	}
	i := slices.IndexFunc(list.Interceptors, func(h hosted) bool { return h.Name == c.Interceptor })
	switch {
	case i < 0:
		return p, fmt.Errorf("the server does not host interceptor %q (%s lists %d)", c.Interceptor, MethodList, len(list.Interceptors))
	case list.Interceptors[i].Type != c.Type:
		return p, fmt.Errorf("interceptor %q is a %s interceptor on the server, configured as %s", c.Interceptor, list.Interceptors[i].Type, c.Type)
	}
	return p, nil
}

// hosted is one entry of an interceptors/list answer, as far as a probe reads it.
type hosted struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ProbeWebhook connects to the webhook of c, TLS included, and fetches its client-credentials
// token when c has one, sending the webhook nothing: every POST to it is an invocation, and its
// contract has no request a probe could send. It returns what was reached (backend.Reach) and
// whether a token was fetched.
func ProbeWebhook(ctx context.Context, c Config) (reached string, token bool, err error) {
	c = c.WithDefaults()
	if reached, err = backend.Reach(ctx, c.URL, c.TLS, c.ConnectTimeout); err != nil {
		return "", false, err
	}
	b, err := probeBackend(c)
	if err != nil {
		return reached, false, err
	}
	defer b.Close()
	token, err = backend.ProbeOwnToken(ctx, b)
	return reached, token, err
}

// probeBackend is the client of an interceptor for a probe: the invocations' client, logging
// nothing.
func probeBackend(c Config) (*backend.Backend, error) {
	return backend.New(c.backendConfig(), &backend.Env{Log: slog.New(slog.DiscardHandler), Now: time.Now,
		Names: names.New("__", false, nil), Results: bodyread.NewBudget(DefaultMaxAnswerBytesInFlight)})
}
