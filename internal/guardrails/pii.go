package guardrails

import (
	"unicode"
	"unicode/utf8"
)

// The personal data detectors: e-mail addresses, phone numbers (international form with a '+',
// and North American numbers with separators), payment card numbers that pass the Luhn check
// and carry a known issuer prefix, and IBANs that pass the ISO 13616 mod-97 check.

// email matches an address around the '@' at t[i]: a local part of up to 64 characters, and a
// domain of at least two labels whose last is 2 to 24 letters.
func (s *textScan) email(i int) int {
	if e := s.emailAt(i, 1); e > i {
		return e
	}
	return i + 1
}

// emailAt matches an address around the at sign t[i:i+w] ('@', or "%40" percent-encoded in a
// URL's query or path, which the backend decodes to the same address) and returns its end (i
// when none). A domain's labels may hold bytes above ASCII: an internationalised domain
// (maria@münchen.de) is written so, and delivered to.
func (s *textScan) emailAt(i, w int) int {
	t := s.t
	ls := i
	for ls > 0 && i-ls < 64 && localByte(t[ls-1]) {
		ls--
	}
	for ls < i && t[ls] == '.' {
		ls++
	}
	if ls == i || t[i-1] == '.' {
		return i
	}
	d, labels, lastStart := i+w, 0, 0
	for {
		start := d
		d = labelEnd(t, d)
		if d == start {
			break
		}
		labels, lastStart = labels+1, start
		if d+1 < len(t) && t[d] == '.' && isAlnum(t[d+1]) {
			d++
			continue
		}
		break
	}
	if labels < 2 || d-lastStart < 2 || d-lastStart > 24 || !all(t[lastStart:d], isLetter) || !boundary(t, d) {
		return i
	}
	s.found(DetEmail, ls, d)
	return d
}

// labelEnd returns the end of the domain label at t[d:] (at most 63 bytes): letters, digits
// and hyphens, of any script (an internationalised domain), and never a hyphen last (a dash
// after an address ends it).
func labelEnd(t []byte, d int) int {
	start := d
	for d < len(t) && d-start < 63 {
		c := t[d]
		if isAlnum(c) || c == '-' {
			d++
			continue
		}
		n := 0
		if c >= 0x80 {
			n = labelRune(t, d)
		}
		if n == 0 {
			break
		}
		d += n
	}
	for d > start && t[d-1] == '-' {
		d--
	}
	return d
}

// labelRune returns the length of the letter, digit or combining mark above ASCII at t[d] (0
// when it is none).
func labelRune(t []byte, d int) int {
	r, n := utf8.DecodeRune(t[d:])
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
		return 0
	}
	return n
}

func localByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// number runs the detectors that start from the token t[i:j], which starts with a digit: a
// payment card, a North American phone number.
func (s *textScan) number(i, j int) int {
	if s.on.has(DetPaymentCard) && cardMay(s.t, i, j) {
		if e := s.card(i); e > i {
			return e
		}
	}
	if s.on.has(DetPhone) && phoneMay(s.t, i) {
		return s.phone(i)
	}
	return i
}

// cardMay reports whether a card number may start at the number token t[i:j], before it is
// read: every network's numbers start with 2 to 6 (cardNetwork), and its 13 digits at least lie
// in the token or go on after a space (a token ends at any other separator; a byte above ASCII
// may start a wider space, groupSpace, which card reads).
func cardMay(t []byte, i, j int) bool {
	return t[i] >= '2' && t[i] <= '6' && (j-i >= 13 || (j+1 < len(t) && ((t[j] == ' ' && isDigit(t[j+1])) || t[j] >= 0xC2)))
}

// groupSpace returns the length of the space that separates a number's groups at t[k] (0 when
// none): ' ', or a space word processors, spreadsheets and French typography put between
// digit groups instead (U+00A0 no-break, U+2007 figure, U+2009 thin, U+202F narrow no-break).
// A card, an IBAN or a phone number written with them is read as the same number.
func groupSpace(t []byte, k int) int {
	if k >= len(t) {
		return 0
	}
	switch t[k] {
	case ' ':
		return 1
	case 0xC2:
		if k+1 < len(t) && t[k+1] == 0xA0 {
			return 2
		}
	case 0xE2:
		if k+2 < len(t) && t[k+1] == 0x80 && (t[k+2] == 0x87 || t[k+2] == 0x89 || t[k+2] == 0xAF) {
			return 3
		}
	}
	return 0
}

// phoneMay reports whether a phone number (phone) may start at the digit t[i]: its first group
// is "1-" or three digits and a dash or a dot.
func phoneMay(t []byte, i int) bool {
	return (t[i] == '1' && i+1 < len(t) && t[i+1] == '-') || (i+3 < len(t) && (t[i+3] == '-' || t[i+3] == '.'))
}

// card matches a payment card number at t[i:]: 13 to 19 digits, optionally in groups separated
// by single spaces (groupSpace) or dashes (one kind), that pass the Luhn check and start with a prefix of a
// card network that issues that length.
func (s *textScan) card(i int) int {
	t := s.t
	var d [20]byte
	n, k, sep := 0, i, byte(0)
	for k < len(t) && n < len(d) {
		c := t[k]
		if isDigit(c) {
			d[n] = c - '0'
			n, k = n+1, k+1
			continue
		}
		w := 1
		if c != '-' {
			c, w = ' ', groupSpace(t, k)
		}
		if w > 0 && (sep == 0 || sep == c) && k+w < len(t) && isDigit(t[k+w]) {
			sep, k = c, k+w
			continue
		}
		break
	}
	if n < 13 || n > 19 || !boundary(t, k) || !luhn(d[:n]) || !cardNetwork(d[:n]) {
		return i
	}
	s.found(DetPaymentCard, i, k)
	return k
}

// luhn reports whether the digits pass the Luhn (mod 10) check.
func luhn(d []byte) bool {
	sum := 0
	for k := len(d) - 1; k >= 0; k-- {
		v := int(d[k])
		if (len(d)-1-k)%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// cardNetwork reports whether the digits start with the prefix of a card network that issues
// numbers of their length: Visa, Mastercard, American Express, Discover, JCB, Diners Club,
// UnionPay.
func cardNetwork(d []byte) bool {
	p := func(k int) int {
		v := 0
		for _, c := range d[:k] {
			v = v*10 + int(c)
		}
		return v
	}
	n := len(d)
	switch {
	case d[0] == 4:
		return n == 13 || n == 16 || n == 19
	case p(2) >= 51 && p(2) <= 55, p(4) >= 2221 && p(4) <= 2720:
		return n == 16
	case p(2) == 34 || p(2) == 37:
		return n == 15
	case p(4) == 6011, p(3) >= 644 && p(3) <= 649, p(2) == 65, p(4) >= 3528 && p(4) <= 3589, p(2) == 62:
		return n >= 16
	case p(3) >= 300 && p(3) <= 305, p(2) == 36, p(2) == 38, p(2) == 39:
		return n >= 14
	}
	return false
}

// phone matches a phone number at t[i:]: '+', a country code and 8 to 15 digits in all, in
// groups separated by single spaces (groupSpace), dots or dashes (one group may be in parentheses); or a
// North American number, "(NXX) NXX-XXXX", "NXX-NXX-XXXX" or "NXX.NXX.XXXX", optionally after
// "1-". Bare runs of digits are not phone numbers here: ids and timestamps look the same.
func (s *textScan) phone(i int) int {
	t := s.t
	if t[i] == '+' {
		return s.intlPhone(i)
	}
	k := i
	if hasPrefix(t, k, "1-") {
		k += 2
	}
	var e int
	if k < len(t) && t[k] == '(' {
		if !areaCode(t, k+1) || k+5 > len(t) || t[k+4] != ')' {
			return i
		}
		e = k + 5 + groupSpace(t, k+5)
	} else {
		if !areaCode(t, k) || k+3 >= len(t) || (t[k+3] != '-' && t[k+3] != '.') {
			return i
		}
		e = k + 4
	}
	sep := byte('-')
	if t[k] != '(' {
		sep = t[k+3]
	}
	if !areaCode(t, e) || e+8 > len(t) || t[e+3] != sep || !all(t[e+4:e+8], isDigit) || !boundary(t, e+8) {
		return i
	}
	s.found(DetPhone, i, e+8)
	return e + 8
}

// areaCode reports whether t[k:k+3] is a North American area or exchange code: [2-9]XX.
func areaCode(t []byte, k int) bool {
	return k+3 <= len(t) && t[k] >= '2' && t[k] <= '9' && isDigit(t[k+1]) && isDigit(t[k+2])
}

// intlPhone matches an international number at the '+' at t[i].
func (s *textScan) intlPhone(i int) int {
	t := s.t
	k, n, parens := i+1, 0, false
	if k >= len(t) || t[k] < '1' || t[k] > '9' {
		return i
	}
	end := k
	for k < len(t) && n <= 15 {
		c := t[k]
		switch {
		case isDigit(c):
			n, k = n+1, k+1
			end = k
			continue
		case (c == '-' || c == '.') && k+1 < len(t) && (isDigit(t[k+1]) || t[k+1] == '('):
			k++
			continue
		case groupSpace(t, k) > 0:
			if w := groupSpace(t, k); k+w < len(t) && (isDigit(t[k+w]) || t[k+w] == '(') {
				k += w
				continue
			}
		case c == '(' && !parens && n > 0:
			c2 := run(t, k+1, 5, isDigit)
			if c2 > k+1 && c2 < len(t) && t[c2] == ')' {
				parens, n, k = true, n+c2-k-1, c2+1
				end = k
				k += groupSpace(t, k)
				continue
			}
		}
		break
	}
	if n < 8 || n > 15 || !boundary(t, end) {
		return i
	}
	s.found(DetPhone, i, end)
	return end
}

// ibanLengths is the length of each country's IBAN (the ISO 13616 registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// iban matches an IBAN at t[i:]: a country code, two check digits and the country's length of
// upper-case letters and digits, written together or in groups of four separated by single
// spaces (groupSpace), whose mod-97 check (ISO 7064) gives 1.
func (s *textScan) iban(i int) int {
	t := s.t
	if !isUpper(t[i+1]) || !isDigit(t[i+2]) || !isDigit(t[i+3]) {
		return i
	}
	want, ok := ibanLengths[string(t[i:i+2])]
	if !ok {
		return i
	}
	var buf [34]byte
	n, k := 0, i
	for k < len(t) && n < want {
		c := t[k]
		switch {
		case isUpper(c) || isDigit(c):
			buf[n] = c
			n, k = n+1, k+1
		case n%4 == 0 && n > 0 && groupSpace(t, k) > 0:
			w := groupSpace(t, k)
			if k+w >= len(t) || !(isUpper(t[k+w]) || isDigit(t[k+w])) {
				return i
			}
			k += w
		default:
			return i
		}
	}
	if n != want || !boundary(t, k) || !mod97(buf[:n]) {
		return i
	}
	s.found(DetIBAN, i, k)
	return k
}

// mod97 reports whether an IBAN passes its check: moved to the end, its first four characters,
// letters as 10 to 35, leave remainder 1 modulo 97.
func mod97(b []byte) bool {
	r := 0
	add := func(c byte) {
		if isDigit(c) {
			r = (r*10 + int(c-'0')) % 97
			return
		}
		r = (r*100 + int(c-'A') + 10) % 97
	}
	for _, c := range b[4:] {
		add(c)
	}
	for _, c := range b[:4] {
		add(c)
	}
	return r == 1
}
