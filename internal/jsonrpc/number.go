package jsonrpc

import "strconv"

// NumberAsDouble reads the JSON number literal lit (which passed the strict scan) as parsers
// that read numbers as doubles do (JavaScript's JSON.parse, Go's interface{} and float fields,
// Python's float, JSON Schema validators built on them), and reports whether every parser a
// backend or a client may use reads it as that same value: whether the literal's decimal value
// is that of the shortest decimal naming the double it rounds to. Parsers that keep the
// literal (Python's int and Decimal, pydantic's Decimal fields, Java's BigDecimal, Go's integer
// fields and json.Number) act on the literal: 9007199254740993 is 9007199254740992 to the
// first and itself to the second, 12345678901234567.0 is 12345678901234568 to the first,
// 0.10000000000000001 is 0.1 to the first; 1e400 is no double at all (alike false), 1e-400 is
// zero. 0.1, 1.0, 2.5e-3, 1e2 and 9007199254740994 (a double exactly) are read alike.
//
// Every check that judges a number's value on the gateway's reading of it (a confirmation's
// digest, a schema's maximum) asks this, and refuses what is not read alike: the backend could
// act on another value.
func NumberAsDouble(lit []byte) (f float64, alike bool) {
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return 0, false // beyond the doubles: infinite to some parsers, refused by others
	}
	if PlainInteger(lit) {
		return f, true
	}
	return f, decimalOf(lit) == decimalOf(strconv.AppendFloat(make([]byte, 0, 32), f, 'e', -1, 64))
}

// PlainInteger reports whether lit is an integer literal of at most 15 digits (an optional
// minus, no fraction or exponent), which every double holds exactly: nearly every number, and
// one every parser reads alike without the decimal comparison.
func PlainInteger(lit []byte) bool {
	if len(lit) > 0 && lit[0] == '-' {
		lit = lit[1:]
	}
	if len(lit) == 0 || len(lit) > 15 {
		return false
	}
	for _, c := range lit {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decimal is a number's exact value as a sign, its significant digits (no leading or trailing
// zero; "" for zero, which has no sign) and the power of ten of the last of them.
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// decimalOf reads a JSON number literal (or strconv's 'e' form) exactly. An exponent beyond a
// billion is held there: a literal that large is no double and is refused anyway.
func decimalOf(s []byte) decimal {
	var d decimal
	if len(s) > 0 && s[0] == '-' {
		d.neg, s = true, s[1:]
	}
	digits := make([]byte, 0, len(s))
	frac, exp, inFrac := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			inFrac = true
		case c == 'e' || c == 'E':
			exp = exponent(s[i+1:])
			i = len(s)
		default:
			digits = append(digits, c)
			if inFrac {
				frac++
			}
		}
	}
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	d.exp = exp - frac
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits, d.exp = digits[:len(digits)-1], d.exp+1
	}
	if len(digits) == 0 {
		return decimal{}
	}
	d.digits = string(digits)
	return d
}

// exponent reads an exponent's optional sign and digits, held at ±1e9.
func exponent(s []byte) int {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	e := 0
	for _, c := range s {
		if e < 1e9 {
			e = e*10 + int(c-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}
