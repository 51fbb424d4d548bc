package upstreams

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mcp-gateway/gateway/internal/mcpheader"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
)

// outgoing is one JSON-RPC request to a backend.
type outgoing struct {
	method  string      // JSON-RPC method, sent as Mcp-Method
	name    string      // backend-side name or URI for Mcp-Name; empty for methods without one
	version string      // MCP-Protocol-Version; empty means ProtocolVersion
	pass    http.Header // pass-through headers selected by the caller, filtered again here
	body    []byte
	probe   bool // a health probe: its failure does not trigger another probe
	// subject is the caller's verified token for a token-exchange backend; never sent itself.
	subject string
	// caller identifies the caller (issuer and subject) for its legacy sessions; optional.
	caller string
	// fromCaller marks a request made for a client's request (a call or list), as opposed to
	// the gateway's own discover, probe and listen requests.
	fromCaller bool
	reader     bytes.Reader // reads body for the request, set by post
	// vals backs the header values post sets (version, method, name), in the outgoing request
	// that is allocated anyway rather than in an array of their own.
	vals [3]string

	// visible and embedded are the caller's resource policy for the URIs in the response
	// (Call.Visible, Call.Embedded).
	visible, embedded func(Kind, Target) bool
}

// post POSTs o to b and returns the response once its headers have arrived. ctx bounds the
// whole request: its cancellation closes the backend connection.
//
// This runs once per forwarded request, so it avoids what http.NewRequestWithContext and
// Header.Clone would redo every time: the URL is parsed once into b.template, and the header map
// shares the backend's static values and the caller's pass-through values (a RoundTripper must
// not modify a request, so sharing read-only slices is safe) rather than copying them.
func (r *Registry) post(ctx context.Context, b *backend, o *outgoing) (*http.Response, error) {
	if err := b.breaker.allow(r.now(), o.probe); err != nil {
		return nil, err
	}
	if b.template == nil {
		return nil, fmt.Errorf("%w: %s: the URL does not make a request", ErrUnavailable, b.name)
	}
	req := b.template.WithContext(ctx)
	o.reader.Reset(o.body)
	// io.NopCloser over a *bytes.Reader is a body the transport knows to be in memory, so it
	// writes headers and body in one system call; any other type makes it flush the headers
	// on their own first.
	req.Body, req.ContentLength = io.NopCloser(&o.reader), int64(len(o.body))
	// The transport rewinds the body through GetBody when it retries on a keep-alive
	// connection the backend had closed.
	req.GetBody = o.getBody
	if len(o.body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
	}
	h := make(http.Header, len(b.header)+len(o.pass)+4)
	for k, vs := range b.header {
		h[k] = vs
	}
	wire.CopyPassThrough(h, o.pass)
	// One backing array for the values set here, rather than one slice each.
	vals := o.vals[:0]
	v := o.version
	if v == "" {
		v = ProtocolVersion
	}
	vals = append(vals, v, o.method)
	h[mcpheader.ProtocolVersion] = vals[0:1:1]
	h[mcpheader.Method] = vals[1:2:2]
	if o.name != "" {
		// Recomputed for the backend-side name (docs/protocol.md §8: recompute Mcp-Name after a rename).
		vals = append(vals, mcpheader.Encode(o.name))
		h[mcpheader.Name] = vals[2:3:3]
	}
	if b.creds != nil {
		// Set after the pass-through copy so nothing the caller passed can replace it.
		auth, err := b.creds.authorization(ctx, o.subject, o.fromCaller)
		if err != nil && !errors.Is(err, ErrUnavailable) {
			err = wire.Classify(ctx, b.name, err) // the caller left or the call timed out meanwhile
		}
		if err != nil {
			return nil, err
		}
		h["Authorization"] = []string{auth}
	}
	req.Header = h
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, wire.Classify(ctx, b.name, err)
	}
	return resp, nil
}

// getBody is the request's GetBody: a fresh reader over the same bytes.
func (o *outgoing) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.body)), nil
}
