package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/outcome"
	"github.com/mcp-gateway/gateway/mrtr"
	"github.com/mcp-gateway/gateway/upstreams"
)

// Error is what a pipeline stage returns to stop a request: the HTTP status, the JSON-RPC error
// for the body (nil for a bare status, such as 405) and any headers the status requires
// (Allow, WWW-Authenticate, Retry-After). It is the one type the mapper turns into a response.
type Error struct {
	Status int
	RPC    *jsonrpc.Error
	Header http.Header
	// Outcome is the closed-set label recorded in metrics and the access log.
	Outcome string
	// denial, when set, is the authorization denial this error stands for: with
	// server.draftErrors: [denials] a tools/call refused with it is answered as a failed tool
	// call carrying SEP-2643's envelope instead (denials.go).
	denial *denial
	// unknown, when set, is the kind of item ("tool", "prompt") an unknown-name answer
	// refuses, which the pipeline names as its caller sent it (errUnknownName).
	unknown string
	// legacy, when set, is the JSON-RPC error a pre-2026 client gets instead of RPC: RPC
	// speaks of what only a 2026-07-28 client sends (Legacy).
	legacy *jsonrpc.Error
	// limitWait, when set, is the wait of a limit answered where the configured shape of errors
	// is not known (mapError): a backend's 429, or the caller's share of the result budget. RPC
	// is then -32012, which the writers of errors (ClientSink.Error, and the pre-2026 edge's
	// in-band answers through Incoming.Shaped) make SEP-3304's -32023 when server.draftErrors
	// has rateLimited, as for the gateway's own limits.
	limitWait time.Duration
}

func (e *Error) Error() string {
	if e.RPC != nil {
		return e.RPC.Error()
	}
	return http.StatusText(e.Status)
}

// Legacy is the JSON-RPC error a pre-2026 client is answered with: RPC, unless RPC speaks of
// what a 2025 client never sent (inputResponses, requestState: the gateway builds them from
// its answers to elicitation/create), when it is the same code worded for what that client did
// send. Nil when e has no JSON-RPC error.
func (e *Error) Legacy() *jsonrpc.Error {
	if e.legacy != nil {
		return e.legacy
	}
	return e.RPC
}

// malformedAnswer is the -32602 for a retry whose answer to the gateway's own confirmation
// (form or approval page) cannot be read: err, an error wrapping mrtr.ErrMalformedResponse,
// names the problem in inputResponses for a 2026-07-28 client; a pre-2026 client is told what
// was wrong with its answer to elicitation/create. Nothing was run either way.
func malformedAnswer(err error) *Error {
	e := invalidParams("Invalid params: inputResponses: " + errString(err))
	const answer = "The answer to the gateway's confirmation request (elicitation/create) "
	why := `is not an elicitation result with an action of "accept", "decline" or "cancel"`
	switch mrtr.Problem(err) {
	case mrtr.AnswerNoContent:
		why = `has action "accept" but no content object: accept with content {"` + mrtr.ApproveField + `": true} to run the call, or decline`
	case mrtr.AnswerNoApprove:
		why = `has action "accept" but no boolean "` + mrtr.ApproveField + `" in its content: accept with content {"` +
			mrtr.ApproveField + `": true} to run the call, or decline`
	}
	e.legacy = jsonrpc.NewError(jsonrpc.CodeInvalidParams, answer+why+"; the call was not run")
	return e
}

// stateRejected is the one -32602 every bad requestState gets (mrtr.ClientMessage), so a
// client learns nothing about why. A pre-2026 client never held the state: the gateway sealed
// it between rounds of its answers, so only time (mrtr.ttl passing while the user answered) or
// the gateway's own keys can have made it fail; it is told so, as nothing it sent.
func stateRejected() *Error {
	e := invalidParams(mrtr.ClientMessage)
	e.legacy = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "The gateway could not go on with this call after the "+
		"client's answers: its record of the call's earlier round is no longer valid (it lasts a limited time: the "+
		"answers may have come too late), so they were not sent on; call again")
	return e
}

// Outcome labels come from the gateway's one outcome set, so the access log, the spans and the
// metrics agree.
const (
	outcomeOK            = outcome.OK
	outcomeClientError   = outcome.ClientError
	outcomeDenied        = outcome.Denied
	outcomeBackendError  = outcome.BackendError
	outcomeBadResponse   = outcome.BadResponse
	outcomeTimeout       = outcome.Timeout
	outcomeUnavailable   = outcome.Unavailable
	outcomeInternal      = outcome.GatewayError
	outcomeCanceled      = outcome.Canceled
	outcomeInputRequired = outcome.InputRequired
	outcomeRateLimited   = outcome.RateLimited
)

// statusForCode is the status table of docs/protocol.md §2.3 for errors the gateway itself raises. Codes
// not listed are internal errors.
var statusForCode = map[int]int{
	jsonrpc.CodeParseError:                      http.StatusBadRequest,
	jsonrpc.CodeInvalidRequest:                  http.StatusBadRequest,
	jsonrpc.CodeMethodNotFound:                  http.StatusNotFound,
	jsonrpc.CodeInvalidParams:                   http.StatusBadRequest,
	jsonrpc.CodeHeaderMismatch:                  http.StatusBadRequest,
	jsonrpc.CodeMissingRequiredClientCapability: http.StatusBadRequest,
	jsonrpc.CodeUnsupportedProtocolVersion:      http.StatusBadRequest,
	jsonrpc.CodeUpstreamUnavailable:             http.StatusBadGateway,
	jsonrpc.CodeUpstreamTimeout:                 http.StatusGatewayTimeout,
	jsonrpc.CodeRateLimited:                     http.StatusTooManyRequests,
	jsonrpc.CodeRateLimitedDraft:                http.StatusTooManyRequests,
	jsonrpc.CodeUnavailable:                     http.StatusServiceUnavailable,
	// A backend's refusal of the caller before anything is sent (a token-exchange backend
	// that does not take the caller's issuer).
	jsonrpc.CodeUnauthorized: http.StatusForbidden,
}

// rpcError builds the *Error for a JSON-RPC error the gateway raises, with the status the table
// assigns to its code.
func rpcError(e *jsonrpc.Error) *Error {
	status, ok := statusForCode[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	outcome := outcomeClientError
	switch {
	case status >= 500:
		outcome = outcomeInternal
	case e.Code == jsonrpc.CodeRateLimited, e.Code == jsonrpc.CodeRateLimitedDraft:
		outcome = outcomeRateLimited
	case e.Code == jsonrpc.CodeUnauthorized:
		outcome = outcomeDenied
	}
	return &Error{Status: status, RPC: e, Outcome: outcome}
}

func invalidParams(msg string) *Error {
	return rpcError(jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg))
}

func headerMismatch(msg string) *Error {
	return rpcError(jsonrpc.NewError(jsonrpc.CodeHeaderMismatch, msg))
}

// errUnknownName is the answer for a tool, prompt or resource that does not exist or that no
// policy rule could grant to this caller: the same bytes either way, so a caller cannot probe
// for names it may not use (docs/architecture.md, stage authorize). Whichever stage refuses
// it, the pipeline then names a tool or prompt as its caller sent it (namedUnknown,
// unknownNamed), from the request alone, never from what the refusing stage knew; a resource
// too, with the URI the caller sent, as upstreams answers a read whose result names only
// hidden resources (upstreams.UnknownResourceMessage).
func errUnknownName(kind string) *Error {
	e := invalidParams("Invalid params: unknown " + kind)
	e.unknown = kind
	return e
}

// unknownNamed is the unknown-name answer that names what its caller sent, as
// upstreams.EchoName quotes it (bounded, control and other unprintable characters escaped); a
// tool or prompt name without sep, the configured namespace separator ("" when names are not
// namespaced), gets a hint of how names are made. A resource's is
// upstreams.UnknownResourceMessage, the bytes upstreams answers a read with whose result shows
// only resources the caller may not read. It is only ever the answer to the caller that sent
// name, never a log line.
func unknownNamed(kind, name, sep string) *Error {
	if kind == "resource" {
		return invalidParams(upstreams.UnknownResourceMessage(name))
	}
	msg := "Invalid params: unknown " + kind + " " + upstreams.EchoName(name)
	if sep != "" && (kind == "tool" || kind == "prompt") && !strings.Contains(name, sep) {
		msg += ": " + kind + "s are named <backend>" + sep + "<" + kind + ">"
	}
	return invalidParams(msg)
}

// ErrShuttingDown is the cause with which the gateway cancels the requests still running when
// its shutdown deadline (server.shutdownTimeout) passes: each is answered with it on its open
// response, JSON or event stream, before the connection closes, rather than losing the
// connection with no word. A call may have reached its backend, so the message says it may or
// may not have run there. -32014 (503): the gateway's own unavailability; another replica may
// serve the request.
var ErrShuttingDown = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeInternal,
	RPC: jsonrpc.NewError(jsonrpc.CodeUnavailable, "The gateway is shutting down: this request was cancelled, "+
		"and a call may or may not have run at its backend")}

// ErrReplaced is the cause with which the gateway cancels the requests of a configuration a
// reload replaced that are still running server.shutdownTimeout after it: answered as
// ErrShuttingDown is, before their connections close.
var ErrReplaced = &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeInternal,
	RPC: jsonrpc.NewError(jsonrpc.CodeUnavailable, "The gateway's configuration was replaced and this request ran past "+
		"its shutdown timeout: it was cancelled, and a call may or may not have run at its backend")}

// CutBy returns the error a request whose context ctx was cancelled by the gateway itself is
// answered with (the cause it gave, an *Error such as ErrShuttingDown), or nil when ctx is live
// or ended for another reason (the client left).
func CutBy(ctx context.Context) *Error {
	if ctx.Err() == nil {
		return nil
	}
	var e *Error
	if errors.As(context.Cause(ctx), &e) {
		return e
	}
	return nil
}

// mapError is the one place an error becomes an HTTP status and JSON-RPC error. Stages return
// *Error for what they decide themselves; errors from the packages below are classified here.
func mapError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		e := rpcError(rpc)
		if errors.Is(err, upstreams.ErrBadResponse) {
			// A backend's bad response that says what was wrong in words of its own (a
			// pre-2026 backend's requests past the bound of a call): still a bad response.
			e.Outcome = outcomeBadResponse
		}
		return e
	case errors.Is(err, upstreams.ErrUnknownName):
		return errUnknownName("name")
	case errors.Is(err, upstreams.ErrBadCursor):
		return invalidParams("Invalid params: invalid cursor")
	case errors.Is(err, upstreams.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUpstreamTimeout, "Backend did not answer in time"))
		e.Outcome = outcomeTimeout
		return e
	case errors.As(err, new(*upstreams.RateLimitError)):
		return backendLimited(err)
	case errors.Is(err, upstreams.ErrResultBudget) && errors.Is(err, bodyread.ErrShare):
		// The caller's own share of the budget is taken (results of its own it has not read
		// yet, its private lists): its own limit, as too many concurrent requests from it are,
		// not the replica's overload; another replica holds its share of that replica's.
		return waitLimited(time.Second, "Too many large results in flight for this caller; retry later")
	case errors.Is(err, upstreams.ErrResultBudget):
		// The replica's own overload, like too many requests in flight: retry, here or on
		// another replica.
		return &Error{Status: http.StatusServiceUnavailable, Outcome: outcomeRateLimited,
			RPC:    jsonrpc.NewError(jsonrpc.CodeUnavailable, "Too many large results in flight; retry later"),
			Header: http.Header{"Retry-After": {"1"}}}
	case errors.Is(err, upstreams.ErrUnavailable):
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUpstreamUnavailable, "Backend unavailable"))
		e.Outcome = outcomeUnavailable
		return e
	case errors.Is(err, upstreams.ErrBadResponse):
		e := rpcError(jsonrpc.NewError(jsonrpc.CodeUpstreamUnavailable, "Backend sent an invalid response"))
		e.Outcome = outcomeBadResponse
		return e
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this, but the access log records 499 (Caddy's
		// convention for "client closed request").
		return &Error{Status: 499, Outcome: outcomeCanceled}
	}
	return &Error{
		Status:  http.StatusInternalServerError,
		RPC:     jsonrpc.NewError(jsonrpc.CodeInternalError, "Internal error"),
		Outcome: outcomeInternal,
	}
}

// backendLimited is the answer to a backend's 429 (err holds its *upstreams.RateLimitError):
// the gateway answers as for its own limits, 429 with Retry-After and -32012 (drafts.limited),
// naming the backend by its namespace, never quoting what the backend said.
func backendLimited(err error) *Error {
	var rl *upstreams.RateLimitError
	errors.As(err, &rl)
	return waitLimited(rl.RetryAfter, "Backend "+rl.Backend+" is rate limiting; retry after "+retryAfterSeconds(rl.RetryAfter)+"s")
}

// waitLimited is the 429 of a limit mapError answers, -32012 with Retry-After wait, carrying
// wait (limitWait) so that the writers of errors give it the configured shape (draftShape).
func waitLimited(wait time.Duration, msg string) *Error {
	d := drafts{}
	e := d.limited(wait, msg)
	e.limitWait = wait
	return e
}

// draftShape is e in the shape server.draftErrors asks for: a limit answered by mapError
// (limitWait) becomes SEP-3304's -32023 when d has rateLimited; anything else is e.
func (d *drafts) draftShape(e *Error) *Error {
	if e.limitWait == 0 || !d.rateLimited {
		return e
	}
	return d.limited(e.limitWait, e.RPC.Message)
}
