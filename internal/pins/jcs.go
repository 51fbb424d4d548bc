// Package pins fingerprints the definitions a backend lists (tools, prompts, resource templates
// and server instructions), detects invisible and bidirectional Unicode in them, classifies how a
// definition changed since it was pinned, and reads and writes the pins.yaml lock file.
//
// Nothing here is on the request path yet: the gateway does not consult pins when it serves
// lists or calls. See docs/pinning.md.
package pins

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds the nesting of a JSON value the canonicaliser accepts, so a hostile
// definition cannot exhaust the stack.
const maxDepth = 256

// ErrNotCanonicalizable wraps every reason a document cannot be canonicalised.
var ErrNotCanonicalizable = errors.New("pins: JSON not canonicalizable")

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of one JSON document:
// object members sorted by the UTF-16 code units of their names, numbers in ECMAScript form,
// strings with only the escapes the RFC prescribes, no whitespace.
//
// It refuses, rather than repairs, what RFC 8785 §3.1 requires to be valid input (I-JSON,
// RFC 7493): duplicate member names, invalid UTF-8, escaped lone surrogates, and numbers that
// do not fit an IEEE-754 double (beyond ±1.7976931348623157e308, or with an exponent beyond
// ±maxExponent).
//
// One departure from the RFC, so that no two numbers a client may read apart share a form: a
// number is written as the RFC 8785 form of its nearest double only when that form spells
// exactly the value written (1, 1.0 and 1e0 are "1"; 0.1 is "0.1"). A number finer than that
// (9007199254740993, whose nearest double is written 9007199254740992; 0.10000000000000001;
// 1e-400) is written as its exact value, laid out the same way (see Number). Every document
// whose numbers are all of the first kind has exactly its RFC 8785 form.
func Canonicalize(doc []byte) ([]byte, error) {
	v, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	return Encode(v)
}

// Parse decodes one JSON document into the value model the package works on: nil, bool,
// float64, Number, string, []any and map[string]any. A number is a float64 when the RFC 8785
// form of its nearest double spells its value, else a Number holding its exact value. It
// applies the same refusals as Canonicalize.
func Parse(doc []byte) (any, error) {
	p := parser{b: doc}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, p.errf("trailing data")
	}
	return v, nil
}

// Encode writes v (built of nil, bool, float64, Number, string, []any, map[string]any) in
// RFC 8785 form, a Number as its text, which must be what Parse makes of it.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encode(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) errf(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrNotCanonicalizable, p.i, fmt.Sprintf(format, a...))
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.b) {
		return nil, p.errf("unexpected end of input")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, p.errf("unexpected character %q", c)
	}
}

func (p *parser) literal(lit string) error {
	if !bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
		return p.errf("invalid literal")
	}
	p.i += len(lit)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.errf("expected member name")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, p.errf("duplicate member name %q", k)
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.errf("expected ':'")
		}
		p.i++
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unterminated object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errf("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.ws()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unterminated array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.errf("expected ',' or ']'")
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 {
		return nil, p.errf("invalid number")
	} else if n > 1 && p.b[intStart] == '0' {
		return nil, p.errf("leading zero in number")
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errf("invalid fraction")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errf("invalid exponent")
		}
	}
	lit := string(p.b[start:p.i])
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, p.errf("number %s outside the IEEE-754 double range", lit)
	}
	v, ok := numberValue(lit)
	if !ok {
		return nil, p.errf("number %s has an exponent beyond ±%d", lit, maxExponent)
	}
	return v, nil
}

func (p *parser) string() (string, error) {
	p.i++ // opening quote
	// Fast path: printable ASCII without escapes, the usual member name or short value.
	for j := p.i; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			s := string(p.b[p.i:j])
			p.i = j + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return "", p.errf("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			sb.WriteRune(r)
		case c < 0x20:
			return "", p.errf("control character in string")
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", p.errf("invalid UTF-8")
			}
			sb.WriteString(string(p.b[p.i : p.i+n]))
			p.i += n
		}
	}
}

// escape decodes one backslash escape, joining a UTF-16 surrogate pair and refusing a lone
// surrogate (I-JSON, RFC 7493 §2.1).
func (p *parser) escape() (rune, error) {
	if p.i+1 >= len(p.b) {
		return 0, p.errf("unterminated escape")
	}
	c := p.b[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return 0, p.errf("lone low surrogate")
		case r >= 0xD800 && r <= 0xDBFF:
			if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
				return 0, p.errf("lone high surrogate")
			}
			p.i += 2
			lo, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return 0, p.errf("lone high surrogate")
			}
			return utf16.DecodeRune(r, lo), nil
		}
		return r, nil
	}
	return 0, p.errf("invalid escape")
}

func (p *parser) hex4() (rune, error) {
	if p.i+4 > len(p.b) {
		return 0, p.errf("short \\u escape")
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, p.errf("invalid \\u escape")
		}
	}
	p.i += 4
	return r, nil
}

func encode(buf *bytes.Buffer, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrNotCanonicalizable, maxDepth)
	}
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if v {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case float64:
		s, err := FormatNumber(v)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case Number:
		if back, err := Parse([]byte(v)); err != nil || back != any(v) {
			return fmt.Errorf("%w: Number %q is not the exact form of a number no double spells", ErrNotCanonicalizable, string(v))
		}
		buf.WriteString(string(v))
	case string:
		if err := encodeString(buf, v); err != nil {
			return err
		}
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encode(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sortUTF16(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeString(buf, k); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := encode(buf, v[k], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("%w: unsupported Go type %T", ErrNotCanonicalizable, v)
	}
	return nil
}

// sortUTF16 orders member names by their UTF-16 code units (RFC 8785 §3.2.3), which differs
// from byte (code point) order for characters above U+FFFF against U+E000–U+FFFF.
func sortUTF16(keys []string) {
	sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
}

func lessUTF16(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			// Only the first differing code point decides; the code points before it were
			// equal, and so were their code units.
			ha, la := utf16Units(ra)
			hb, lb := utf16Units(rb)
			if ha != hb {
				return ha < hb
			}
			return la < lb
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

// utf16Units returns r's UTF-16 code units: itself and 0, or its surrogate pair.
func utf16Units(r rune) (uint16, uint16) {
	if r < 0x10000 {
		return uint16(r), 0
	}
	hi, lo := utf16.EncodeRune(r)
	return uint16(hi), uint16(lo)
}

// encodeString writes s as RFC 8785 §3.2.2.2 prescribes: '"' and '\' escaped, U+0008, U+0009,
// U+000A, U+000C and U+000D as \b \t \n \f \r, the other C0 controls as \u00xx (lower-case
// hex), everything else literally as UTF-8.
func encodeString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: invalid UTF-8 in string", ErrNotCanonicalizable)
	}
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0 // s[start:i] is pending, needing no escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf.WriteString(s[start:i])
		start = i + 1
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\t':
			buf.WriteString(`\t`)
		case '\n':
			buf.WriteString(`\n`)
		case '\f':
			buf.WriteString(`\f`)
		case '\r':
			buf.WriteString(`\r`)
		default:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xF])
		}
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
	return nil
}

// FormatNumber serialises f the way ECMAScript's Number.prototype.toString does (ECMA-262
// Number::toString, required by RFC 8785 §3.2.2.3): the shortest decimal that round-trips,
// plain notation for 1e-6 <= |f| < 1e21, exponent notation ("1e+21", "1.5e-7") outside it,
// and "0" for both zeros. NaN and the infinities are not JSON and are refused.
func FormatNumber(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("%w: %v is not a JSON number", ErrNotCanonicalizable, f)
	}
	if f == 0 {
		return "0", nil
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-trip digits d1.d2…dk and exponent e: f = 0.d1…dk × 10^n with n = e+1.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, err := strconv.Atoi(expStr)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotCanonicalizable, err)
	}
	return sign + layout(digits, exp+1), nil
}
