// Package dpop checks DPoP proofs (RFC 9449) as a resource server or an authorization server's
// token endpoint does, and issues and checks stateless server nonces.
//
// MCP adopts RFC 9449 unchanged (SEP-1932): a request carries `Authorization: DPoP <token>` and
// one `DPoP` header holding a proof, a JWT signed with the client's key and carrying that public
// key in its header. Verifier.Verify makes the checks of RFC 9449 §4.3 in the RFC's order, each
// failure its own Reason and fixed description: exactly one header, a well-formed JWS without
// duplicate members, typ "dpop+jwt", an asymmetric algorithm from the configured list, a public
// "jwk" that verifies the signature, the required claims, htm equal to the request method, htu
// without its query and fragment equal to the endpoint's public URL after RFC 3986 syntax- and
// scheme-based normalisation (NormalizeURL), the server nonce when one is required, iat within
// the window (±5 minutes at most, as MCP requires) and, with a token, ath equal to the token's
// hash. The key's RFC 7638 thumbprint (Proof.JKT) is what the caller compares with the token's
// cnf.jkt, and (Proof.JTI) what a replay cache records: both are the caller's business, since
// they need the verified token and shared state.
//
// Nonces are stateless: a nonce is the time it was issued, sealed (internal/seal) under the
// gateway's keys, so any replica opens any replica's nonce and nothing is stored.
//
// Nothing here writes HTTP or logs; no error carries proof or token content.
package dpop
