package guardrails

import "bytes"

// Numbers are scanned as the digits they stand for. A payment card or a phone number is as
// often sent as a JSON number as a string ({"card": 4111111111111111}), and a backend reads
// the number's value whatever its spelling (4.111111111111111e15 is the same integer), so the
// integer part of every number of ten digits or more is scanned as text: what the detectors
// that read digits (payment-card, phone) would find in the equivalent string, they find in
// the number. A redacted number is replaced whole with the marker, as a string.

// minNumberDigits is the fewest digits any detector matches in digits alone (a NANP number).
const minNumberDigits = 10

// maxNumberDigits bounds the integer part scanned: no detector matches a longer run of digits,
// and a number like 1e999999 is not expanded.
const maxNumberDigits = 24

// number scans the number literal raw[s:e] (true, false and null are passed over) as the
// digits of its integer part.
func (w *walker) number(s, e int) {
	raw := w.raw
	if w.sc.dir == nil || e-s < 2 || (raw[s] != '-' && (raw[s] < '0' || raw[s] > '9')) {
		return
	}
	if e-s < minNumberDigits && !bytes.ContainsAny(raw[s:e], "eE") {
		return // the common case: too short to hold what a detector reads in digits
	}
	digits, ok := integerDigits(raw[s:e], w.win[:0])
	if !ok || len(digits) < minNumberDigits {
		return
	}
	w.win = digits[:0]
	rep := w.sc.rep
	before := len(rep.edits)
	w.marks, w.off = w.marks[:0], s
	w.scanText(digits, len(digits))
	if len(rep.edits) == before {
		return
	}
	// Whatever matched in the digits, the number is replaced whole, and with a string: a
	// marker in the middle of a number is not JSON.
	det := rep.edits[before].det
	rep.edits = append(rep.edits[:before], edit{start: s, end: e,
		text: []byte(`"` + Marker(det) + `"`)})
}

// integerDigits appends to dst the decimal digits of the integer part of the number literal
// lit (which passed the strict scan), without sign or leading zeros: false when it has more
// than maxNumberDigits, or none.
func integerDigits(lit, dst []byte) ([]byte, bool) {
	if lit[0] == '-' {
		lit = lit[1:]
	}
	var mant []byte // the digits of the integer and fraction parts, in the text
	point := -1     // how many of them are before the decimal point
	k := 0
	for ; k < len(lit) && lit[k] != 'e' && lit[k] != 'E'; k++ {
		if lit[k] == '.' {
			point = k
			continue
		}
	}
	body := lit[:k]
	if point < 0 {
		point = len(body)
		mant = body
	} else {
		mant = append(append(dst, body[:point]...), body[point+1:]...)
		dst = mant[:0]
	}
	if k < len(lit) {
		exp, ok := smallExponent(lit[k+1:])
		if !ok {
			return nil, false
		}
		point += exp
	}
	// Leading zeros carry nothing ("0.0004111…e19").
	for len(mant) > 0 && mant[0] == '0' {
		mant, point = mant[1:], point-1
	}
	if point <= 0 || point > maxNumberDigits {
		return nil, false
	}
	out := dst[:0]
	if len(mant) >= point {
		return append(out, mant[:point]...), true
	}
	out = append(out, mant...)
	for len(out) < point {
		out = append(out, '0')
	}
	return out, true
}

// smallExponent reads a number's exponent, false when it is beyond what can make an integer
// part of maxNumberDigits digits from any mantissa the scanner accepts.
func smallExponent(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, b = b[0] == '-', b[1:]
	}
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
		if n > 1<<20 {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}
