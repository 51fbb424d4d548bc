package authz

import (
	"strings"
)

// Error codes used in challenges (RFC 6750 §3.1).
const (
	// ChallengeInvalidToken goes with 401 when a token was presented and rejected.
	ChallengeInvalidToken = "invalid_token"
	// ChallengeInsufficientScope goes with 403 when a rule needs more scopes.
	ChallengeInsufficientScope = "insufficient_scope"
)

// Challenge is the data of one WWW-Authenticate challenge: Bearer (RFC 6750) or DPoP
// (RFC 9449 §7.1). The gateway sends Bearer with 401 (Error empty or ChallengeInvalidToken) or
// 403 (Error ChallengeInsufficientScope), and DPoP with 401, or with 403 to a caller whose token
// came with a proof.
type Challenge struct {
	// Scheme is "" for Bearer, or dpop.Scheme.
	Scheme string
	// Error is "", ChallengeInvalidToken or ChallengeInsufficientScope; for DPoP also
	// invalid_dpop_proof or use_dpop_nonce.
	Error string
	// Scopes are the scopes the operation needs; for 403, all of them
	// (MCP authorization: one challenge lists every needed scope).
	Scopes []string
	// Description is a human-readable error_description; never token data.
	Description string
	// ResourceMetadata is the URL of the RFC 9728 document (RFC 9728 §5.1).
	ResourceMetadata string
	// Algs, for DPoP, are the JWS algorithms proofs may use (the algs parameter).
	Algs []string
}

// Header renders the WWW-Authenticate value. A 401 Bearer challenge reads
//
//	Bearer resource_metadata="…", scope="…"[, error="invalid_token", error_description="…"]
//
// a 403 challenge reads
//
//	Bearer error="insufficient_scope", scope="…", resource_metadata="…", error_description="…"
//
// and a DPoP challenge reads
//
//	DPoP [error="…", error_description="…", ]algs="ES256 …", resource_metadata="…"[, scope="…"]
//
// Empty parameters are left out. Values are RFC 9110 §5.6.4 quoted-strings;
// error_description is further limited to the characters RFC 6750 §3 allows.
func (c Challenge) Header() string {
	var b strings.Builder
	first := true
	param := func(name, value string, clean func(string) string) {
		if value == "" {
			return
		}
		if first {
			b.WriteByte(' ')
			first = false
		} else {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(clean(value))
		b.WriteByte('"')
	}
	scope := strings.Join(c.Scopes, " ")
	switch {
	case c.Scheme != "":
		b.WriteString(c.Scheme)
		param("error", c.Error, quoteEscape)
		param("error_description", c.Description, descriptionChars)
		param("algs", algsParam(c.Algs), quoteEscape)
		param("resource_metadata", c.ResourceMetadata, quoteEscape)
		param("scope", scope, quoteEscape)
		return b.String()
	case c.Error == ChallengeInsufficientScope:
		b.WriteString("Bearer")
		param("error", c.Error, quoteEscape)
		param("scope", scope, quoteEscape)
		param("resource_metadata", c.ResourceMetadata, quoteEscape)
	default:
		b.WriteString("Bearer")
		param("resource_metadata", c.ResourceMetadata, quoteEscape)
		param("scope", scope, quoteEscape)
		param("error", c.Error, quoteEscape)
	}
	param("error_description", c.Description, descriptionChars)
	return b.String()
}

// quoteEscape escapes '"' and '\' with a backslash (quoted-pair) and drops
// control characters and non-ASCII bytes, which a header value cannot carry
// safely.
func quoteEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			b.WriteByte(c)
		}
	}
	return b.String()
}

// descriptionChars keeps %x20-21 / %x23-5B / %x5D-7E (RFC 6750 §3): no quote
// or backslash even escaped, so '"' becomes '\” and '\' becomes '/'.
func descriptionChars(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteByte('\'')
		case c == '\\':
			b.WriteByte('/')
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// descriptions are fixed texts per reason, so no attacker-chosen token
// content is ever reflected into a response header.
func describe(reason string) string {
	switch reason {
	case ReasonExpired:
		return "The access token expired"
	case ReasonNotYetValid:
		return "The access token is not yet valid"
	case ReasonIssuedInFuture:
		return "The access token was issued in the future"
	case ReasonAudience:
		return "The access token was not issued for this resource"
	case ReasonIssuer:
		return "The access token was issued by an untrusted issuer"
	case ReasonMalformed:
		return "The access token is malformed"
	default:
		return "The access token is invalid"
	}
}
