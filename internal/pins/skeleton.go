package pins

import (
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

// latinSkeleton maps the letters of other scripts that a reader takes for Latin letters or
// digits to those, so that shadowing reads "rеаd_filе" (Cyrillic е and а) as "read_file". The
// letters are mapped in the decomposed form (NFD), so that a look-alike under a diacritic maps
// too and before NFKC turns a symbol such as the lunate sigma ϲ into a letter (ς) that does not
// look like its c, and again after NFKC, which turns mathematical Greek letters into plain
// ones. It is applied only where shadowing compares names and descriptions, never to what is
// forwarded or shown.
//
// The mapping follows Unicode's confusables data (UTS #39, confusables.txt), restricted to the
// Cyrillic, Greek and Armenian letters whose prototype there is a single ASCII letter or digit;
// case is kept (a capital maps to a capital) because names are split at case changes before
// they are case folded. It departs from UTS #39 where that maps to something this comparison
// cannot use:
//   - Greek Ι, Cyrillic І and Ӏ map to Latin I, not l: Latin I and l are not merged here,
//     and names are compared case folded, so I reads as the i it folds to;
//   - Greek ε κ τ χ map to e k t x: UTS #39 maps them to Latin letters outside ASCII (open e,
//     kra, small capitals) that read as those letters.
//
// Left out: the small-capital look-alikes of Cyrillic (в н к м т read as ʙ ʜ ᴋ ᴍ ᴛ), letters
// that stand for two Latin letters (Ы bl, Ю IO), other scripts (Cherokee, Coptic, Lisu, …), and look-alikes within Latin and digits (0 and
// O, 1 and l, rn and m): UTS #39's full skeleton merges those, which would flag legitimately
// different names of one script.
func latinSkeleton(s string) string {
	if resuri.IsASCII(s) {
		return s
	}
	return strings.Map(confusableLatin, norm.NFKC.String(strings.Map(confusableLatin, norm.NFD.String(s))))
}

// confusableLatin is the ASCII letter or digit r is read as, or r (see latinSkeleton).
func confusableLatin(r rune) rune {
	switch r {
	// Cyrillic capitals.
	case 'А':
		return 'A'
	case 'В':
		return 'B'
	case 'С':
		return 'C'
	case 'Е':
		return 'E'
	case 'Ԍ':
		return 'G'
	case 'Н':
		return 'H'
	case 'І', 'Ӏ':
		return 'I'
	case 'Ј':
		return 'J'
	case 'К':
		return 'K'
	case 'М':
		return 'M'
	case 'О':
		return 'O'
	case 'Р':
		return 'P'
	case 'Ѕ':
		return 'S'
	case 'Т':
		return 'T'
	case 'Ѵ':
		return 'V'
	case 'Ԝ':
		return 'W'
	case 'Х':
		return 'X'
	case 'У', 'Ү':
		return 'Y'
	case 'З', 'Ӡ':
		return '3'
	// Cyrillic small letters (and the capital soft sign, read as b).
	case 'а':
		return 'a'
	case 'Ь':
		return 'b'
	case 'с':
		return 'c'
	case 'ԁ':
		return 'd'
	case 'е', 'ҽ':
		return 'e'
	case 'һ':
		return 'h'
	case 'і', 'ӏ':
		return 'i'
	case 'ј':
		return 'j'
	case 'о':
		return 'o'
	case 'р':
		return 'p'
	case 'ԛ':
		return 'q'
	case 'г':
		return 'r'
	case 'ѕ':
		return 's'
	case 'ѵ':
		return 'v'
	case 'ѡ', 'ԝ':
		return 'w'
	case 'х':
		return 'x'
	case 'у', 'ү':
		return 'y'
	case 'б':
		return '6'
	// Greek capitals and symbols.
	case 'Α':
		return 'A'
	case 'Β':
		return 'B'
	case 'Ϲ':
		return 'C'
	case 'Ε':
		return 'E'
	case 'Ϝ':
		return 'F'
	case 'Η':
		return 'H'
	case 'Ι':
		return 'I'
	case 'Ϳ':
		return 'J'
	case 'Κ':
		return 'K'
	case 'Μ', 'Ϻ':
		return 'M'
	case 'Ν':
		return 'N'
	case 'Ο':
		return 'O'
	case 'Ρ':
		return 'P'
	case 'Τ':
		return 'T'
	case 'Χ':
		return 'X'
	case 'Υ', 'ϒ':
		return 'Y'
	case 'Ζ':
		return 'Z'
	// Greek small letters and symbols.
	case 'α':
		return 'a'
	case 'ϲ':
		return 'c'
	case 'ε':
		return 'e'
	case 'ι':
		return 'i'
	case 'ϳ':
		return 'j'
	case 'κ':
		return 'k'
	case 'ο', 'σ':
		return 'o'
	case 'ρ', 'ϱ':
		return 'p'
	case 'τ':
		return 't'
	case 'υ':
		return 'u'
	case 'ν':
		return 'v'
	case 'χ':
		return 'x'
	case 'γ':
		return 'y'
	// Armenian.
	case 'Օ':
		return 'O'
	case 'Տ':
		return 'S'
	case 'Ս':
		return 'U'
	case 'ք':
		return 'f'
	case 'ց':
		return 'g'
	case 'հ':
		return 'h'
	case 'ո', 'ռ':
		return 'n'
	case 'օ':
		return 'o'
	case 'գ', 'զ':
		return 'q'
	case 'ս':
		return 'u'
	case 'ա':
		return 'w'
	}
	return r
}
