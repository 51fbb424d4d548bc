package resuri

// Percent-encoding: an escape is decoded where decoding changes nothing a parser reads, kept
// with upper-case hex digits where it would, and refused where parsers disagree.

import (
	"strings"
	"unicode/utf8"
)

// pctNormalize decodes escapes of unreserved characters and of UTF-8 sequences, upper-cases the
// hex digits of the others, and refuses the ambiguous ones.
func pctNormalize(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] != '%' {
			b.WriteByte(s[i])
			i++
			continue
		}
		c, ok := hexByte(s, i)
		if !ok {
			return "", refuse("invalid percent-encoding")
		}
		switch {
		case c >= utf8.RuneSelf:
			// A run of encoded bytes must spell valid UTF-8 of allowed characters.
			var raw []byte
			for i < len(s) && s[i] == '%' {
				c, ok := hexByte(s, i)
				if !ok || c < utf8.RuneSelf {
					break
				}
				raw = append(raw, c)
				i += 3
			}
			if !utf8.Valid(raw) {
				return "", refuse("percent-encoded invalid UTF-8")
			}
			for _, r := range string(raw) {
				if !allowedRune(r) {
					return "", refuse("disallowed percent-encoded character")
				}
			}
			b.Write(raw)
			continue
		case isUnreserved(c):
			b.WriteByte(c)
		case c < 0x20 || c == 0x7F:
			return "", refuse("percent-encoded control character")
		case c == '/':
			return "", refuse("percent-encoded '/'")
		case c == '\\':
			return "", refuse("percent-encoded '\\'")
		case c == '%':
			if c1, n, ok := decodedAt(s, i+3); ok && isHex(c1) {
				if c2, _, ok := decodedAt(s, i+3+n); ok && isHex(c2) {
					return "", refuse("double percent-encoding")
				}
			}
			b.WriteString("%25")
		default:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
		i += 3
	}
	return b.String(), nil
}

const upperHex = "0123456789ABCDEF"

// hexByte decodes the escape at s[i] ("%XX"); it reads s[i+1:i+3] only.
func hexByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) || s[i] != '%' {
		return 0, false
	}
	h, ok1 := unhex(s[i+1])
	l, ok2 := unhex(s[i+2])
	return h<<4 | l, ok1 && ok2
}

// decodedAt is the byte at s[i] as the output will hold it: an escaped unreserved character
// decoded, anything else as it is; n is how many bytes of s it takes.
func decodedAt(s string, i int) (c byte, n int, ok bool) {
	if i >= len(s) {
		return 0, 0, false
	}
	if c, ok := hexByte(s, i); ok && isUnreserved(c) {
		return c, 3, true
	}
	return s[i], 1, true
}

func isHex(c byte) bool { _, ok := unhex(c); return ok }

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
