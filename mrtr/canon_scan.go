package mrtr

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// str decodes the JSON string at p.pos (an opening quote) onto dst.
func (p *canonParser) str(dst []byte) ([]byte, error) {
	p.pos++ // '"'
	for p.pos < len(p.in) {
		switch c := p.in[p.pos]; {
		case c == '"':
			p.pos++
			return dst, nil
		case c == '\\':
			var err error
			if dst, err = p.escape(dst); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, p.fail("control character in string")
		default:
			dst = append(dst, c)
			p.pos++
		}
	}
	return nil, p.fail("unterminated string")
}

// escape decodes one backslash escape. Lone surrogates are rejected rather
// than replaced by U+FFFD as encoding/json does, so that two different
// strings never share a canonical form.
func (p *canonParser) escape(dst []byte) ([]byte, error) {
	if p.pos+1 >= len(p.in) {
		return nil, p.fail("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(dst, c), nil
	case 'b':
		return append(dst, '\b'), nil
	case 'f':
		return append(dst, '\f'), nil
	case 'n':
		return append(dst, '\n'), nil
	case 'r':
		return append(dst, '\r'), nil
	case 't':
		return append(dst, '\t'), nil
	case 'u':
		return p.unicodeEscape(dst)
	}
	return nil, p.fail("invalid escape")
}

func (p *canonParser) unicodeEscape(dst []byte) ([]byte, error) {
	r, ok := p.hex4()
	if !ok {
		return nil, p.fail("invalid \\u escape")
	}
	if utf16.IsSurrogate(r) {
		if p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
			return nil, p.fail("lone surrogate")
		}
		p.pos += 2
		lo, ok := p.hex4()
		if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
			return nil, p.fail("invalid surrogate pair")
		}
	}
	return utf8.AppendRune(dst, r), nil
}

func (p *canonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// number copies a JSON number literal unchanged after checking its grammar.
func (p *canonParser) number(out []byte) ([]byte, error) {
	start := p.pos
	p.accept('-')
	intStart := p.pos
	switch {
	case p.accept('0'):
	case p.digits() == 0:
		return nil, p.fail("invalid number")
	}
	intPart := p.in[intStart:p.pos]
	integer := true
	if p.accept('.') {
		if integer = false; p.digits() == 0 {
			return nil, p.fail("invalid number fraction")
		}
	}
	if p.accept('e') || p.accept('E') {
		integer = false
		if !p.accept('+') {
			p.accept('-')
		}
		if p.digits() == 0 {
			return nil, p.fail("invalid number exponent")
		}
	}
	if p.exactIntegers && integer && beyondDoubles(intPart) {
		return nil, p.fail("an integer beyond 2^53, which some parsers read rounded")
	}
	if p.exactIntegers && !integer {
		if _, alike := jsonrpc.NumberAsDouble(p.in[start:p.pos]); !alike {
			return nil, p.fail("a number that parsers reading doubles read as another value")
		}
	}
	return append(out, p.in[start:p.pos]...), nil
}

// beyondDoubles reports whether the decimal digits of an integer (no leading zeros) name a
// magnitude above 2^53: a float64, as JavaScript and Go's interface{} decoding read it, holds
// it rounded, while Python and Go's integer fields read it exactly.
func beyondDoubles(digits []byte) bool {
	const max = "9007199254740992" // 2^53
	return len(digits) > len(max) || len(digits) == len(max) && string(digits) > max
}

func (p *canonParser) accept(c byte) bool {
	if p.pos < len(p.in) && p.in[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *canonParser) digits() int {
	n := 0
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}
