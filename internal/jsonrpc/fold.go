package jsonrpc

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Member names are compared by the gateway exactly, but many decoders a backend may use do
// not: Go's encoding/json matches struct fields with Unicode simple case folding (so "NAME",
// "Name" and "name" all fill Name, the last one winning, and the Kelvin sign "K" folds to "k"
// and the long s "ſ" to "s"); encoding/json/v2 with case-insensitive matching also ignores
// '_' and '-'; .NET's case-insensitive option and JavaScript's toUpperCase/toLowerCase map
// the dotless and dotted i to ASCII; Python's str.casefold expands "ß" to "ss" and ligatures
// such as "ﬆ" to "st". A request that names a member the gateway reads in one spelling and a
// second member that one of those decoders reads as the same member would let the gateway
// check one value while the backend acts on another, so the gateway refuses such requests.
//
// FoldKey is the equivalence used for that: two names are "the same under folding" when their
// FoldKey forms are equal. It is deliberately wider than any single decoder: it drops '_' and
// '-', maps fullwidth ASCII forms to ASCII, maps every rune whose simple case folding orbit or
// upper or lower case mapping contains an ASCII letter to that letter, expands the full case
// foldings that yield ASCII (ß, ẞ and the Latin ligatures), and otherwise folds a rune to the
// smallest rune of its simple folding orbit, as encoding/json does; all of it on the name's
// canonical composition (NFC), so canonically equivalent spellings fold alike.

// AppendFoldKey appends the folded form of name to dst.
func AppendFoldKey(dst, name []byte) []byte {
	name = composed(name)
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			i++
			if c == '_' || c == '-' {
				continue
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		i += n
		if s, ok := foldExpansions[r]; ok {
			dst = append(dst, s...)
			continue
		}
		if r >= 0xFF01 && r <= 0xFF5E { // fullwidth ASCII forms
			dst = AppendFoldKey(dst, []byte{byte(r - 0xFEE0)})
			continue
		}
		if a, ok := asciiFold(r); ok {
			dst = append(dst, a)
			continue
		}
		dst = utf8.AppendRune(dst, FoldRune(r))
	}
	return dst
}

// composed returns name in Unicode normalization form C, name itself when it is (always when it
// is ASCII). Canonically equivalent spellings, a letter composed ("é") or as a base and
// combining marks ("e" U+0301) in any canonical order, are one name to decoders that compare
// strings by canonical equivalence (Swift's String) and look the same to a person: they fold
// alike.
func composed(name []byte) []byte {
	for _, c := range name {
		if c >= utf8.RuneSelf {
			// A copy, so that name itself never escapes to the heap: the decode stage folds
			// every member name of every request, nearly always ASCII.
			return []byte(norm.NFC.String(string(name)))
		}
	}
	return name
}

// FoldKey returns the folded form of name as a string.
func FoldKey(name string) string {
	return string(AppendFoldKey(make([]byte, 0, len(name)), []byte(name)))
}

// foldExpansions are the full case foldings (and the Turkic i mappings) that map a non-ASCII
// rune to ASCII letters and that simple folding does not cover.
var foldExpansions = map[rune]string{
	'ß':      "ss",
	'ẞ':      "ss",
	'İ':      "i",
	'ı':      "i",
	'\uFB00': "ff",
	'\uFB01': "fi",
	'\uFB02': "fl",
	'\uFB03': "ffi",
	'\uFB04': "ffl",
	'\uFB05': "st",
	'\uFB06': "st",
}

// asciiFold returns the lower-case ASCII letter r stands for under simple folding or case
// mapping, if any (the Kelvin sign K, the long s ſ).
func asciiFold(r rune) (byte, bool) {
	for _, m := range [...]rune{unicode.ToLower(r), unicode.ToUpper(r)} {
		if m < utf8.RuneSelf && unicode.IsLetter(m) {
			return byte(unicode.ToLower(m)), true
		}
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return byte(unicode.ToLower(f)), true
		}
	}
	return 0, false
}

// FoldRune returns the smallest rune of r's simple folding orbit, as encoding/json does.
func FoldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// FoldEqual reports whether a and b are the same name under folding, without allocating when
// both are ASCII (nearly always).
func FoldEqual(a, b []byte) bool {
	i, j := 0, 0
	for {
		for i < len(a) && (a[i] == '_' || a[i] == '-') {
			i++
		}
		for j < len(b) && (b[j] == '_' || b[j] == '-') {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		ca, cb := a[i], b[j]
		if ca >= utf8.RuneSelf || cb >= utf8.RuneSelf {
			return string(AppendFoldKey(nil, a[i:])) == string(AppendFoldKey(nil, b[j:]))
		}
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
		i++
		j++
	}
}

// variantOf returns the member of known that key is a spelling variant of: equal to it under
// folding without being it. It returns "" when key is one of known or folds to none of them.
func variantOf(key []byte, known []string) string {
	for _, k := range known {
		if string(key) == k {
			return ""
		}
	}
	for _, k := range known {
		if FoldEqual(key, []byte(k)) {
			return k
		}
	}
	return ""
}

// caseVariant is the error for a member whose name differs from one the gateway reads only in
// case or punctuation.
func caseVariant(where, key, known string) *Error {
	return NewError(CodeInvalidParams, "Invalid params: "+where+"member "+quoteForMessage(key)+
		" differs from "+quoteForMessage(known)+" only in case or punctuation")
}
