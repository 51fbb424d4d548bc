package guardrails

import (
	"math"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// Byte classes of the text scanner (text.go). A byte of class 0 (a space, most punctuation) is
// skipped with one table load: the common case.
const (
	// clsWord: a byte of a token, [A-Za-z0-9_./+~%-]. Tokens are what most detectors look at.
	clsWord uint16 = 1 << iota
	// clsAnchor: a byte some detector starts from outside a token: '@' (e-mail), ':' (links,
	// connection strings, "key: value"), '=' ("key=value"), '<' and '[' (chat-template and
	// role markers), '(' (a phone number's area code), '\\' (an escape written out in text,
	// after which a token begins: textScan.escape).
	clsAnchor
	// clsOther: a byte above ASCII (the first of a UTF-8 sequence) or a control character:
	// what the invisible and bidi detectors judge.
	clsOther
	// clsLetter, clsUpper, clsDigit, clsB64, clsLower: character classes the matchers use, and
	// the classes a token holds (ORed as it is read) rule out the detectors that need others.
	clsLetter
	clsUpper
	clsDigit
	clsB64 // [A-Za-z0-9+/_-]: base64 and base64url
	clsLower
	// clsSep: a byte of a token that is neither a letter nor a digit, [_./+~%-]: what a path,
	// a host name or a compound name joins its parts with, after which a format may start
	// inside a token (textScan.inner).
	clsSep
)

// tables are the scanner's lookup tables, computed once per Engine.
type tables struct {
	cls [256]uint16
	// maybeInvisible marks the code points of the Basic Multilingual Plane that pins'
	// classification may call invisible (some only in context: a variation selector, a
	// carriage return): every other one is decided without the Unicode tables.
	maybeInvisible [0x10000 / 64]uint64
	// plogp[c] is c·log2(c), for the entropy of a token of up to maxEntropyLen bytes.
	plogp [maxEntropyLen + 1]float64
	// phraseRow marks, by the first byte of a word (the row, its low five bits: the letter
	// without its case), the second bytes (their low five bits) of the words an
	// instruction-like phrase can start with (phraseStarts). Most words are turned away by it
	// with one load from a table of 128 bytes, which stays in the first-level cache next to cls
	// while the gateway does its other work; other bytes that share a letter's low bits only
	// cost the next look.
	phraseRow [32]uint32
	// phraseTri marks, for a word whose first two bytes passed phraseRow, by those two (their
	// low five bits) its third (its low five bits; 0 when the token ends after two): a word
	// that shares its first two letters with one ("at", "report", "integration") is turned away
	// here, from a table of 4 KiB. Every third byte is marked for a word of two ("do"), which
	// whatever follows it may end ("do_not", "do-not").
	phraseTri [32 * 32]uint32
	// phraseWord marks the words a phrase can start with, by their first three letters and
	// length (phraseWordKey): a word that only shares its first letters with one ("with",
	// "note" for "not") is not looked up in the word lists; a collision only costs that look.
	phraseWord [phraseWordBits / 64]uint64
	// prefixRow marks, as phraseRow does, the first two bytes of every prefixed format (and of
	// a JWT): a token that starts otherwise, nearly every word, is not compared with the
	// formats one by one.
	prefixRow [32]uint32
	// authStop marks the bytes that end a URL's authority (authorityEnd).
	authStop [256]bool
}

func newTables() *tables {
	t := &tables{}
	for c := 0; c < 256; c++ {
		var k uint16
		switch {
		case c >= 'a' && c <= 'z':
			k = clsWord | clsLetter | clsLower | clsB64
		case c >= 'A' && c <= 'Z':
			k = clsWord | clsLetter | clsUpper | clsB64
		case c >= '0' && c <= '9':
			k = clsWord | clsDigit | clsB64
		case c == '_' || c == '-' || c == '/' || c == '+':
			k = clsWord | clsB64 | clsSep
		case c == '.' || c == '~' || c == '%':
			k = clsWord | clsSep
		case c == '@' || c == ':' || c == '=' || c == '<' || c == '[' || c == '(' || c == '\\':
			k = clsAnchor
		case c >= 0x80 || c == 0x7f || (c < 0x20 && c != '\t' && c != '\n'):
			k = clsOther
		}
		t.cls[c] = k
		t.authStop[c] = authorityEnd(byte(c))
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
			t.prefixRow[f.prefix[0]&31] |= 1 << (f.prefix[1] & 31)
		}
	}
	for _, ws := range phraseStarts() {
		for _, w := range ws {
			t.phraseRow[w[0]&31] |= 1 << (w[1] & 31)
			third := ^uint32(0)
			if len(w) > 2 {
				third = 1 << (w[2] & 31)
			}
			t.phraseTri[phraseTriKey(w[0], w[1])] |= third
			k := phraseWordKey([]byte(w))
			t.phraseWord[k/64] |= 1 << (k % 64)
		}
	}
	return t
}

// phraseStarts are the words phrase (injection.go) starts a match from, each list as phrase
// tells them apart.
func phraseStarts() [][]string {
	return [][]string{overrideVerbs, {"do", "never", "don't", "dont", "without", "new", "updated"}, noteWords, roleWords}
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

// mayStartPhrase reports whether an instruction-like phrase may start at the token t[i:j] (two
// bytes at least, the first a letter): whether the word there (letters and apostrophes,
// wordEnd) may be one of phraseStarts, from its first two bytes (phraseRow: a load and a bit),
// then its third (phraseTri), then its first three letters and length (phraseWordMay). Each is
// a necessary condition of phrase finding anything: a word that fails one is never one phrase
// starts from. The scan loop inlines the first two looks, which run for nearly every word.
func (tb *tables) mayStartPhrase(t []byte, i, j int) bool {
	return tb.phraseRowHas(t[i], t[i+1]) && tb.phraseTriHas(t, i, j) && tb.phraseWordMay(t, i)
}

// phraseRowHas is mayStartPhrase's first look, at a word's first two bytes a and b.
func (tb *tables) phraseRowHas(a, b byte) bool { return tb.phraseRow[a&31]>>(b&31)&1 != 0 }

// phraseTriHas is mayStartPhrase's second look, at the token t[i:j]'s third byte.
func (tb *tables) phraseTriHas(t []byte, i, j int) bool {
	var c byte
	if j-i > 2 {
		c = t[i+2]
	}
	return tb.phraseTri[phraseTriKey(t[i], t[i+1])]>>(c&31)&1 != 0
}

// phraseTriKey is the row of phraseTri of a word that starts with a and b.
func phraseTriKey(a, b byte) int { return int(a&31)<<5 | int(b&31) }

// phraseWordMay is mayStartPhrase's last look, at the whole word.
func (tb *tables) phraseWordMay(t []byte, i int) bool {
	k := phraseWordKey(t[i:wordEnd(t, i)])
	return tb.phraseWord[k/64]&(1<<(k%64)) != 0
}

// phraseWordBits is the size of phraseWord: some twenty words in 4096 bits.
const phraseWordBits = 4096

// phraseWordKey hashes a word (letters and apostrophes) into the bits of phraseWord from its
// first three letters, without their case, and its length. A word of one letter starts no
// phrase: it gets the key of the empty word.
func phraseWordKey(w []byte) uint16 {
	if len(w) < 2 {
		return 0
	}
	var c byte
	if len(w) > 2 {
		c = w[2] | 0x20
	}
	k := uint32(w[0]|0x20)*961 + uint32(w[1]|0x20)*31 + uint32(c) + uint32(len(w))*7919
	return uint16(k % phraseWordBits)
}

// maybePrefixed reports whether a token that starts with a and b may be of a prefixed format.
func (tb *tables) maybePrefixed(a, b byte) bool { return tb.prefixRow[a&31]>>(b&31)&1 != 0 }
