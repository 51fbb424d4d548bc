// Package jsonrpc holds the JSON-RPC 2.0 message types, the MCP error codes and the one strict
// decoder the gateway uses for everything a client sends. It depends on the standard library only.
package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Error codes used by MCP 2026-07-28 (docs/protocol.md §2.3 and the quick-reference table).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeHeaderMismatch: a mirrored Mcp-* header is missing, malformed or differs from the body
	// (SEP-2243).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a capability the client did not
	// declare on this request.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the request's protocol version is not served here.
	CodeUnsupportedProtocolVersion = -32022
	// CodeRateLimitedDraft is RateLimited of SEP-3304 (a draft): the caller exceeded a limit,
	// data.retryAfterMs says when to retry (HTTP 429). 2026-07-28 does not define it, so the
	// gateway sends it only where its operator turned the draft on (server.draftErrors).
	CodeRateLimitedDraft = -32023

	// Gateway-specific codes. The 2026-07-28 allocation policy reserves -32020..-32099 for the
	// spec and leaves -32000..-32019 to implementations; we avoid -32001/-32003/-32004, which
	// pre-release drafts used for what is now -32020..-32022, so no client can confuse them.

	// CodeUpstreamUnavailable: the backend could not be reached or answered garbage (HTTP 502).
	CodeUpstreamUnavailable = -32010
	// CodeUpstreamTimeout: the backend did not answer in time (HTTP 504).
	CodeUpstreamTimeout = -32011
	// CodeRateLimited: the caller exceeded a rate limit (HTTP 429 with Retry-After).
	CodeRateLimited = -32012
	// CodeUnauthorized: authentication failed or authorization was refused (HTTP 401/403).
	CodeUnauthorized = -32013
	// CodeUnavailable: a dependency the gateway needs (identity provider, shared store) is down;
	// the request may be retried (HTTP 503).
	CodeUnavailable = -32014
)

// Error is a JSON-RPC error object. Two errors match under errors.Is when their codes are equal,
// so callers can test for a class of error without caring about its message.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an *Error with the given code and message.
func NewError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// Error implements the error interface.
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

// WithData returns a copy of e carrying data, which must marshal to JSON.
func (e *Error) WithData(data any) *Error {
	c := *e
	raw, err := json.Marshal(data)
	if err == nil {
		c.Data = raw
	}
	return &c
}
