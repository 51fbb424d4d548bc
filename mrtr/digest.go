package mrtr

import (
	"crypto/sha256"
	"encoding/json"
)

// maxArgsDepth bounds nesting so hostile arguments cannot exhaust the stack.
const maxArgsDepth = 128

// Digest returns the SHA-256 of the canonical form of args, so that key
// order and insignificant whitespace do not matter but any value change does.
//
// Canonical form: no whitespace; object members sorted by key bytes; strings
// decoded and re-escaped minimally (so "\u0041" equals "A"); numbers kept as
// their literal text, so 1 and 1.0 differ (a false mismatch is safe, a false
// match is not). Absent arguments (empty or JSON null) digest as null.
// Invalid UTF-8, lone surrogate escapes, duplicate keys, nesting deeper than
// 128 or trailing data are rejected with ErrInvalidArguments: parsers
// disagree on those, and the backend must act on exactly what the user
// confirmed.
func Digest(args json.RawMessage) ([32]byte, error) {
	b, err := canonical(args)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// DigestConfirmable is Digest for the arguments of a call a person is asked to confirm: it also
// refuses (ErrInvalidArguments) an integer literal beyond ±2^53, which JavaScript's JSON.parse
// and every decoder into a float64 read rounded (12345678901234567 as 12345678901234568)
// while Python and decoders into integer fields read it exactly, and a literal with a fraction
// or an exponent that a double cannot say (12345678901234567.0, 0.10000000000000001, 1e400),
// which decoders into doubles read rounded while decimal decoders (Python's Decimal, Java's
// BigDecimal) read it exactly (jsonrpc.NumberAsDouble). The person is shown the literal; a backend of one
// kind or the other would act on its neighbour. The digest is Digest's.
//
// Integer literals are held to more than jsonrpc.NumberAsDouble's rule (the shortest form of the
// nearest double spells the value written), which pinning applies to every number: Python's json
// and decoders into integer fields read an integer literal as that exact integer, not as a
// double, so 100000000000000000000000, whose double's shortest form is 1e+23 but whose double is
// 99999999999999991611392, is read as two integers. Pinning only has to tell two numbers apart
// (a number no double spells is kept exact there); a confirmation has to be read alike by every
// backend, so it refuses instead, and every integer up to ±2^53 is a double exactly.
func DigestConfirmable(args json.RawMessage) ([32]byte, error) {
	b, err := canonicalOf(args, true)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// appendString writes s as a JSON string escaping only what JSON requires,
// so each string value has exactly one canonical spelling.
func appendString[S ~string | ~[]byte](out []byte, s S) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// WithDefinition binds an argument digest to the fingerprint of the definition a person is
// asked to confirm (a tool, prompt or resource template that changed since it was pinned), so
// that a state sealed for one definition does not open for another.
func WithDefinition(args [32]byte, fingerprint string) [32]byte {
	h := sha256.New()
	h.Write([]byte("mcp-gateway/mrtr/definition\x00"))
	h.Write(args[:])
	h.Write([]byte(fingerprint))
	var out [32]byte
	h.Sum(out[:0])
	return out
}
