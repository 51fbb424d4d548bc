package upstreams

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// errCallTimeout is the cancellation cause of a backend call that ran out of its timeout, so a
// timeout can be told apart from the caller going away.
var errCallTimeout = errors.New("backend call timeout")

// errTooLarge marks a body or event over the backend's MaxResponseBytes.
var errTooLarge = errors.New("response exceeds the size limit")

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
	copyPassThrough(h, o.pass)
	// One backing array for the values set here, rather than one slice each.
	vals := make([]string, 0, 4)
	v := o.version
	if v == "" {
		v = ProtocolVersion
	}
	vals = append(vals, v, o.method)
	h[mcpheader.ProtocolVersion] = vals[0:1:1]
	h[mcpheader.Method] = vals[1:2:2]
	if o.name != "" {
		// Recomputed for the backend-side name (digest §8: recompute Mcp-Name after a rename).
		vals = append(vals, mcpheader.Encode(o.name))
		h[mcpheader.Name] = vals[2:3:3]
	}
	if b.creds != nil {
		// Set after the pass-through copy so nothing the caller passed can replace it.
		auth, err := b.creds.authorization(ctx, o.subject, o.fromCaller)
		if err != nil && !errors.Is(err, ErrUnavailable) {
			err = classify(ctx, b.name, err) // the caller left or the call timed out meanwhile
		}
		if err != nil {
			return nil, err
		}
		h["Authorization"] = []string{auth}
	}
	req.Header = h
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, classify(ctx, b.name, err)
	}
	return resp, nil
}

// getBody is the request's GetBody: a fresh reader over the same bytes.
func (o *outgoing) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.body)), nil
}

// copyPassThrough copies the headers a caller may pass to a backend: Mcp-Param-* (digest §2.2:
// intermediaries MUST forward them), W3C trace context and the request id. Anything else, in
// particular Authorization and Cookie, is dropped even if the caller passed it, and a configured
// static header is never overridden.
func copyPassThrough(dst, src http.Header) {
	for k, vs := range src {
		ck := http.CanonicalHeaderKey(k)
		if !passThrough(ck) || len(vs) == 0 {
			continue
		}
		if _, set := dst[ck]; !set {
			dst[ck] = vs
		}
	}
}

func passThrough(canonical string) bool {
	switch canonical {
	case mcpheader.TraceParent, mcpheader.TraceState, mcpheader.Baggage, mcpheader.RequestID:
		return true
	}
	return strings.HasPrefix(canonical, mcpheader.ParamPrefix) && len(canonical) > len(mcpheader.ParamPrefix)
}

// classify turns a transport error into ErrTimeout, ErrUnavailable, or the caller's own context
// error when the caller went away.
func classify(ctx context.Context, name string, err error) error {
	if errors.Is(context.Cause(ctx), errCallTimeout) {
		return fmt.Errorf("%w: %s: no complete answer within the timeout", ErrTimeout, name)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("upstreams: %s: %w", name, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the URL, which may carry a secret in its query
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %s: %v", ErrTimeout, name, err)
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, name, err)
}

// readBody reads at most max bytes of body into buf, and errTooLarge when there are more. It
// reads straight into buf's spare capacity (a pooled buffer has plenty).
func readBody(buf *bytes.Buffer, body io.Reader, max int64) error {
	b, err := bodyread.Append(buf.AvailableBuffer(), body, max)
	buf.Write(b) // the bytes are already in place unless Append had to grow; this sets the length
	if errors.Is(err, bodyread.ErrTooLarge) {
		return errTooLarge
	}
	return err
}

// mediaType reports whether a Content-Type is JSON or SSE.
func mediaType(ct string) (isJSON, isSSE bool) {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	return strings.EqualFold(ct, "application/json"), strings.EqualFold(ct, "text/event-stream")
}

// statusError is the error for a response that carries no usable JSON-RPC body: a gateway-type
// status from the backend (502, 503, 504, typically its own proxy) is ErrUnavailable, anything
// else ErrBadResponse.
func statusError(name string, status int, why string) error {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%w: %s: HTTP %d: %s", ErrUnavailable, name, status, why)
	}
	return fmt.Errorf("%w: %s: HTTP %d: %s", ErrBadResponse, name, status, why)
}

// decodeResponse strictly decodes one backend message that must be a JSON-RPC response.
func decodeResponse(name string, status int, data []byte, max int64) (*jsonrpc.Message, error) {
	m, err := jsonrpc.DecodeMessage(data, jsonLimits(max))
	if err != nil {
		return nil, statusError(name, status, "body is not a JSON-RPC message")
	}
	if !m.IsResponse() {
		return nil, statusError(name, status, "body is not a JSON-RPC response")
	}
	if m.Error == nil && (status < 200 || status > 299) {
		return nil, statusError(name, status, "success body with an error status")
	}
	return m, nil
}

// jsonLimits lets one string be as large as the whole message (a base64 blob in
// resources/read), keeping the default depth bound.
func jsonLimits(max int64) jsonrpc.Limits {
	return jsonrpc.Limits{MaxTokenBytes: int(max)}
}
