package authz

import (
	"encoding/json"
	"strings"
)

// checkHeader refuses a token whose protected header says it is something other than an access
// token, or asks for processing an access token never needs. The header is signed, so this reads
// what the issuer wrote; it runs before the signature is checked only to refuse early. Members
// are read by their exact names, as go-jose reads them.
//
//   - typ, when present, must be JWT, at+jwt (RFC 9068 §2.1), a vendor's access-token type
//     ending in "-at+jwt" (Okta types its access tokens application/okta-internal-at+jwt), or
//     JOSE, in any case and with or without "application/" (RFC 7515 §4.1.9). An issuer signs other JWTs with the same keys
//     (logout and security event tokens, signed introspection responses, identity assertion
//     grants), some of them with an audience the gateway accepts; their explicit type is what
//     keeps one kind from being taken for another (RFC 8725 §3.11), and a token typed as one of
//     them, or as a DPoP proof, is not a caller's access token whatever its claims.
//   - crit and b64 are refused: no access-token profile uses a header extension, and go-jose
//     honours b64 (RFC 7797), under which the signature covers other bytes than the claims
//     every other reader of the token decodes.
func checkHeader(hdr []byte) error { return checkHeaderTyped(hdr, accessTokenType) }

// CheckIDTokenHeader holds an ID token (raw, a compact JWS) to the rule checkHeader holds an
// access token to, for the gateway's sign-in pages: its typ, when present, must be JWT (OpenID
// Connect Core §2) or JOSE (a JWS's own type, which names no kind of token), in any case and
// with or without "application/"; crit and b64 are refused, and so is a header naming a member
// twice, even in another case (checkNames), which readers each resolve their own way. An issuer
// signs access tokens (at+jwt), logout tokens (logout+jwt) and others with the keys it signs ID
// tokens with, some with the client's id as audience; their type is what tells them apart, so
// one typed as another kind of JWT is not an ID token whatever its claims. go-oidc's verifier
// checks none of this.
func CheckIDTokenHeader(raw string) error {
	seg, _, _ := strings.Cut(raw, ".")
	hdr, err := segment(seg)
	if err != nil {
		return invalid(ReasonMalformed, "header")
	}
	return checkHeaderTyped(hdr, idTokenType)
}

// idTokenType reports whether typ is JWT or JOSE, case-insensitively, with or without
// "application/".
func idTokenType(typ string) bool {
	t := strings.TrimPrefix(strings.ToLower(typ), "application/")
	return t == "jwt" || t == "jose"
}

// checkHeaderTyped is checkHeader with typeOK the test of the typ member.
func checkHeaderTyped(hdr []byte, typeOK func(string) bool) error {
	var h map[string]json.RawMessage
	if json.Unmarshal(hdr, &h) != nil {
		return invalid(ReasonMalformed, "header")
	}
	if _, ok := h["crit"]; ok {
		return invalid(ReasonMalformed, "crit")
	}
	if _, ok := h["b64"]; ok {
		return invalid(ReasonMalformed, "b64")
	}
	raw, ok := h["typ"]
	if !ok {
		return nil
	}
	var typ string
	if json.Unmarshal(raw, &typ) != nil || !typeOK(typ) {
		return invalid(ReasonMalformed, "typ")
	}
	return nil
}

// accessTokenType reports whether typ is a media type an access token may carry: JWT, at+jwt,
// a vendor's access-token type ending in "-at+jwt", or JOSE, case-insensitively, with or without
// the "application/" prefix RFC 7515 §4.1.9 lets producers leave out.
func accessTokenType(typ string) bool {
	t := strings.ToLower(typ)
	t = strings.TrimPrefix(t, "application/")
	if vendor, ok := strings.CutSuffix(t, "-at+jwt"); ok {
		return vendor != "" && !strings.ContainsAny(vendor, "/+ ")
	}
	return t == "jwt" || t == "at+jwt" || t == "jose"
}
