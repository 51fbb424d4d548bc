package authz

import "strings"

// maxTokenBytes bounds the work done on attacker input before any check.
const maxTokenBytes = 16 << 10

// BearerToken extracts the token from an Authorization header value. An
// empty value is ErrNoToken; any other scheme, a missing or blank token, or
// characters outside RFC 6750 §2.1 b64token are ErrInvalidToken with
// ReasonMalformed. The scheme is case-insensitive (RFC 9110 §11.1).
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", ErrNoToken
	}
	const scheme = "bearer"
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) || header[len(scheme)] != ' ' {
		return "", invalid(ReasonMalformed, "authorization scheme is not Bearer")
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
	for i := 0; i < end; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
