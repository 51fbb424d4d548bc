// Package mcpheader names the MCP HTTP headers and implements the base64 sentinel encoding that
// SEP-2243 defines for Mcp-Name and Mcp-Param-* values (docs/protocol.md §2.2). It is a leaf: standard
// library only, shared by the client-facing checks and the backend-facing forwarder.
package mcpheader

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Header names (canonical form as net/http stores them).
const (
	ProtocolVersion = "Mcp-Protocol-Version"
	Method          = "Mcp-Method"
	Name            = "Mcp-Name"
	ParamPrefix     = "Mcp-Param-"
	SessionID       = "Mcp-Session-Id" // pre-2026 backends, and pre-2026 clients at the edge (sealed)
	LastEventID     = "Last-Event-Id"  // legacy backends only
	RequestID       = "X-Request-Id"
	TraceParent     = "Traceparent"
	TraceState      = "Tracestate"
	Baggage         = "Baggage"
)

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// ErrBadValue is returned for a header value with invalid characters or a malformed sentinel.
var ErrBadValue = errors.New("invalid MCP header value")

// Decode returns the value a header carries: the base64 sentinel form decoded, anything else as
// it is after checking it holds only visible ASCII and inner spaces. Surrounding optional white
// space has already been trimmed by net/http (RFC 9110 OWS). A value that starts with the
// sentinel's prefix and ends with its suffix but is too short to hold both ("=?base64?=", whose
// '?' belongs to both) is refused: the TypeScript SDK reads it as the sentinel of the empty
// string, the Go SDK as the text itself, so what sits in front of the gateway could read
// another value than the one compared with the body.
func Decode(v string) (string, error) {
	if isSentinel(v) {
		if len(v) < len(sentinelPrefix)+len(sentinelSuffix) {
			return "", ErrBadValue
		}
		enc := v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)]
		dec, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil {
			return "", ErrBadValue
		}
		s := string(dec)
		if !ValidUTF8NoControl(s) {
			return "", ErrBadValue
		}
		return s, nil
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", ErrBadValue
		}
	}
	return v, nil
}

// DecodeName is Decode for Mcp-Name, which also takes a plain value holding non-ASCII text as
// raw UTF-8. SEP-2243 asks for the sentinel there, but the official Go SDK client (v1.8.0) sends
// the name exactly as the body spells it. Taking it cannot make the header and the body name
// different things: the raw bytes must still be valid UTF-8 without control characters, and
// the caller compares the result byte for byte with the body, so a value that passes is the
// body's own spelling. Invalid UTF-8 (a Latin-1 rendering, say) and control characters are
// refused as in Decode.
func DecodeName(v string) (string, error) {
	if isSentinel(v) {
		return Decode(v)
	}
	if !ValidUTF8NoControl(v) {
		return "", ErrBadValue
	}
	return v, nil
}

// ReadsAs names the header, among those the gateway compares with the body, that name reads as
// where every character but a letter or a digit is one character and case does not count:
// servers that expose headers as CGI or WSGI variables (HTTP_MCP_METHOD) read "Mcp_Method" and
// "Mcp-Method" as one header, and several (Apache httpd 2.2, lighttpd, PHP, which turns '.'
// into '_' in every variable name) write any other character of a name as '_' too, so
// "Mcp.Method" and "Mcp~Method" read as it there as well. It returns ProtocolVersion, Method,
// Name, or ParamPrefix followed by "*" for a name whose prefix reads as ParamPrefix; "" for a
// name whose only such character is '-' (the header itself, or none of them) and for one that
// reads as none of them. An Mcp-Param-* name with such a character only after the prefix reads
// as itself: that part names the argument, as its tool spells it.
func ReadsAs(name string) string {
	if !otherThanDash(name) {
		return ""
	}
	for _, h := range [...]string{ProtocolVersion, Method, Name} {
		if sameUnderscored(name, h) {
			return h
		}
	}
	if p := len(ParamPrefix); len(name) > p && otherThanDash(name[:p]) && sameUnderscored(name[:p], ParamPrefix) {
		return ParamPrefix + "*"
	}
	return ""
}

// ReadKey is name as the servers ReadsAs describes read it: letters in lower case and every
// character but a letter or a digit as '-'. Two header names with one key are one header to
// them, as "Mcp-Param-Tenant_Id" and "Mcp-Param-Tenant-Id" are.
func ReadKey(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c | 0x20
		case !alnum(c):
			b[i] = '-'
		}
	}
	return string(b)
}

// otherThanDash reports whether s holds a character other than a letter, a digit or '-'.
func otherThanDash(s string) bool {
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) && s[i] != '-' {
			return true
		}
	}
	return false
}

func alnum(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9'
}

// sameUnderscored reports whether a and b (ASCII header names) are one name with every
// character but a letter or a digit read as '-' and letters compared without case.
func sameUnderscored(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if !alnum(x) {
			x = '-'
		}
		if !alnum(y) {
			y = '-'
		}
		if x|0x20 != y|0x20 || !alnum(x) && x != y {
			return false
		}
	}
	return true
}

// isSentinel reports whether v reads as the sentinel form to some receiver: it starts with the
// prefix and ends with the suffix, overlapping or not (Decode refuses the overlapping one).
func isSentinel(v string) bool {
	return strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix)
}

// Encode renders s as a header value, choosing the sentinel form when SEP-2243 requires it
// (non-ASCII or control characters, leading or trailing white space, or a plain value that
// would itself read as a sentinel) and for the empty string: the Go SDK server (v1.8.0) takes
// an empty Mcp-Param-* header for one not sent and refuses the call with 400/-32020, as may an
// intermediary that drops empty fields, while "=?base64??=" decodes to "" for every receiver.
func Encode(s string) string {
	if needsSentinel(s) {
		return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
	}
	return s
}

func needsSentinel(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	if strings.HasPrefix(s, sentinelPrefix) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	return false
}

// ValidUTF8NoControl reports whether s is valid UTF-8 without a control character: Unicode's
// general category Cc, that is C0 (U+0000–U+001F), DEL and C1 (U+0080–U+009F). It is what
// DecodeName takes as a raw value, and what the gateway sends a backend raw. C1 is refused
// with C0 because a receiver that reads the bytes as Latin-1 or Windows-1252, or strips or
// acts on controls (NEL, U+0085, is a line end to some), would read another name than the one
// compared with the body.
func ValidUTF8NoControl(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
