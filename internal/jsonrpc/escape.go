package jsonrpc

import (
	"unicode/utf16"
	"unicode/utf8"
)

// EscapedRune decodes the escape at raw[i] (a backslash) of JSON text that passed the strict
// scan: the rune of a \u escape (the pair's rune for a surrogate pair) and the escape's length,
// or 0 and the length of any other escape. A lone surrogate comes back as itself (length 6).
func EscapedRune(raw []byte, i int) (rune, int) {
	if i+1 >= len(raw) || raw[i+1] != 'u' || i+6 > len(raw) {
		return 0, 2
	}
	r := Hex4(raw[i+2 : i+6])
	if utf16.IsSurrogate(r) && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
		if p := utf16.DecodeRune(r, Hex4(raw[i+8:i+12])); p != utf8.RuneError {
			return p, 12
		}
	}
	return r, 6
}

// LoneSurrogate reports whether the JSON text lit (a string literal that passed the strict
// scan) holds a \u escape of a UTF-16 surrogate that is not half of a pair: a value parsers read
// differently (encoding/json as U+FFFD, JSON.parse and Python as the surrogate itself).
func LoneSurrogate(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		r, n := EscapedRune(lit, i)
		if utf16.IsSurrogate(r) {
			return true
		}
		i += n - 1
	}
	return false
}

// Hex4 reads the four hex digits of a \u escape (the JSON text passed the strict scan).
func Hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
