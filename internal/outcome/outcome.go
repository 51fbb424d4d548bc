// Package outcome is the gateway's one vocabulary for how a request ended. The same values
// label mcp_gateway_requests_total and mcp_gateway_tool_calls_total (a client request),
// mcp_gateway_upstream_requests_total (one request sent to a backend), the access log and the
// trace spans, so one event has one name wherever it is reported. The set is closed: every
// value is a metric label value.
//
// The backend-side outcomes (OK, BackendError, RateLimited, BadResponse, Timeout, Unavailable,
// Canceled) are the only ones a backend exchange can end in. The others are decided by the gateway at
// its edge and only appear on client requests.
package outcome

const (
	// OK is a complete result: a tool result with isError true included, since the backend
	// ran the tool and reported its failure inside the result.
	OK = "ok"
	// InputRequired is an interim input_required result: the user is asked, by the gateway
	// (a confirmation) or by the backend.
	InputRequired = "input_required"
	// ClientError is a request the gateway refused as malformed or unsupported: -32600,
	// -32601, -32602, -32020, -32021, -32022, 405, 413, 415.
	ClientError = "client_error"
	// Denied is an authentication or authorization failure (401, 403, a call hidden by
	// policy, a declined confirmation).
	Denied = "denied"
	// RateLimited is a request refused for capacity: a rate limit or concurrency limit
	// (429, or 503 with Retry-After), the gateway's own or a backend's (its 429).
	RateLimited = "rate_limited"
	// Canceled is a caller that went away, or closed the stream, before the final answer.
	Canceled = "canceled"
	// BackendError is a backend that answered with a JSON-RPC error, relayed to the client
	// as it came. The backend works: this is its answer, often to the caller's mistake
	// (unknown name, invalid params).
	BackendError = "backend_error"
	// BadResponse is a backend whose answer is not a usable MCP response: not JSON-RPC, an
	// unexpected HTTP status, a stream that ended without a response, a response too large.
	BadResponse = "bad_response"
	// Timeout is a backend that did not answer within its timeout (504).
	Timeout = "timeout"
	// Unavailable is a backend that could not be tried or reached: circuit open, connection
	// refused or reset, its proxy's 502/503/504, no credentials for it; or a dependency of the
	// gateway that is down (the identity provider, the shared store when it must decide).
	Unavailable = "unavailable"
	// GatewayError is a failure inside the gateway itself (-32603, 500).
	GatewayError = "error"
)

// All returns every outcome, in the order dashboards list them.
func All() []string {
	return []string{
		OK, InputRequired, ClientError, Denied, RateLimited, Canceled,
		BackendError, BadResponse, Timeout, Unavailable, GatewayError,
	}
}
