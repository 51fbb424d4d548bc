// Package approval is the gateway's out-of-band approval page: the user who made a tool call
// that policy marks `confirm: url` signs in with the gateway's OpenID Connect issuer and
// approves or denies that one call, so a client cannot answer on the user's behalf.
//
// The package is stateless per replica. A call waiting for approval is kept, sealed, in the
// shared store under its requestState nonce (Ask); the page reads it on any replica, checks
// that the signed-in issuer and subject are the caller's, and records one decision, sealed and
// bound to the nonce and the argument digest (Decide). The retry of the call reads that
// decision (Verdict). Sessions and sign-in state live in sealed, short-lived cookies
// (internal/webpage, whose sign-in the gateway's other pages share, through this page's
// callback), so any replica can serve any step.
//
// What the page renders is escaped by html/template; argument strings have invisible and
// bidirectional characters made visible and long values folded. Responses carry a strict
// Content-Security-Policy, and decisions are POSTs carrying a token bound to the session and
// the call.
package approval
