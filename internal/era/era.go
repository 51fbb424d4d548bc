// Package era knows how messages of the pre-2026 MCP revisions (2025-11-25, 2025-06-18,
// 2025-03-26) map to 2026-07-28 ones and back. It is pure: functions over bytes and typed
// values, with no I/O, no sessions and no configuration, so that every place that speaks to a
// peer of the other era (the bridge to pre-2026 backends in upstreams/legacy, and the edge for
// pre-2026 clients) translates the same way.
//
// What changed between the eras, and what this package therefore handles:
//   - A 2026-07-28 request carries its protocol version, client capabilities, client info and
//     log level in params._meta (io.modelcontextprotocol/*) and MRTR members (requestState,
//     inputResponses); a pre-2026 request carries none of them (ToLegacyRequest).
//   - A 2026-07-28 result names its resultType, and cacheable results say how long they may be
//     cached (ttlMs, cacheScope); a pre-2026 result says neither (ToModernResult, ToLegacyResult).
//   - Resource not found is -32002 before 2026 and -32602 in 2026-07-28 (ToModernResult).
//   - A backend's era is told from its answer to server/discover (Classify).
//   - Toward a pre-2026 client the gateway answers initialize from its own server/discover
//     (InitializeResult, NegotiateVersion), keeps the client's capabilities in the 2026 shape
//     (NormalizeClientCaps), reshapes results and errors for the negotiated version
//     (ToLegacyClientResult, LegacyClientError), and turns MRTR inputRequests into the
//     server→client requests such a client expects and its answers back (InputRequests,
//     Declares, InputResponse).
//
// https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning describes how the
// eras coexist; https://modelcontextprotocol.io/specification/2025-11-25 is the last
// initialize-based revision.
//
// It imports only the standard library and internal/jsonrpc (itself standard library only).
package era

// Era is a peer's protocol generation, as far as it is known.
type Era int

// The eras.
const (
	Unknown Era = iota
	Modern
	Legacy
)

// Protocol revisions.
const (
	// V20260728 is the revision the gateway speaks natively.
	V20260728 = "2026-07-28"
	V20251125 = "2025-11-25"
	V20250618 = "2025-06-18"
	// V20250326 predates the MCP-Protocol-Version header.
	V20250326 = "2025-03-26"
)

// LegacyVersions returns the pre-2026 revisions the gateway speaks, newest first: an array by
// value, so no caller can change the list for another.
func LegacyVersions() [3]string { return [3]string{V20251125, V20250618, V20250326} }

// Methods and notifications that exist only before 2026-07-28, or whose meaning differs.
const (
	MethodInitialize        = "initialize"
	MethodPing              = "ping"
	MethodSubscribe         = "resources/subscribe"
	NotifInitialized        = "notifications/initialized"
	NotifCancelled          = "notifications/cancelled"
	NotifElicitationDone    = "notifications/elicitation/complete"
	NotifProgress           = "notifications/progress"
	NotifMessage            = "notifications/message"
	MethodElicitationCreate = "elicitation/create"
	MethodSamplingCreate    = "sampling/createMessage"
	MethodRootsList         = "roots/list"
)

// IsClientRequest reports whether method is one of the requests a pre-2026 server sends its
// client (elicitation, sampling, roots), which 2026-07-28 carries as MRTR inputRequests instead.
func IsClientRequest(method string) bool {
	switch method {
	case MethodElicitationCreate, MethodSamplingCreate, MethodRootsList:
		return true
	}
	return false
}
