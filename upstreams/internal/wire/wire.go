// Package wire holds what every client of a backend in upstreams shares, whatever the
// backend's era: the sentinel errors and the classification of transport failures, the
// reading and decoding of a response body, the event-stream reader, the headers a caller
// may pass through, the MCP method names the packages route on, and the byte-faithful edits of
// scanned JSON (json.go).
package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/mcpheader"
)

// Sentinel errors, re-exported (and documented) by upstreams.
var (
	ErrUnavailable = errors.New("upstreams: backend unavailable")
	ErrTimeout     = errors.New("upstreams: backend timeout")
	ErrBadResponse = errors.New("upstreams: bad backend response")
	ErrCredentials = errors.New("upstreams: backend credentials unavailable")
)

// ErrCallTimeout is the cancellation cause of a backend call that ran out of its timeout, so a
// timeout can be told apart from the caller going away.
var ErrCallTimeout = errors.New("backend call timeout")

// ErrTooLarge marks a body or event over the backend's MaxResponseBytes.
var ErrTooLarge = errors.New("response exceeds the size limit")

// CopyPassThrough copies the headers a caller may pass to a backend: Mcp-Param-*
// (intermediaries MUST forward them,
// https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http),
// W3C trace context and the request id. Anything else, in
// particular Authorization and Cookie, is dropped even if the caller passed it, and a configured
// static header is never overridden.
func CopyPassThrough(dst, src http.Header) {
	for k, vs := range src {
		ck := http.CanonicalHeaderKey(k)
		if !PassThrough(ck) || len(vs) == 0 {
			continue
		}
		if _, set := dst[ck]; !set {
			dst[ck] = vs
		}
	}
}

func PassThrough(canonical string) bool {
	switch canonical {
	case mcpheader.TraceParent, mcpheader.TraceState, mcpheader.Baggage, mcpheader.RequestID:
		return true
	}
	return strings.HasPrefix(canonical, mcpheader.ParamPrefix) && len(canonical) > len(mcpheader.ParamPrefix)
}

// Classify turns a transport error into ErrTimeout, ErrUnavailable, or the caller's own context
// error when the caller went away.
func Classify(ctx context.Context, name string, err error) error {
	if errors.Is(context.Cause(ctx), ErrCallTimeout) {
		return fmt.Errorf("%w: %s: no complete answer within the timeout", ErrTimeout, name)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("upstreams: %s: %w", name, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error repeats the URL, which may carry a secret in its query
	}
	if errors.Is(err, ErrRateLimited) {
		return err // held back unsent for a wait a 429 asked for: an answer, not a failure
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return markNotSent(ctx, err, fmt.Errorf("%w: %s: %v", ErrTimeout, name, err))
	}
	return markNotSent(ctx, err, fmt.Errorf("%w: %s: %v", ErrUnavailable, name, err))
}

// connectWatch is what WatchConnect records of one request's latest attempt at a connection
// (the transport retries on a new one only when nothing was written on the last): watchGetting
// from the transport's asking for a connection until it got one, for TLS after the handshake
// completed, then watchGot.
type connectWatch struct{ state atomic.Int32 }

const (
	watchGetting = 1 + iota
	watchGot
)

type connectWatchKey struct{}

// WatchConnect returns ctx for an HTTP request such that Classify, given the returned context,
// knows whether the transport got a connection for the request. Until it has, not a byte of the
// request was written, however the dial or the TLS handshake failed: over TCP a server's TLS
// alert arrives as a bare net.OpError ("remote error"), the same as an alert that ends a
// connection after the request was written, so the error alone cannot tell the two apart. A
// transport that reports no connection through net/http/httptrace leaves Classify to the error.
func WatchConnect(ctx context.Context) context.Context {
	w := new(connectWatch)
	ctx = context.WithValue(ctx, connectWatchKey{}, w)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) { w.state.Store(watchGetting) },
		GotConn: func(httptrace.GotConnInfo) { w.state.Store(watchGot) },
	})
}

// notSentErr marks a failure met before any byte of the request reached the backend
// (NotSent).
type notSentErr struct{ error }

func (e notSentErr) Unwrap() error { return e.error }

// NotSent reports whether err, from Classify, failed before anything of the request was sent:
// the connection could not be made (refused, unreachable, a name that does not resolve, the
// connect timeout) or its TLS handshake failed. Whoever sent the request, the backend could not
// have been reached: no caller's arguments or payload caused it.
func NotSent(err error) bool {
	return errors.As(err, new(notSentErr))
}

// markNotSent wraps classified, the classification of the transport's err, as notSentErr when
// err is a failure to connect: for a request made with WatchConnect's context, whenever the
// transport got no connection for it; otherwise by the error's type, for the errors only a dial
// or a handshake returns.
func markNotSent(ctx context.Context, err, classified error) error {
	if w, ok := ctx.Value(connectWatchKey{}).(*connectWatch); ok {
		switch w.state.Load() {
		case watchGetting:
			return notSentErr{classified}
		case watchGot:
			return classified
		}
	}
	var op *net.OpError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	if (errors.As(err, &op) && op.Op == "dial") || errors.As(err, &header) || errors.As(err, &alert) ||
		errors.As(err, new(*tls.CertificateVerificationError)) {
		return notSentErr{classified}
	}
	return classified
}

// ReadBody reads at most max bytes of body into buf, and ErrTooLarge when there are more. It
// reads straight into buf's spare capacity (a pooled buffer has plenty).
func ReadBody(buf *bytes.Buffer, body io.Reader, max int64) error {
	b, err := bodyread.Append(buf.AvailableBuffer(), body, max)
	buf.Write(b) // the bytes are already in place unless Append had to grow; this sets the length
	if errors.Is(err, bodyread.ErrTooLarge) {
		return ErrTooLarge
	}
	return err
}

// MediaType reports whether a Content-Type is JSON or SSE.
func MediaType(ct string) (isJSON, isSSE bool) {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	return strings.EqualFold(ct, "application/json"), strings.EqualFold(ct, "text/event-stream")
}

// StatusError is the error for a response that carries no usable JSON-RPC body: a gateway-type
// status from the backend (502, 503, 504, typically its own proxy, a 503's Retry-After
// notwithstanding) is ErrUnavailable, anything else ErrBadResponse. A 429 never comes here: the
// requests a caller's answer depends on read it first (RateLimited).
func StatusError(name string, status int, why string) error {
	switch status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%w: %s: HTTP %d: %s", ErrUnavailable, name, status, why)
	}
	return fmt.Errorf("%w: %s: HTTP %d: %s", ErrBadResponse, name, status, why)
}

// DecodeResponse strictly decodes one backend message that must be the JSON-RPC response to
// the request sent with id.
func DecodeResponse(name string, status int, data []byte, max int64, id json.RawMessage) (*jsonrpc.Message, error) {
	m, err := jsonrpc.DecodeMessage(data, JSONLimits(max))
	if err != nil {
		return nil, StatusError(name, status, "body is not a JSON-RPC message")
	}
	if !m.IsResponse() {
		return nil, StatusError(name, status, "body is not a JSON-RPC response")
	}
	if m.Error == nil && (status < 200 || status > 299) {
		return nil, StatusError(name, status, "success body with an error status")
	}
	if err := CheckAnswer(name, m, id); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckAnswer is ErrBadResponse when response m does not answer the request sent with id: a
// backend (or a proxy before it) that mixes up its answers must not hand one caller the answer
// to another's call under the caller's own id.
func CheckAnswer(name string, m *jsonrpc.Message, id json.RawMessage) error {
	if m.Answers(id) {
		return nil
	}
	return fmt.Errorf("%w: %s: the response's id is not the request's", ErrBadResponse, name)
}

// JSONLimits lets one string be as large as the whole message (a base64 blob in
// resources/read), keeping the default depth bound.
func JSONLimits(max int64) jsonrpc.Limits {
	return jsonrpc.Limits{MaxTokenBytes: int(max)}
}

// ReadErr classifies an error met while reading the response of backend name whose bound is
// max bytes: too large or cut short is ErrBadResponse, a transport failure goes to Classify.
func ReadErr(ctx context.Context, name string, max int64, err error) error {
	switch {
	case errors.Is(err, ErrBadResponse), errors.Is(err, ErrUnavailable), errors.Is(err, ErrTimeout), errors.Is(err, ErrRateLimited):
		return err
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrEventTooLarge):
		return fmt.Errorf("%w: %s: %v (limit %d bytes)", ErrBadResponse, name, err, max)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s: the stream ended without a response", ErrBadResponse, name)
	}
	return Classify(ctx, name, err)
}
