package guardrails

import (
	"math"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// Byte classes of the text scanner (text.go). A byte of class 0 (a space, most punctuation) is
// skipped with one table load: the common case.
const (
	// clsWord: a byte of a token, [A-Za-z0-9_./+~%-]. Tokens are what most detectors look at.
	clsWord uint8 = 1 << iota
	// clsAnchor: a byte some detector starts from outside a token: '@' (e-mail), ':' (links,
	// connection strings, "key: value"), '=' ("key=value"), '<' and '[' (chat-template and
	// role markers), '(' (a phone number's area code).
	clsAnchor
	// clsOther: a byte above ASCII (the first of a UTF-8 sequence) or a control character:
	// what the invisible and bidi detectors judge.
	clsOther
	// clsLetter, clsUpper, clsDigit, clsB64: character classes the matchers use.
	clsLetter
	clsUpper
	clsDigit
	clsB64 // [A-Za-z0-9+/_-]: base64 and base64url
)

// tables are the scanner's lookup tables, computed once per Engine.
type tables struct {
	cls [256]uint8
	// maybeInvisible marks the code points of the Basic Multilingual Plane that pins'
	// classification may call invisible (some only in context: a variation selector, a
	// carriage return): every other one is decided without the Unicode tables.
	maybeInvisible [0x10000 / 64]uint64
	// plogp[c] is c·log2(c), for the entropy of a token of up to maxEntropyLen bytes.
	plogp [maxEntropyLen + 1]float64
	// phrase2 marks the first three letters, in lower case, of the words an instruction-like
	// phrase can start with (phraseKey): other words are not looked up in the word lists.
	phrase2 [0x10000 / 64]uint64
	// prefix2 marks the first two bytes of every prefixed format (and of a JWT): a token that
	// starts otherwise, nearly every word, is not compared with the formats one by one.
	prefix2 [0x10000 / 64]uint64
}

func newTables() *tables {
	t := &tables{}
	for c := 0; c < 256; c++ {
		var k uint8
		switch {
		case c >= 'a' && c <= 'z':
			k = clsWord | clsLetter | clsB64
		case c >= 'A' && c <= 'Z':
			k = clsWord | clsLetter | clsUpper | clsB64
		case c >= '0' && c <= '9':
			k = clsWord | clsDigit | clsB64
		case c == '_' || c == '-' || c == '/' || c == '+':
			k = clsWord | clsB64
		case c == '.' || c == '~' || c == '%':
			k = clsWord
		case c == '@' || c == ':' || c == '=' || c == '<' || c == '[' || c == '(':
			k = clsAnchor
		case c >= 0x80 || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n'):
			k = clsOther
		}
		t.cls[c] = k
	}
	for r := rune(0); r < 0x10000; r++ {
		// Neighbours that make a contextual code point count: a letter before a variation
		// selector, a letter after a carriage return.
		if _, bad := pins.ClassifyRune(r, 'a', 'a'); bad {
			t.maybeInvisible[r/64] |= 1 << (r % 64)
		}
	}
	for c := 1; c <= maxEntropyLen; c++ {
		t.plogp[c] = float64(c) * math.Log2(float64(c))
	}
	for _, fs := range [][]prefixed{lowerFormats, upperFormats, {{prefix: "eyJ"}}} {
		for _, f := range fs {
			k := uint16(f.prefix[0])<<8 | uint16(f.prefix[1])
			t.prefix2[k/64] |= 1 << (k % 64)
		}
	}
	starts := [][]string{overrideVerbs, {"do", "never", "don't", "dont", "without", "new", "updated"}, noteWords, roleWords}
	for _, ws := range starts {
		for _, w := range ws {
			var c byte
			if len(w) > 2 {
				c = w[2]
			}
			k := phraseKey(w[0], w[1], c)
			t.phrase2[k/64] |= 1 << (k % 64)
		}
	}
	return t
}

// candidate reports whether r may be an invisible code point, before its context is looked at.
func (t *tables) candidate(r rune) bool {
	if r < 0x10000 {
		return t.maybeInvisible[r/64]&(1<<(r%64)) != 0
	}
	// Beyond the BMP: tags and variation selectors (plane 14), noncharacters (the last two
	// code points of every plane) and a few format characters (shorthand format controls,
	// musical symbol formatting).
	return r >= 0xE0000 || r&0xFFFE == 0xFFFE || (r >= 0x1BCA0 && r <= 0x1BCA3) || (r >= 0x1D173 && r <= 0x1D17A)
}

// maybePhrase reports whether the word w (two bytes at least) may start an instruction-like
// phrase, from its first three letters (two for a word of two).
func (t *tables) maybePhrase(w []byte) bool {
	var c byte
	if len(w) > 2 {
		c = lowerASCII(w[2])
	}
	k := phraseKey(lowerASCII(w[0]), lowerASCII(w[1]), c)
	return t.phrase2[k/64]&(1<<(k%64)) != 0
}

// phraseKey hashes a word's first three letters (c is 0 for a word of two) into the bits of
// phrase2; a collision only costs a look at the word lists.
func phraseKey(a, b, c byte) uint16 { return uint16(a)*961 + uint16(b)*31 + uint16(c) }

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// maybePrefixed reports whether a token that starts with a and b may be of a prefixed format.
func (t *tables) maybePrefixed(a, b byte) bool {
	k := uint16(a)<<8 | uint16(b)
	return t.prefix2[k/64]&(1<<(k%64)) != 0
}
