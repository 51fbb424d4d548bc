package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Request is one JSON-RPC request to a backend.
type Request struct {
	// Method is the JSON-RPC method, sent as Mcp-Method.
	Method string
	// Name is the backend-side name or URI for Mcp-Name; empty for methods without one.
	Name string
	// Version is sent as MCP-Protocol-Version; empty means ProtocolVersion.
	Version string
	// Header holds the pass-through headers selected by the caller, filtered again here.
	Header http.Header
	// Body is the JSON-RPC request.
	Body []byte
	// Subject is the caller's verified token for a token-exchange backend; never sent itself.
	// SubjectKey is SubjectKey(Subject) when the caller has it already, else "".
	Subject, SubjectKey string
	// Caller identifies the caller (authz.Principal.CallerKey) for its legacy sessions, a per-user
	// backend's token and a token-exchange backend's auth.subjectIssuers; required with Subject.
	Caller string
	// UserToken is the caller's token for a per-user backend (Auth.Type userOAuth), when the
	// pipeline looked it up already; sent as the request's Authorization.
	UserToken string
	// FromCaller marks a request made for a client's request (a call or list), as opposed to
	// the gateway's own discover, probe and listen requests.
	FromCaller bool
	// ForCaller marks a request made for a client's request that carries none of its
	// credentials (an interceptor's invocation): like FromCaller, its failure is charged to
	// Caller for the circuit breaker.
	ForCaller bool
	// Shared marks a request made for several callers at once (a shared listen stream): its
	// failure counts for the circuit breaker only when nothing was sent (wire.NotSent), since
	// any one of those callers may have caused any other.
	Shared bool
	// Results, when set, is what the response is read against instead of Env.Results: a share
	// of it (bodyread.NewShare), so that the responses of one caller are bounded within the
	// replica's. Its refusal is ErrResultBudget, as the replica's is.
	Results *bodyread.Budget

	probe  bool         // a health probe: its failure does not trigger another probe
	reader bytes.Reader // reads Body for the request, set by Post
	// vals backs the header values Post sets (version, method, name), in the outgoing request
	// that is allocated anyway rather than in an array of their own.
	vals [3]string

	// visible and embedded are the caller's resource policy for the URIs in the response
	// (Call.Visible, Call.Embedded).
	visible, embedded func(names.Kind, names.Target) bool
	// completion is what a completion/complete of a resource template asks, so that values
	// naming a resource visible hides are not relayed (names.Completion).
	completion *names.Completion
	// uri is a resources/read's URI as the caller sent it (Stream.uri).
	uri string
}

// Post POSTs o to b and returns the response once its headers have arrived, within the
// backend's circuit breaker and with its credentials. ctx bounds the whole request: its
// cancellation closes the backend connection. The caller records the request (Record).
//
// This runs once per forwarded request, so it avoids what http.NewRequestWithContext and
// Header.Clone would redo every time: the URL is parsed once into b.template, and the header map
// shares the backend's static values and the caller's pass-through values (a RoundTripper must
// not modify a request, so sharing read-only slices is safe) rather than copying them.
func (b *Backend) Post(ctx context.Context, o *Request) (*http.Response, error) {
	if err := admit(b, o.probe, o.charge()); err != nil {
		return nil, err
	}
	if b.template == nil {
		return nil, fmt.Errorf("%w: %s: the URL does not make a request", wire.ErrUnavailable, b.name)
	}
	rctx := ctx
	if b.transport != nil && unscrubbed(b.rt) == http.RoundTripper(b.transport) {
		// Over TLS Classify cannot tell from the error alone whether the handshake failed,
		// before any byte of the request was written. The direct client of plain http fails
		// before a send only by the dial errors Classify knows, and spares a plain call the
		// watch's allocations.
		rctx = wire.WatchConnect(ctx)
	}
	req := b.template.WithContext(rctx)
	o.reader.Reset(o.Body)
	// io.NopCloser over a *bytes.Reader is a body the transport knows to be in memory, so it
	// writes headers and body in one system call; any other type makes it flush the headers
	// on their own first.
	req.Body, req.ContentLength = io.NopCloser(&o.reader), int64(len(o.Body))
	// The transport rewinds the body through GetBody when it retries on a keep-alive
	// connection the backend had closed.
	req.GetBody = o.getBody
	if len(o.Body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	h := make(http.Header, len(b.header)+len(o.Header)+4)
	for k, vs := range b.header {
		h[k] = vs
	}
	wire.CopyPassThrough(h, o.Header)
	// One backing array for the values set here, rather than one slice each.
	vals := o.vals[:0]
	v := o.Version
	if v == "" {
		v = ProtocolVersion
	}
	vals = append(vals, v, o.Method)
	h[mcpheader.ProtocolVersion] = vals[0:1:1]
	h[mcpheader.Method] = vals[1:2:2]
	if o.Name != "" {
		// Recomputed for the backend-side name (docs/protocol.md §8: recompute Mcp-Name after a rename).
		vals = append(vals, b.names.value(o.Name))
		h[mcpheader.Name] = vals[2:3:3]
	}
	if b.creds != nil {
		// Set after the pass-through copy so nothing the caller passed can replace it.
		auth, err := b.authorization(ctx, o)
		if err != nil && !errors.Is(err, wire.ErrUnavailable) && !errors.Is(err, ErrIssuerNotExchanged) {
			err = wire.Classify(ctx, b.name, err) // the caller left or the call timed out meanwhile
		}
		if err != nil {
			return nil, err
		}
		if auth != "" {
			h["Authorization"] = []string{auth}
		}
	}
	req.Header = h
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, wire.Classify(rctx, b.name, err)
	}
	if resp, err = b.names.retry(b, req, o, resp); err != nil {
		return nil, wire.Classify(ctx, b.name, err)
	}
	if resp.StatusCode == http.StatusUnauthorized && b.PerUser() {
		return nil, b.userRefused(ctx, o, resp)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		// Throttled, whatever the body says: an answer (the backend is up), for the caller to
		// retry after the wait it names.
		return nil, wire.RateLimited(b.name, resp, b.env.Now())
	}
	return resp, nil
}

// charge is who a failure of o is charged to for the circuit breaker (breaker.go): the
// authenticated caller it was made for, else (chargeNone) no one caller: the gateway's own
// requests, and without authentication every caller's, since nothing tells those callers apart.
func (o *Request) charge() string {
	switch {
	case o.Shared:
		return chargeShared
	case o.Caller != "" && (o.FromCaller || o.ForCaller):
		return o.Caller
	}
	return chargeNone
}

// results is the budget o's response is read against: Results, or b's Env.Results.
func (o *Request) results(b *Backend) *bodyread.Budget {
	if o.Results != nil {
		return o.Results
	}
	return b.env.Results
}

// getBody is the request's GetBody: a fresh reader over the same bytes.
func (o *Request) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.Body)), nil
}
