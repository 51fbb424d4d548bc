package resuri

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// URIForm returns the URI of the normal form n (RFC 3987 §3.1): every byte of a non-ASCII
// character percent-encoded, as its UTF-8, with upper-case hex digits; the rest of n, ASCII
// already, unchanged. Normalize reads it back as n, since the normal form decodes exactly the
// escapes of UTF-8 sequences: URIForm(n) names what n names, in the spelling a backend that
// looks resources up by their percent-encoded form (or parses them with WHATWG URL, which
// encodes the non-ASCII characters of a path) takes. n must be in normal form.
func URIForm(n string) string {
	k := 0
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 {
			k++
		}
	}
	if k == 0 {
		return n
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(n)+2*k)
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c < 0x80 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&0xF])
	}
	return string(b)
}

// IsASCII reports whether s holds only ASCII: a normal form that is its own URIForm.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// SpellsAs reports whether s is the normal form n written differently only in its non-ASCII
// text: each non-ASCII character raw or percent-encoded as UTF-8 (either case of hex digit),
// composed or not (Unicode canonical equivalence). Everything else must be n byte for byte:
// no dot segment, case, ASCII escape or delimiter of s may differ, so a backend that reads
// such a spelling reads what n names however it treats paths. It is true for URIForm(n).
func SpellsAs(s, n string) bool {
	if s == n {
		return true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c, ok := hexByte(s, i); ok && c >= utf8.RuneSelf {
			b = append(b, c)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return utf8.Valid(b) && norm.NFC.String(string(b)) == n
}
