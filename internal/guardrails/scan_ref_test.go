package guardrails

// The scan loop as it was before the phrase and prefix tables (tables.go), with its own copies of
// the filters it had then, kept as the reference the differential tests (scan_diff_test.go) hold
// the scanner to: whatever a new filter in front of the detectors passes over, the detectors
// must find exactly what they found before it.

// refRun is the scan loop as it was (the reference).
func (s *textScan) refRun() {
	t, tb := s.t, s.tb
	phrases := s.on.has(DetInstructions)
	for i := 0; i < len(t); {
		k := tb.cls[t[i]]
		switch {
		case k == 0:
			i++
		case k&clsWord != 0:
			j, m := i+1, k
			for j < len(t) {
				c := tb.cls[t[j]]
				if c&clsWord == 0 {
					break
				}
				m |= c
				j++
			}
			switch {
			case k&clsLetter != 0 && (j-i < shortWord[k&clsUpper] || !tb.refWordMay(t, i, j, k&clsUpper != 0)):
				// A word no format that starts with a letter can match (most of prose): only an
				// instruction-like phrase may start there.
				if phrases && j-i >= 2 && refMaybePhrase(t, i, j) {
					s.phrase(i, j)
				}
			case k&clsDigit != 0 && j-i < minEntropyLen && !cardMay(t, i, j) && !phoneMay(t, i):
				// A number that starts neither a card nor a phone number: a count, a date, a time.
			default:
				e := s.refToken(i, j, m)
				if e == j && refHasSep(t[i:j]) {
					e = s.refInner(i, j)
				}
				i = e
				continue
			}
			if refHasSep(t[i:j]) {
				if e := s.refInner(i, j); e > j {
					i = e
					continue
				}
			}
			// The space after a word, most often, is passed over here.
			if i = j; i < len(t) && t[i] == ' ' {
				i++
			}
		case k&clsOther != 0:
			i = s.unicode(i)
		default:
			i = s.anchor(i)
		}
	}
}

// refWordMay is wordMay as it was: whether a detector other than the phrases may match at the
// token t[i:j], which starts with a letter (upper case when upper), from its length and first
// bytes.
func (tb *tables) refWordMay(t []byte, i, j int, upper bool) bool {
	n := j - i
	switch {
	case n >= minEntropyLen:
		return true
	case !upper:
		return n >= 8 && refMaybePrefixed(t[i], t[i+1])
	}
	return (n >= 16 && refMaybePrefixed(t[i], t[i+1])) || (n >= 4 && isUpper(t[i+1]) && isDigit(t[i+2]) && isDigit(t[i+3]))
}

// refToken is token as it was: it runs the detectors that start from the token t[i:j], whose
// bytes hold the classes m, and returns where scanning goes on.
func (s *textScan) refToken(i, j int, m uint16) int {
	t := s.t
	c := t[i]
	switch {
	case c >= 'a' && c <= 'z':
		if j-i >= 8 && refMaybePrefixed(c, t[i+1]) && s.on.any(lowerPrefixed) {
			if e := s.lowerSecret(i, j); e > i {
				return e
			}
		}
		if j-i >= 2 && s.on.has(DetInstructions) && refMaybePhrase(t, i, j) {
			s.phrase(i, j)
		}
	case c >= 'A' && c <= 'Z':
		if j-i >= 16 && refMaybePrefixed(c, t[i+1]) && s.on.any(upperPrefixed) {
			if e := s.upperSecret(i, j); e > i {
				return e
			}
		}
		if s.on.has(DetIBAN) && j-i >= 4 {
			if e := s.iban(i); e > i {
				return e
			}
		}
		if j-i >= 2 && s.on.has(DetInstructions) && refMaybePhrase(t, i, j) {
			s.phrase(i, j)
		}
	case c >= '0' && c <= '9':
		if e := s.number(i, j); e > i {
			return e
		}
	case c == '+':
		if s.on.has(DetPhone) {
			if e := s.phone(i); e > i {
				return e
			}
		}
	case c == '-':
		if s.on.has(DetPrivateKey) && j-i >= 10 {
			if e := s.privateKey(i); e > i {
				return e
			}
		}
	}
	if j-i >= 37 && s.on.has(DetAzureClientSecret) && s.azureClientSecret(i, j) {
		return j
	}
	// A random-looking token mixes upper- and lower-case letters and digits (entropy).
	if j-i >= minEntropyLen && m&entropyClasses == entropyClasses && s.on.has(DetHighEntropy) {
		s.entropy(i, j)
	}
	return j
}

// The reference's filters, as they were: the first three letters of a phrase's first word and
// the first two bytes of a prefixed format, each in a bit set of 2^16 bits.
var refPhrase2, refPrefix2 = refFilters()

// refFilters builds the reference's filters from the word lists and the formats.
func refFilters() (phrase2, prefix2 *[0x10000 / 64]uint64) {
	phrase2, prefix2 = new([0x10000 / 64]uint64), new([0x10000 / 64]uint64)
	set := func(b *[0x10000 / 64]uint64, k uint16) { b[k/64] |= 1 << (k % 64) }
	for _, ws := range phraseStarts() {
		for _, w := range ws {
			if len(w) > 2 {
				set(phrase2, refPhraseKey(w[0], w[1], w[2]))
				continue
			}
			set(phrase2, refPhraseKey(w[0], w[1], 0))
			for c := 0; c < 256; c++ {
				if l := byte(c) | 0x20; l < 'a' || l > 'z' {
					set(phrase2, refPhraseKey(w[0], w[1], l))
				}
			}
		}
	}
	for _, fs := range [][]prefixed{lowerFormats, upperFormats, {{prefix: "eyJ"}}} {
		for _, f := range fs {
			set(prefix2, uint16(f.prefix[0])<<8|uint16(f.prefix[1]))
		}
	}
	return phrase2, prefix2
}

// refPhraseKey hashes a word's first three bytes, lowered, into the bits of refPhrase2.
func refPhraseKey(a, b, c byte) uint16 { return uint16(a)*961 + uint16(b)*31 + uint16(c) }

// refMaybePhrase is the phrase filter as it was: the first three letters' bit.
func refMaybePhrase(w []byte, i, j int) bool {
	var c byte
	if j-i > 2 {
		c = w[i+2] | 0x20
	}
	k := refPhraseKey(w[i]|0x20, w[i+1]|0x20, c)
	return refPhrase2[k/64]&(1<<(k%64)) != 0
}

// refMaybePrefixed is the prefixed formats' filter as it was.
func refMaybePrefixed(a, b byte) bool {
	k := uint16(a)<<8 | uint16(b)
	return refPrefix2[k/64]&(1<<(k%64)) != 0
}

// refHasSep reports whether a token holds a byte that is neither a letter nor a digit (after
// which textScan.inner looks for formats), by the bytes themselves.
func refHasSep(tok []byte) bool {
	for _, c := range tok {
		if !isAlnum(c) {
			return true
		}
	}
	return false
}

// refInner is textScan.inner without its filters: every place inside the token t[i:j] that
// follows a byte neither a letter nor a digit, or a percent-encoded byte (%XX), and is a
// letter or a digit, is handed to formatAt.
func (s *textScan) refInner(i, j int) int {
	t := s.t
	for k := i + 1; k < j; k++ {
		if (isAlnum(t[k-1]) && (k-3 < i || !pctEncoded(t, k-3, j))) || !isAlnum(t[k]) {
			continue
		}
		if e := s.formatAt(k, j); e > k {
			if e >= j {
				return e
			}
			k = e - 1
		}
	}
	return j
}
