package pins

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
)

// InvisibleKind names why a code point is a finding.
type InvisibleKind string

// The kinds of invisible code point Scan reports. Whether a code point is a finding is decided
// by Unicode properties (classifyRune); the kind only names which property made it one.
const (
	// InvisibleControl: control characters (general category Cc: C0, DEL, C1), which move a
	// terminal's cursor, erase or recolour text (ANSI escapes), or render as nothing; tab and
	// line feed are ordinary text, and so is a carriage return before a line feed.
	InvisibleControl InvisibleKind = "control"
	// InvisibleSeparator: the line and paragraph separators U+2028 and U+2029 (Zl, Zp), which
	// break lines where a reviewer's tools may not.
	InvisibleSeparator InvisibleKind = "separator"
	// InvisibleZeroWidth: the zero-width joiners (Join_Control), zero-width space (U+200B), word
	// joiner and invisible operators (U+2060–U+2064) and zero-width no-break space (U+FEFF).
	InvisibleZeroWidth InvisibleKind = "zero-width"
	// InvisibleBidi: bidirectional controls (Bidi_Control: embeddings, overrides, isolates and
	// marks), which reorder what a reviewer sees ("Trojan Source", CVE-2021-42574).
	InvisibleBidi InvisibleKind = "bidi"
	// InvisibleTag: Unicode tag characters (U+E0000–U+E007F), which render as nothing yet
	// spell out ASCII text that language models read ("ASCII smuggling").
	InvisibleTag InvisibleKind = "tag"
	// InvisibleVariationSelector: variation selectors (Variation_Selector), used to hide bytes,
	// other than one emoji or text presentation selector after a symbol or digit.
	InvisibleVariationSelector InvisibleKind = "variation-selector"
	// InvisibleBlank: characters that are letters or symbols to Unicode but render as blank
	// space (blankRendering): the braille blank and the Hangul fillers.
	InvisibleBlank InvisibleKind = "blank"
	// InvisibleFormat: any other format character (Cf) or default-ignorable code point (soft
	// hyphen, Mongolian vowel separator, interlinear annotation marks, …): invisible in most
	// renderings, visible to the model.
	InvisibleFormat InvisibleKind = "format"
	// InvisibleNoncharacter: Unicode noncharacters (Noncharacter_Code_Point: U+FDD0–U+FDEF and
	// the last two code points of every plane), which I-JSON (RFC 7493 §2.1) excludes and no
	// text needs.
	InvisibleNoncharacter InvisibleKind = "noncharacter"
)

// blankRendering are code points whose Unicode properties say "visible" (a symbol or a letter)
// but which fonts draw as empty space, so text built from them looks blank to a reviewer while
// a model reads it: named one by one because no Unicode property groups them. The Hangul
// fillers are also default-ignorable; listing them here gives them their own kind.
var blankRendering = map[rune]bool{
	0x2800: true, // BRAILLE PATTERN BLANK (So)
	0x3164: true, // HANGUL FILLER (Lo)
	0xFFA0: true, // HALFWIDTH HANGUL FILLER (Lo)
	0x115F: true, // HANGUL CHOSEONG FILLER (Lo)
	0x1160: true, // HANGUL JUNGSEONG FILLER (Lo)
}

// Finding is one invisible code point in a definition.
type Finding struct {
	// Path is the RFC 6901 JSON pointer of the string holding it (a member name's finding
	// points at the member).
	Path string `json:"path"`
	// InName is true when the code point is in a member name rather than a string value.
	InName bool `json:"inName,omitempty"`
	// CodePoint is the code point as "U+XXXX".
	CodePoint string `json:"codePoint"`
	// Count is the number of consecutive code points of the same kind starting at CodePoint.
	Count int           `json:"count"`
	Kind  InvisibleKind `json:"kind"`
	// Excerpt is at most excerptRunes code points either side of the run (and at most
	// excerptRunes of the run), every non-printable or invisible one escaped as \u{…}: enough
	// to locate it, not a copy of the text.
	Excerpt string `json:"excerpt"`
}

const (
	excerptRunes = 8
	// MaxFindings bounds what Scan returns for one definition; a definition with more
	// invisible code points than this is reported with the first MaxFindings.
	MaxFindings = 32
)

// Scan reports every run of invisible or bidirectional code points in v (the package's value model),
// in member names and string values, in a deterministic order (members by name), up to
// MaxFindings.
func Scan(v any) []Finding {
	if allASCII(v, 0) {
		return nil // the common case, checked without sorting member names
	}
	var out []Finding
	scan(v, "", &out)
	return out
}

func scan(v any, path string, out *[]Finding) {
	if len(*out) >= MaxFindings {
		return
	}
	switch v := v.(type) {
	case string:
		scanString(v, path, false, out)
	case []any:
		for i, e := range v {
			scan(e, path+"/"+strconv.Itoa(i), out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "/" + escapePointer(k)
			scanString(k, p, true, out)
			scan(v[k], p, out)
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func scanString(s, path string, inName bool, out *[]Finding) {
	if plainASCII(s) {
		return // the common case: printable ASCII and line breaks
	}
	runes := []rune(s)
	at := func(i int) (InvisibleKind, bool) {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		return classifyRune(runes[i], prev, next)
	}
	for i := 0; i < len(runes); {
		if len(*out) >= MaxFindings {
			return
		}
		k, bad := at(i)
		if !bad {
			i++
			continue
		}
		// One finding per run of the same kind: tag-smuggled text is one run, not one
		// finding per hidden letter.
		j := i + 1
		for j < len(runes) {
			if k2, bad2 := at(j); !bad2 || k2 != k {
				break
			}
			j++
		}
		shown := min(j, i+excerptRunes)
		excerpt := escapeExcerpt(runes[max(0, i-excerptRunes):shown])
		if shown < j {
			excerpt += fmt.Sprintf("…(%d more)", j-shown)
		}
		excerpt += escapeExcerpt(runes[j:min(len(runes), j+excerptRunes)])
		*out = append(*out, Finding{
			Path: path, InName: inName, CodePoint: codePoint(runes[i]), Count: j - i, Kind: k,
			Excerpt: excerpt,
		})
		i = j
	}
}

// RightToLeft reports whether r is laid out right to left, or moves what is beside it: a strong
// right-to-left character or an Arabic number (bidi classes R, AL and AN). It is the one
// definition the gateway's confirmations use: the approval page (internal/webpage) and the
// form confirmation's text (mrtr) show text holding such a character a second time, in the
// order sent.
func RightToLeft(r rune) bool {
	p, _ := bidi.LookupRune(r)
	switch p.Class() {
	case bidi.R, bidi.AL, bidi.AN:
		return true
	}
	return false
}

// ClassifyRune says whether r is an invisible code point and of which kind, by its Unicode
// properties; prev and next are its neighbours (-1 at the ends), as for classifyRune. It is the
// one definition of "invisible" the gateway uses: pinning judges definitions with it, and the
// content guardrails (internal/guardrails) judge tool results with it.
func ClassifyRune(r, prev, next rune) (InvisibleKind, bool) { return classifyRune(r, prev, next) }

// classifyRune says whether r is an invisible code point and of which kind, by its Unicode
// properties. prev and next are its neighbours (-1 at the ends); they decide only whether a
// variation selector is ordinary emoji presentation and whether a carriage return ends a line.
func classifyRune(r, prev, next rune) (InvisibleKind, bool) {
	switch {
	case r == '\t' || r == '\n' || (r == '\r' && next == '\n'):
		return "", false
	case r >= 0x20 && r < 0x7F:
		return "", false
	case unicode.Is(unicode.Cc, r):
		return InvisibleControl, true
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return InvisibleSeparator, true
	case unicode.Is(unicode.Noncharacter_Code_Point, r):
		return InvisibleNoncharacter, true
	case r >= 0xE0000 && r <= 0xE007F: // the Tags block; Go has no table of blocks
		return InvisibleTag, true
	case unicode.Is(unicode.Variation_Selector, r):
		// One U+FE0E/U+FE0F after a symbol or digit is how emoji are written ("❤️", "1️⃣");
		// anything else (a run, other selectors, after a letter) is a carrier for hidden data.
		ordinary := (r == 0xFE0E || r == 0xFE0F) && prev >= 0 && !isVariationSelector(prev) &&
			!isVariationSelector(next) && (unicode.In(prev, unicode.S, unicode.Nd) || prev == '#' || prev == '*')
		if ordinary {
			return "", false
		}
		return InvisibleVariationSelector, true
	case unicode.Is(unicode.Bidi_Control, r):
		return InvisibleBidi, true
	case unicode.Is(unicode.Join_Control, r), r == 0x200B, r >= 0x2060 && r <= 0x2064, r == 0xFEFF:
		return InvisibleZeroWidth, true
	case blankRendering[r]:
		return InvisibleBlank, true
	case unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		// Cf, but rendered visibly (Arabic number signs and the like).
		return "", false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
		return InvisibleFormat, true
	}
	return "", false
}

func isVariationSelector(r rune) bool {
	return r >= 0 && unicode.Is(unicode.Variation_Selector, r)
}

// escapeExcerpt renders runes with every invisible or non-printable code point as \u{XXXX}.
func escapeExcerpt(runes []rune) string {
	var sb strings.Builder
	for i, r := range runes {
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		if _, bad := classifyRune(r, prev, next); bad || !unicode.IsPrint(r) || r == utf8.RuneError || r == '\\' {
			if r == '\\' {
				sb.WriteString(`\\`)
				continue
			}
			fmt.Fprintf(&sb, `\u{%04X}`, r)
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// plainASCII reports whether s holds only printable ASCII, tabs, line feeds and carriage
// returns that end a line: nothing classifyRune reports.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7F || c == '\t' || c == '\n' || (c == '\r' && i+1 < len(s) && s[i+1] == '\n') {
			continue
		}
		return false
	}
	return true
}

// allASCII reports whether every string and member name in v is plainASCII, in any member
// order.
func allASCII(v any, depth int) bool {
	if depth > maxDepth {
		return false // let scan decide
	}
	switch v := v.(type) {
	case string:
		return plainASCII(v)
	case []any:
		for _, e := range v {
			if !allASCII(e, depth+1) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if !plainASCII(k) || !allASCII(e, depth+1) {
				return false
			}
		}
	}
	return true
}

// codePoint names r as "U+XXXX".
func codePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }
