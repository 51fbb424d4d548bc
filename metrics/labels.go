package metrics

import "github.com/mcp-gateway/gateway/internal/outcome"

// Other is the label value every unknown input folds into. Label values are
// never created from request data, so a caller that passes something outside
// a closed set is counted here instead of minting a new series.
const Other = "_other"

// Reasons for an authentication failure (mcp_gateway_auth_failures_total).
const (
	// AuthMissing is a request without an Authorization header.
	AuthMissing = "missing"
	// AuthMalformed is an Authorization header that is not "Bearer <jwt>".
	AuthMalformed = "malformed"
	// AuthInvalidSignature is a token whose signature does not verify.
	AuthInvalidSignature = "invalid_signature"
	// AuthUnsupportedAlgorithm is a token signed with an algorithm outside the allowlist.
	AuthUnsupportedAlgorithm = "unsupported_algorithm"
	// AuthExpired is a token past its expiry (after skew).
	AuthExpired = "expired"
	// AuthNotYetValid is a token whose nbf or iat lies in the future.
	AuthNotYetValid = "not_yet_valid"
	// AuthUnknownIssuer is a token from an issuer that is not configured.
	AuthUnknownIssuer = "unknown_issuer"
	// AuthWrongAudience is a token not issued for this gateway (RFC 8707).
	AuthWrongAudience = "wrong_audience"
	// AuthClaims is a token missing a required claim (sub, for example).
	AuthClaims = "claims"
	// AuthIdPUnavailable is a technical failure reaching discovery or JWKS:
	// the request fails with 5xx, never a silent allow.
	AuthIdPUnavailable = "idp_unavailable"
	// AuthDPoPProof is a DPoP proof that failed a check of RFC 9449 §4.3, or a missing or
	// duplicated DPoP header.
	AuthDPoPProof = "dpop_proof"
	// AuthDPoPNonce is a DPoP proof without the server nonce, or with an expired or forged one.
	AuthDPoPNonce = "dpop_nonce"
	// AuthDPoPReplay is a DPoP proof used a second time.
	AuthDPoPReplay = "dpop_replay"
	// AuthDPoPBinding is a token presented against its binding: a DPoP-bound token as Bearer, a
	// token bound to another key, or a bearer token where DPoP is required.
	AuthDPoPBinding = "dpop_binding"
)

// Authorization decisions (mcp_gateway_authz_decisions_total).
const (
	// DecisionAllow is a call the policy grants.
	DecisionAllow = "allow"
	// DecisionStepUp is a call more scopes would grant (403 insufficient_scope).
	DecisionStepUp = "step_up"
	// DecisionHidden is a call no rule could grant, answered like an unknown tool.
	DecisionHidden = "hidden"
)

// MRTR events (mcp_gateway_mrtr_events_total, label event).
const (
	// EventConfirmIssued is a gateway confirmation returned as input_required.
	EventConfirmIssued = "confirm_issued"
	// EventConfirmApproved is a retry whose confirmation the user accepted.
	EventConfirmApproved = "confirm_approved"
	// EventConfirmDeclined is a retry whose confirmation the user declined or cancelled.
	EventConfirmDeclined = "confirm_declined"
	// EventUpstreamRoundTrip is a backend input_required wrapped for the client.
	EventUpstreamRoundTrip = "upstream_round_trip"
	// EventRejected is a requestState that did not open; its reason says why.
	EventRejected = "rejected"
)

// Reasons for an MRTR rejection (label reason when event is EventRejected).
const (
	// ReasonNone is the reason label of every MRTR event other than EventRejected. A label
	// value is never empty: an empty value reads as "label absent" in PromQL, so a selector
	// such as reason!="tampered" would silently match it.
	ReasonNone = "none"
	// RejectMalformed is a requestState that does not decode.
	RejectMalformed = "malformed"
	// RejectOversized is a requestState above the size limit.
	RejectOversized = "oversized"
	// RejectUnknownKey is a requestState sealed under a key id not in the ring.
	RejectUnknownKey = "unknown_key"
	// RejectTampered is a requestState whose AEAD or MAC does not verify.
	RejectTampered = "tampered"
	// RejectExpired is a requestState past its expiry.
	RejectExpired = "expired"
	// RejectPrincipal is a requestState bound to another issuer or subject.
	RejectPrincipal = "principal"
	// RejectTarget is a requestState bound to another backend, method or name.
	RejectTarget = "target"
	// RejectArguments is a requestState bound to other arguments.
	RejectArguments = "arguments"
	// RejectReplayed is a single-use confirmation presented twice.
	RejectReplayed = "replayed"
	// RejectStoreUnavailable is a single-use check the store could not make;
	// the retry fails closed.
	RejectStoreUnavailable = "store_unavailable"
	// RejectOverBudget is a retry refused because its caller answered mrtr.maxAnswersPerCaller
	// rounds in the current window; the state stays usable.
	RejectOverBudget = "over_budget"
)

// Rate-limit decisions (mcp_gateway_rate_limit_decisions_total).
const (
	// RateAllowed is a request under its limit.
	RateAllowed = "allowed"
	// RateLimited is a request over its limit (429).
	RateLimited = "limited"
	// RateError is a limiter that could not decide (store down); the
	// configured fail-open or fail-closed choice then applies.
	RateError = "error"
)

// Redis operations (mcp_gateway_redis_errors_total, label op).
const (
	// RedisOpNonce is the single-use nonce check (SET NX PX).
	RedisOpNonce = "nonce"
	// RedisOpRateLimit is the rate-limit script.
	RedisOpRateLimit = "rate_limit"
	// RedisOpCacheGet is a list-cache read.
	RedisOpCacheGet = "cache_get"
	// RedisOpCacheSet is a list-cache write.
	RedisOpCacheSet = "cache_set"
	// RedisOpPing is the readiness probe.
	RedisOpPing = "ping"
	// RedisOpNotice is telling the other replicas of a backend's list_changed (PUBLISH).
	RedisOpNotice = "notice"
)

// Causes of a notification not relayed to a listening client
// (mcp_gateway_listen_notifications_dropped_total, label cause).
const (
	// DropUnsubscribed is a notification the client did not subscribe to: a
	// list_changed kind it did not ask for, a resources/updated outside its
	// resource subscriptions. Steady growth means a backend that broadcasts.
	DropUnsubscribed = "unsubscribed"
	// DropHidden is a resources/updated for a resource the caller's policy
	// does not let it read.
	DropHidden = "hidden"
	// DropCoalesced is a resources/updated for a sub-resource relayed as one
	// for the subscribed URI above it, because the client fell behind.
	DropCoalesced = "coalesced"
	// DropOverflow is a notification lost because the client fell so far
	// behind that even coalesced its queue overflowed; its listen then ends
	// with an error.
	DropOverflow = "overflow"
)

// Circuit-breaker states (mcp_gateway_upstream_circuit_state).
const (
	// CircuitClosed lets every call through.
	CircuitClosed = 0
	// CircuitHalfOpen lets probe calls through.
	CircuitHalfOpen = 1
	// CircuitOpen refuses calls.
	CircuitOpen = 2
)

// Methods returns the MCP methods that get their own label value: the client
// requests of revision 2026-07-28 and the tasks extension (spec "Quick
// reference"). Anything else, including legacy initialize and ping, is Other.
func Methods() []string {
	return []string{
		"server/discover",
		"tools/list", "tools/call",
		"prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read",
		"completion/complete",
		"subscriptions/listen",
		"tasks/get", "tasks/update", "tasks/cancel",
	}
}

// Outcomes returns the outcome label values, without Other: the gateway's one outcome set
// (internal/outcome), shared by client requests, tool calls and backend requests.
func Outcomes() []string { return outcome.All() }

// AuthReasons returns the authentication failure reasons, without Other.
func AuthReasons() []string {
	return []string{
		AuthMissing, AuthMalformed, AuthInvalidSignature, AuthUnsupportedAlgorithm,
		AuthExpired, AuthNotYetValid, AuthUnknownIssuer, AuthWrongAudience,
		AuthClaims, AuthIdPUnavailable, AuthDPoPProof, AuthDPoPNonce, AuthDPoPReplay, AuthDPoPBinding,
	}
}

// Decisions returns the authorization decisions, without Other.
func Decisions() []string {
	return []string{DecisionAllow, DecisionStepUp, DecisionHidden}
}

// Events returns the MRTR events, without Other.
func Events() []string {
	return []string{
		EventConfirmIssued, EventConfirmApproved, EventConfirmDeclined,
		EventUpstreamRoundTrip, EventRejected,
	}
}

// RejectReasons returns the MRTR rejection reasons, without Other.
func RejectReasons() []string {
	return []string{
		RejectMalformed, RejectOversized, RejectUnknownKey, RejectTampered,
		RejectExpired, RejectPrincipal, RejectTarget, RejectArguments,
		RejectReplayed, RejectStoreUnavailable, RejectOverBudget,
	}
}

// RateDecisions returns the rate-limit decisions, without Other.
func RateDecisions() []string {
	return []string{RateAllowed, RateLimited, RateError}
}

// RedisOps returns the Redis operation names, without Other.
func RedisOps() []string {
	return []string{RedisOpNonce, RedisOpRateLimit, RedisOpCacheGet, RedisOpCacheSet, RedisOpPing, RedisOpNotice}
}

// DropCauses returns the causes of a dropped listen notification, without Other.
func DropCauses() []string {
	return []string{DropUnsubscribed, DropHidden, DropCoalesced, DropOverflow}
}

// closedSet maps the values of one label to dense indices; the last index is
// Other. It is built once in New and only read afterwards, so lookups need
// no lock.
type closedSet struct {
	values []string
	index  map[string]int
}

func newClosedSet(values []string) closedSet {
	all := append(append(make([]string, 0, len(values)+1), values...), Other)
	index := make(map[string]int, len(all))
	for i, v := range all {
		index[v] = i
	}
	return closedSet{values: all, index: index}
}

// of returns the index of v, folding unknown values into Other.
func (s closedSet) of(v string) int {
	if i, ok := s.index[v]; ok {
		return i
	}
	return len(s.values) - 1
}

// lookup returns the index of v and whether v is a member (Other is not).
func (s closedSet) lookup(v string) (int, bool) {
	i, ok := s.index[v]
	return i, ok && i != len(s.values)-1
}

func (s closedSet) size() int { return len(s.values) }
