package upstreams

import (
	"errors"

	"github.com/mcp-gateway/gateway/upstreams/backend"
	"github.com/mcp-gateway/gateway/upstreams/catalog"
	"github.com/mcp-gateway/gateway/upstreams/internal/wire"
	"github.com/mcp-gateway/gateway/upstreams/legacy"
	"github.com/mcp-gateway/gateway/upstreams/names"
)

// Sentinel errors. Errors returned by this package wrap one of them (or the caller's context
// error when the caller went away); compare with errors.Is.
//
// Suggested mapping for the client-facing side: ErrUnknownName and ErrBadCursor → -32602 (400);
// ErrUnavailable and ErrBadResponse → 502; ErrTimeout → 504; ErrRateLimited → 429; context.Canceled → 499 (log only).
var (
	// ErrUnknownName: a namespaced tool or prompt name or resource URI names no configured backend.
	ErrUnknownName = names.ErrUnknownName
	// ErrBadURI: a resource URI (or URI template) a client sent is ambiguous or malformed (see
	// internal/resuri); it is refused with -32602 and never forwarded.
	ErrBadURI = names.ErrBadURI
	// ErrAmbiguousAppName: a tools/call named a backend's own tool, as an MCP App does, that
	// more than one backend serving apps has; refused with -32602, never forwarded.
	ErrAmbiguousAppName = catalog.ErrAmbiguousAppName
	// ErrBadCursor: a list cursor does not open, belongs to another method, or to a list that
	// has changed since (docs/protocol.md §5.1: a bad cursor is -32602).
	ErrBadCursor = catalog.ErrBadCursor
	// ErrUnavailable: the backend could not be reached (refused, DNS, reset before or during the
	// response) or answered 502, 503 or 504 without a JSON-RPC body.
	ErrUnavailable = wire.ErrUnavailable
	// ErrRateLimited: the backend answered HTTP 429, whatever its body, to a request made for a
	// caller. It is an answer, not a failure: the backend's circuit breaker and health count it
	// as up, and it is never retried. Its errors are *RateLimitError, with the wait the
	// backend asked for (its JSON-RPC error's data.retryAfterMs, else its Retry-After, else
	// 1 s), clamped to [1 s, 10 min]; the client is answered 429 with that Retry-After.
	ErrRateLimited = wire.ErrRateLimited
	// ErrTimeout: the backend did not finish within its configured timeout.
	ErrTimeout = wire.ErrTimeout
	// ErrBadResponse: the backend answered something that is not a valid MCP response: garbage,
	// an oversized body or event, a non-2xx status without a JSON-RPC body, a stream that ended
	// without its response.
	ErrBadResponse = wire.ErrBadResponse
	// ErrTooManyAsks: a pre-2026 backend sent more requests of its own during one call than the
	// gateway answers; the call ended, and the backend was told it is cancelled. It wraps
	// ErrBadResponse and the JSON-RPC error (-32010) that says so to the client.
	ErrTooManyAsks = legacy.ErrTooManyAsks
	// ErrCircuitOpen: the backend's circuit is open, so the call was not sent; it comes wrapped
	// together with ErrUnavailable.
	ErrCircuitOpen = backend.ErrCircuitOpen
	// ErrCallerCircuitOpen: the caller's own recent requests to the backend kept failing, so this
	// one was not sent; other callers' still are. It wraps ErrCircuitOpen.
	ErrCallerCircuitOpen = backend.ErrCallerCircuitOpen
	// ErrRateLimitWait: the backend answered a recent request with 429 and the wait it asked
	// for has not passed, so this one was not sent. It comes together with a *RateLimitError
	// carrying the wait left, and so is answered as the backend's 429 is.
	ErrRateLimitWait = backend.ErrRateLimitWait
	// ErrCredentials: the backend's own credentials could not be obtained; it comes wrapped
	// together with ErrUnavailable.
	ErrCredentials = backend.ErrCredentials
	// ErrIssuerNotExchanged: a token-exchange backend does not take callers of the caller's
	// issuer (auth.subjectIssuers); it comes wrapped with ErrCredentials and the JSON-RPC error
	// (-32013) the caller is answered with, never with ErrUnavailable.
	ErrIssuerNotExchanged = backend.ErrIssuerNotExchanged
	// ErrTLSFiles wraps a failure to load a backend's CA bundle or client certificate at New.
	ErrTLSFiles = backend.ErrTLSFiles
	// ErrResultBudget: relaying a backend's response would take the buffer memory of every
	// response being relayed on this replica past Options.MaxResultBytesInFlight. It is the
	// gateway's own overload: it counts against neither the backend's health nor its breaker.
	ErrResultBudget = backend.ErrResultBudget
	// ErrNoCursorSealer: New was called without Options.Cursors.
	ErrNoCursorSealer = errors.New("upstreams: Options.Cursors is required")
)

// RateLimitError is the error of a backend's 429 (ErrRateLimited): which backend, and how long
// it asked callers to wait.
type RateLimitError = wire.RateLimitError
