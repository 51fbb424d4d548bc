package pins

// Numbers: a JSON number is a decimal value, and a fingerprint must tell apart every two values
// a client may read apart. RFC 8785 writes each number as the shortest decimal of its nearest
// IEEE-754 double, so 9007199254740993 and 9007199254740992 (or 0.10000000000000001 and 0.1)
// would share one form although Python's json, Go's json.Number and big-number libraries read
// them as different bounds or constants. The value model therefore keeps a number as a float64
// only when the RFC 8785 form of that double spells exactly the value written, and as a Number,
// its exact value in canonical form, otherwise.

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
)

// Number is a JSON number whose value is not what the RFC 8785 form of its nearest double
// spells: 9007199254740993 (that form is 9007199254740992), 0.10000000000000001 (0.1), 1e-400
// (0), 9223372036854775807 or even 9223372036854775808 (9223372036854776000). It holds the
// number's exact value in canonical form: its significant digits laid out as RFC 8785 lays out
// a double's (plain from 1e-6 up to 1e21, exponent notation outside), so "9.007199254740993e15"
// and "9007199254740993.0" are both Number("9007199254740993"). Since no double's RFC 8785 form
// spells the same value, a Number's text is never that of a float64 of the model, and a value
// has one representation only: a float64, or a Number.
type Number string

// MarshalJSON writes n as the JSON number it is, so that encoding/json (a pinned schema handed
// to a validator) reads the value the fingerprint covers.
func (n Number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// decimal is a number's exact value, 0.digits × 10^exp, negated when neg. digits has no leading
// or trailing zero and is empty for zero, of either sign (-0 is 0, as RFC 8785 writes it and as
// JSON Schema compares it).
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// maxExponent bounds the exponent of a literal: beyond it, the number is refused. A double's
// range ends near 1e308 and 5e-324, so only values a double cannot hold come near it.
const maxExponent = 1 << 20

// parseDecimal reads a JSON number literal (one that matched the grammar) as its exact value;
// false when it is not zero and its exponent is beyond maxExponent.
func parseDecimal(lit string) (decimal, bool) {
	var d decimal
	if lit == "" {
		return d, false
	}
	if lit[0] == '-' {
		d.neg, lit = true, lit[1:]
	}
	mant, e := lit, ""
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant, e = lit[:i], lit[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	exp := len(intPart)
	if strings.Trim(digits, "0") == "" {
		return decimal{}, true // zero, whatever its exponent
	}
	if e != "" {
		x, err := strconv.Atoi(e)
		if err != nil || x > maxExponent || x < -maxExponent {
			return d, false
		}
		exp += x
	}
	trimmed := strings.TrimLeft(digits, "0")
	exp -= len(digits) - len(trimmed)
	d.digits, d.exp = strings.TrimRight(trimmed, "0"), exp
	return d, true
}

// floatDecimal is the value the RFC 8785 form of f spells (f finite).
func floatDecimal(f float64) decimal {
	d, _ := parseDecimal(strconv.FormatFloat(f, 'e', -1, 64))
	return d
}

// numberDecimal is the value of a number of the model: a float64 (what its RFC 8785 form
// spells) or a Number. ok is false for anything else.
func numberDecimal(v any) (decimal, bool) {
	switch v := v.(type) {
	case float64:
		return floatDecimal(v), true
	case Number:
		return parseDecimal(string(v))
	}
	return decimal{}, false
}

// String lays d out as RFC 8785 lays out a double's digits (ECMA-262 Number::toString).
func (d decimal) String() string {
	if d.digits == "" {
		return "0"
	}
	s := layout(d.digits, d.exp)
	if d.neg {
		return "-" + s
	}
	return s
}

// layout writes 0.digits × 10^n the ECMAScript way: plain notation for 1e-6 <= x < 1e21,
// exponent notation ("1e+21", "1.5e-7") outside it.
func layout(digits string, n int) string {
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	s := digits[:1]
	if k > 1 {
		s += "." + digits[1:]
	}
	if n-1 >= 0 {
		return s + "e+" + strconv.Itoa(n-1)
	}
	return s + "e-" + strconv.Itoa(-(n - 1))
}

// cmp compares two values: -1, 0 or +1.
func (d decimal) cmp(e decimal) int {
	sign := func(x decimal) int {
		switch {
		case x.digits == "":
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, se := sign(d), sign(e)
	if sd != se || sd == 0 {
		return compareInts(sd, se)
	}
	// Same sign: compare magnitudes, then flip for negatives. Without trailing zeros, a longer
	// run of digits that shares a prefix is the larger.
	m := compareInts(d.exp, e.exp)
	if m == 0 {
		m = strings.Compare(d.digits, e.digits)
	}
	return sd * m
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxRatDigits bounds the digits and exponent of a value turned into a big.Rat, so that no
// number in a definition makes exact arithmetic costly; a double's exact decimal needs under
// 800 digits and exponents within ±330.
const maxRatDigits = 1100

// rat is d as an exact fraction, or false when it is beyond maxRatDigits.
func (d decimal) rat() (*big.Rat, bool) {
	if len(d.digits) > maxRatDigits || d.exp > maxRatDigits || d.exp < -maxRatDigits {
		return nil, false
	}
	if d.digits == "" {
		return new(big.Rat), true
	}
	s := "0." + d.digits + "e" + strconv.Itoa(d.exp)
	if d.neg {
		s = "-" + s
	}
	return new(big.Rat).SetString(s)
}

// numberValue is the model's value for a literal within the doubles' range: its double when
// every parser reads it alike (the RFC 8785 form of the double spells the literal's value, the
// rule the gateway's other checks of a number apply, jsonrpc.NumberAsDouble), the literal's
// Number otherwise; false when the literal's exponent is beyond maxExponent.
func numberValue(lit string) (any, bool) {
	if f, alike := jsonrpc.NumberAsDouble([]byte(lit)); alike {
		return f, true
	}
	d, ok := parseDecimal(lit)
	if !ok {
		return nil, false
	}
	return Number(d.String()), true
}
