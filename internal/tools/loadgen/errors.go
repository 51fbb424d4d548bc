package loadgen

import (
	"context"
	"errors"
	"net"
	"strconv"
)

// Error kinds an operation can fail with; the report counts failures per kind. JSON-RPC error
// codes and HTTP statuses without a JSON-RPC body become "rpc_<code>" and "http_<status>".
const (
	// KindTransport: the connection failed (refused, reset, closed mid-body).
	KindTransport = "transport"
	// KindTimeout: the per-request timeout or the run's end cut the request short.
	KindTimeout = "timeout"
	// KindBadResponse: the answer was not the JSON-RPC response to this request (malformed JSON,
	// wrong id, wrong Content-Type, too large).
	KindBadResponse = "bad_response"
	// KindIncompleteStream: an SSE stream ended before the final response.
	KindIncompleteStream = "sse_incomplete"
	// KindToolError: a tools/call result with isError true. The protocol calls it a result, but
	// in a benchmark it means the target did not do the work, so it is not counted as a success.
	KindToolError = "tool_error"
	// KindUnexpectedInput: an input_required result where a complete one was expected.
	KindUnexpectedInput = "unexpected_input_required"
	// KindBadResult: a result without resultType "complete" or "input_required", or an
	// input_required result the confirm operation cannot answer.
	KindBadResult = "bad_result"
	// KindNoProgress: the sse operation got its result without any progress notification.
	KindNoProgress = "no_progress"
	// KindNotConfirmed: the confirm operation's first call completed without asking for input,
	// so the target is not configured to require confirmation for that tool.
	KindNotConfirmed = "confirm_not_required"
)

// OpError is a failed operation: its kind (one of the Kind constants, "rpc_<code>" or
// "http_<status>") and the underlying error.
type OpError struct {
	Kind string
	Err  error
}

// Error implements error.
func (e *OpError) Error() string { return e.Kind + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *OpError) Unwrap() error { return e.Err }

func opErr(kind string, err error) error { return &OpError{Kind: kind, Err: err} }

func rpcKind(code int) string { return "rpc_" + strconv.Itoa(code) }

func httpKind(status int) string { return "http_" + strconv.Itoa(status) }

// transportErr classifies a failure to send or read: a timeout when the request's context is
// done or the network said so, anything else a transport failure.
func transportErr(ctx context.Context, err error) error {
	var ne net.Error
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return opErr(KindTimeout, err)
	}
	return opErr(KindTransport, err)
}

// kindOf returns the kind of an operation's error.
func kindOf(err error) string {
	var oe *OpError
	if errors.As(err, &oe) {
		return oe.Kind
	}
	return KindTransport
}
