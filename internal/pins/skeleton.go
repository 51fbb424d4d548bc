package pins

import (
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/mcp-gateway/gateway/internal/resuri"
)

//go:generate go run gen_skeleton.go

// latinSkeleton maps the letters of other scripts that a reader takes for Latin letters or
// digits to those, so that shadowing reads "rеаd_filе" (Cyrillic е and а) as "read_file". The
// letters are mapped in the decomposed form (NFD), so that a look-alike under a diacritic maps
// too and before NFKC turns a symbol such as the lunate sigma ϲ into a letter (ς) that does not
// look like its c, and again after NFKC, which turns mathematical Greek letters into plain
// ones. It is applied only where shadowing compares names and descriptions, never to what is
// forwarded or shown.
//
// The table (confusableLatin, skeleton_table.go) is generated from Unicode's confusables data
// (UTS #39; confusables.txt holds its rows whose prototype is ASCII) by gen_skeleton.go: every
// letter or digit outside ASCII, of any script (Cyrillic, Greek, Armenian, Cherokee, Coptic,
// Lisu, Osage, Warang Citi, Canadian Syllabics, Latin's own small capitals and dotless i, …),
// whose prototype there is a single ASCII letter or digit, or rn (read as m). Case is kept (a
// capital maps to a capital, a small letter to a small one) because names are split at case
// changes before they are case folded. It departs from UTS #39 where that maps to something
// this comparison cannot use:
//   - a capital whose prototype is l (Greek Ι, Cyrillic І and Ӏ) maps to Latin I, which reads
//     as l; names are compared case folded, and shadowing's name comparison then reads i, l and
//     1 as one letter (latinFamilies);
//   - Greek ε κ τ χ map to e k t x: UTS #39 maps them to Latin letters outside ASCII (open e,
//     kra, small capitals) that read as those letters.
//
// Left out: letters read as two Latin letters (Ы bl, Ю IO), the look-alikes of Latin letters
// outside ASCII (Cyrillic в н к т read as small capitals ʙ ʜ ᴋ ᴛ), symbols and punctuation read
// as letters (| as l; a name breaks into words at them), and what NFKC already maps (full-width
// and mathematical letters). Look-alikes within Latin and digits (0 and O, 1 l and I, rn and m,
// vv and w, cl and d) are not mapped here, where case still matters, but by latinFamilies on
// the case-folded words of names.
func latinSkeleton(s string) string {
	if resuri.IsASCII(s) {
		return s
	}
	return strings.Map(confusableLatin, norm.NFKC.String(strings.Map(confusableLatin, norm.NFD.String(s))))
}
