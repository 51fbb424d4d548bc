package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-gateway/gateway/internal/bodyread"
	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
	"github.com/mcp-gateway/gateway/upstreams/backend"
)

// An interceptor is reached through a backend.Backend, the same client the gateway uses for its
// upstreams: its transport and TLS, its own credentials (a static header or client
// credentials, never the caller's token), the circuit breaker and the response bounds. An
// Interceptor Server gets a JSON-RPC request over Streamable HTTP in the revision it speaks
// (learnt or pinned as for an upstream); a webhook gets the params object POSTed.

// transport sends one invocation's params and returns the result object, read within results:
// the caller's share of the replica's budget of answers being read (shares).
type transport interface {
	invoke(ctx context.Context, params []byte, hdr http.Header, caller string, results *bodyread.Budget) ([]byte, error)
}

// modernMeta is the _meta of a 2026-07-28 request the gateway makes on its own: no client
// capabilities (an interceptor asks the caller nothing). For a pre-2026 server the backend
// client strips it and speaks through its session instead.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"` + backend.ProtocolVersion + `",` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// rpcError is a JSON-RPC error an Interceptor Server answered: an invocation failure (the
// SEP's E1: a failure is never a verdict). timeout marks the host's own timeout: -32603 with
// data.reason "timeout" (the chain-free rewrite), or -32000 (PR #2624's head).
type rpcError struct {
	code    int
	timeout bool
}

func (e *rpcError) Error() string { return fmt.Sprintf("the interceptor answered error %d", e.code) }

// newRPCError reads a host's error.
func newRPCError(e *jsonrpc.Error) *rpcError {
	var data struct {
		Reason string `json:"reason"`
	}
	if len(e.Data) > 0 && e.Data[0] == '{' {
		_ = json.Unmarshal(e.Data, &data)
	}
	return &rpcError{code: e.Code, timeout: e.Code == codeTimeoutDraft || data.Reason == "timeout"}
}

// codeTimeoutDraft is PR #2624's code of a host's timeout, replaced by -32603 in the rewrite.
const codeTimeoutDraft = -32000

// mcpTransport calls an Interceptor Server.
type mcpTransport struct{ b *backend.Backend }

func (t mcpTransport) invoke(ctx context.Context, params []byte, hdr http.Header, caller string, results *bodyread.Budget) ([]byte, error) {
	body := make([]byte, 0, len(params)+64)
	body = append(body, `{"jsonrpc":"2.0","id":1,"method":"`+MethodInvoke+`","params":`...)
	body = append(append(body, params...), '}')
	// One try: an invocation may have side effects, and the SEP routes an indeterminate outcome
	// as a failure rather than a blind retry (the backend is configured with one attempt).
	m, err := t.b.RoundTrip(ctx, &backend.Request{Method: MethodInvoke, Header: hdr, Body: body, Caller: caller, ForCaller: true,
		Results: results})
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, newRPCError(m.Error)
	}
	return m.Result, nil
}

// webhookTransport POSTs the params to a plain HTTP endpoint, whose 200 answer is the result.
type webhookTransport struct {
	b   *backend.Backend
	max int64
	now func() time.Time // the Set's clock, which the backend's breaker reads too
}

func (t webhookTransport) invoke(ctx context.Context, params []byte, hdr http.Header, caller string, results *bodyread.Budget) ([]byte, error) {
	start := t.now()
	o := &backend.Request{Method: MethodInvoke, Header: hdr, Body: params, Caller: caller, ForCaller: true, Results: results}
	out, err := t.post(ctx, o)
	// The breaker and health learn of it as of an upstream's request, charged to its caller.
	t.b.Record(o, start, err)
	return out, err
}

func (t webhookTransport) post(ctx context.Context, o *backend.Request) ([]byte, error) {
	resp, err := t.b.Post(ctx, o)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// The answer is read within the caller's share of the replica's budget (Request.Results),
	// as an Interceptor Server's is by the backend client.
	buf, err := bodyread.ReadSized(resp.Body, t.max, resp.ContentLength, o.Results)
	switch {
	case errors.Is(err, bodyread.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s: the answer is larger than %d bytes", upstreams.ErrBadResponse, t.b.Name(), t.max)
	case errors.Is(err, bodyread.ErrBudget):
		return nil, fmt.Errorf("%w: %s: %w", upstreams.ErrResultBudget, t.b.Name(), err)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s: %v", upstreams.ErrTimeout, t.b.Name(), context.Cause(ctx))
	case err != nil:
		return nil, fmt.Errorf("%w: %s: reading the answer: %v", upstreams.ErrUnavailable, t.b.Name(), err)
	}
	// The answer is read: its charge goes back, and its bytes, which the verdict may hand on,
	// to the garbage collector rather than the buffer pool.
	buf.Detach()
	switch s := resp.StatusCode; {
	case s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout:
		return nil, fmt.Errorf("%w: %s: status %d", upstreams.ErrUnavailable, t.b.Name(), s)
	case s != http.StatusOK:
		return nil, fmt.Errorf("%w: %s: status %d", upstreams.ErrBadResponse, t.b.Name(), s)
	}
	return buf.B, nil
}

// Failure reasons: why an invocation gave no decision. They label metrics and audit lines, a
// closed set.
const (
	ReasonTimeout     = "timeout"      // no answer within the interceptor's timeout (slot wait included)
	ReasonUnavailable = "unavailable"  // unreachable, reset, 502/503/504 or 429, or its credentials failed
	ReasonCircuitOpen = "circuit_open" // not sent: the interceptor's circuit is open
	// ReasonCallerCircuit: not sent, since this caller's own invocations kept failing (its own
	// circuit is open); it refuses the call whatever failOpen says.
	ReasonCallerCircuit = "caller_circuit_open"
	ReasonBadResponse   = "bad_response" // not a JSON-RPC answer (or, for a webhook, not a 200 with a body)
	ReasonRPCError      = "error"        // the interceptor answered a JSON-RPC error
	ReasonMalformed     = "malformed"    // a result the SEP says to treat as a failure
	ReasonTooLarge      = "too_large"    // the payload is larger than maxPayloadBytes: not sent
	ReasonCallerLimit   = "caller_limit" // the caller holds its share of the slots already: not sent
	// ReasonCallerShare: the caller's answers being read hold its share of the replica's budget
	// of answers already; the interceptor was asked, but its answer could not be read.
	ReasonCallerShare = "caller_share"
	ReasonCanceled    = "canceled" // the caller went away first
	// ReasonNoCallerKey: not sent, since an authenticated call came without its caller key (a
	// gateway bug); it refuses the call whatever failOpen says.
	ReasonNoCallerKey = "no_caller_key"
)

// Reasons lists every failure reason, for metric label sets.
func Reasons() []string {
	return []string{ReasonTimeout, ReasonUnavailable, ReasonCircuitOpen, ReasonCallerCircuit, ReasonBadResponse, ReasonRPCError,
		ReasonMalformed, ReasonTooLarge, ReasonCallerLimit, ReasonCallerShare, ReasonCanceled, ReasonNoCallerKey}
}

// reasonOf classifies an invocation's error. parent is the caller's context: its end is the
// caller leaving, not the interceptor failing.
func reasonOf(parent context.Context, err error) string {
	var rpc *rpcError
	switch {
	case errors.Is(err, errMalformed):
		return ReasonMalformed
	case errors.Is(err, errTooLarge):
		return ReasonTooLarge
	case errors.Is(err, errCallerLimit):
		return ReasonCallerLimit
	case errors.Is(err, bodyread.ErrShare):
		return ReasonCallerShare
	case errors.Is(err, errNoCallerKey):
		return ReasonNoCallerKey
	case errors.As(err, &rpc) && rpc.timeout:
		return ReasonTimeout
	case errors.As(err, &rpc):
		return ReasonRPCError
	case parent.Err() != nil:
		return ReasonCanceled
	case errors.Is(err, backend.ErrCallerCircuitOpen):
		return ReasonCallerCircuit
	case errors.Is(err, upstreams.ErrCircuitOpen):
		return ReasonCircuitOpen
	case errors.Is(err, upstreams.ErrTimeout), errors.Is(err, errSlotTimeout), errors.Is(err, backend.ErrCallTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, upstreams.ErrBadResponse):
		return ReasonBadResponse
	}
	return ReasonUnavailable
}

// resultLimits are the strict scanner's limits for an interceptor's answer.
var resultLimits = jsonrpc.Limits{}
