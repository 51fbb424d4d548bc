// Package authz makes the gateway an OAuth 2.1 resource server (MCP
// 2026-07-28 authorization, docs/protocol.md §4) and holds its per-tool policy.
//
// Authentication: Authenticator verifies JWT access tokens with go-oidc
// against one or more configured issuers. The issuer is chosen by the
// token's unverified "iss" among configured issuers only, in a token that
// names no member twice, not even in another case; then the signature
// (asymmetric algorithm allowlist, keys from the issuer's JWKS), the issuer,
// the audience (RFC 8707: one of the configured audiences, by default the
// gateway's canonical resource URI), exp, nbf and iat (with a small skew) are
// enforced. Discovery is lazy and retried, so the gateway starts while the
// IdP is down; while keys cannot be fetched Authenticate returns
// ErrIssuerUnavailable, which must become a 5xx, never an allow and never a
// 401. Verified tokens are cached until they expire or a key leaves their
// issuer's key set; a cache hit needs the presented token to equal the cached
// one exactly.
//
// Authorization: Policy is compiled from ordered rules, deny by default; see
// Policy for the exact semantics. Decide returns Allow, StepUp (403
// insufficient_scope naming all needed scopes) or Hidden (answer as for an
// unknown name); Visible filters lists.
//
// HTTP is not written here: Challenge renders WWW-Authenticate values and
// ProtectedResourceMetadata is the RFC 9728 document, both served by the
// HTTP layer.
package authz
