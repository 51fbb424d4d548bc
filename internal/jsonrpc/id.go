package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// CanonicalID gives one spelling to each JSON-RPC id as a peer reads it: "7" and 7 are
// different ids, "a" and "\u0061" the same one, and so are two integers a peer reads as one
// number. The TypeScript SDK (so mcp-remote, and Node backends) decodes every JSON number as a
// double: 0 and -0 are one id to it, and integers beyond 2^53 that round to the same double
// too, so such integers are compared as that double (an exact integer below 2^53 keeps its
// digits). An id that is neither a string nor an integer (a fraction, an exponent, null) has
// no canonical form: !ok. Every place that asks whether two ids are one (a backend's answer, a
// client's cancellation, a batch's duplicates) asks this, so they cannot disagree.
func CanonicalID(id json.RawMessage) (string, bool) {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return "", false
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return "", false
		}
		if LoneSurrogate(id) {
			return surrogateID(id), true
		}
		return "s" + s, true
	}
	digits := id
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > maxIDDigits {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	f, err := strconv.ParseFloat(string(id), 64)
	switch {
	case err != nil:
		return "", false
	case f == 0:
		return "n0", true // -0 too
	case math.Abs(f) < 1<<53:
		return "n" + string(id), true
	}
	return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
}

// surrogateID is the canonical form of a valid string id lit that holds a lone surrogate.
// encoding/json reads every lone surrogate as U+FFFD, which would make "\ud800", "\udc00" and
// "\ufffd" one id, while a JavaScript peer keeps the surrogate and sees three. Its runes are
// written as UTF-8 and a surrogate as the three bytes WTF-8 gives it, bytes no UTF-8 text
// holds, so the form is told apart from every other string's.
func surrogateID(lit []byte) string {
	body := lit[1 : len(lit)-1]
	out := make([]byte, 1, len(body)+1)
	out[0] = 's'
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			out = append(out, body[i])
			continue
		}
		r, n := EscapedRune(body, i)
		if n == 2 {
			r = rune(shortEscapes[body[i+1]])
		}
		if utf16.IsSurrogate(r) {
			out = append(out, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
		} else {
			out = utf8.AppendRune(out, r)
		}
		i += n - 1
	}
	return string(out)
}

// shortEscapes are the two-byte escapes of JSON strings, by the byte after the backslash.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// maxIDDigits bounds the digits of an integer id compared by its value: a longer one is no
// double a peer could tell from its neighbours, and none a peer sends.
const maxIDDigits = 308
