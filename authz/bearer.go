package authz

import (
	"fmt"
	"strings"
)

// maxTokenBytes bounds the work done on attacker input before any check.
const maxTokenBytes = 16 << 10

// errOtherScheme is the error of credentials in a scheme the gateway does not take (Basic,
// Negotiate, DPoP where no issuer accepts DPoP-bound tokens): such a request carries no bearer
// token and "attempted using an unsupported authentication method", whose challenge names no
// error code (RFC 6750 §3.1), so the client starts the authorization the metadata describes.
var errOtherScheme = fmt.Errorf("%w: the authorization scheme is not Bearer", ErrNoToken)

// BearerToken extracts the token from an Authorization header value. An
// empty value or another scheme is ErrNoToken; the Bearer scheme with a missing
// or blank token, or characters outside RFC 6750 §2.1 b64token, is ErrInvalidToken
// with ReasonMalformed. The scheme is case-insensitive (RFC 9110 §11.1).
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", ErrNoToken
	}
	const scheme = "bearer"
	name := header
	if i := strings.IndexAny(header, " \t"); i >= 0 {
		name = header[:i]
	}
	if !strings.EqualFold(name, scheme) {
		return "", errOtherScheme
	}
	if len(header) == len(scheme) || header[len(scheme)] != ' ' {
		return "", invalid(ReasonMalformed, "bearer credentials syntax")
	}
	tok := strings.TrimLeft(header[len(scheme)+1:], " ")
	if tok == "" || len(tok) > maxTokenBytes || !isB64Token(tok) {
		return "", invalid(ReasonMalformed, "bearer token syntax")
	}
	return tok, nil
}

// isB64Token reports whether s matches 1*( ALPHA / DIGIT / "-" / "." / "_" /
// "~" / "+" / "/" ) *"=" (RFC 6750 §2.1).
func isB64Token(s string) bool {
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	// One table lookup per byte, and one branch per 8 bytes: every request's token, often
	// over a kilobyte, passes through here before the cache is consulted.
	i, bad := 0, false
	for ; i+8 <= end; i += 8 {
		bad = bad || !b64Char[s[i]] || !b64Char[s[i+1]] || !b64Char[s[i+2]] || !b64Char[s[i+3]] ||
			!b64Char[s[i+4]] || !b64Char[s[i+5]] || !b64Char[s[i+6]] || !b64Char[s[i+7]]
		if bad {
			return false
		}
	}
	for ; i < end; i++ {
		if !b64Char[s[i]] {
			return false
		}
	}
	return true
}

// b64Char marks the bytes of b64token before its trailing "=": ALPHA, DIGIT and "-._~+/".
var b64Char = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()
