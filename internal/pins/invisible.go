package pins

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// InvisibleKind names why a code point is a finding.
type InvisibleKind string

// The kinds of invisible code point Scan reports.
const (
	// InvisibleZeroWidth: zero-width space, joiners and marks (U+200B–U+200F), word joiner and
	// invisible operators (U+2060–U+2064), byte order mark / zero-width no-break space (U+FEFF).
	InvisibleZeroWidth InvisibleKind = "zero-width"
	// InvisibleBidi: bidirectional embeddings, overrides and isolates (U+202A–U+202E,
	// U+2066–U+2069) and the Arabic letter mark (U+061C), which reorder what a reviewer sees
	// ("Trojan Source", CVE-2021-42574).
	InvisibleBidi InvisibleKind = "bidi"
	// InvisibleTag: Unicode tag characters (U+E0000–U+E007F), which render as nothing yet
	// spell out ASCII text that language models read ("ASCII smuggling").
	InvisibleTag InvisibleKind = "tag"
	// InvisibleVariationSelector: variation selectors used to hide bytes (U+E0100–U+E01EF, and
	// U+FE00–U+FE0F other than one emoji or text presentation selector after a symbol).
	InvisibleVariationSelector InvisibleKind = "variation-selector"
	// InvisibleFormat: any other format character (general category Cf) or default-ignorable
	// code point (soft hyphen, Hangul fillers, Mongolian vowel separator, interlinear
	// annotation marks, …): invisible in most renderings, visible to the model.
	InvisibleFormat InvisibleKind = "format"
	// InvisibleNoncharacter: Unicode noncharacters (U+FDD0–U+FDEF and the last two code points
	// of every plane), which I-JSON (RFC 7493 §2.1) excludes and no text needs.
	InvisibleNoncharacter InvisibleKind = "noncharacter"
)

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
	if isASCII(s) {
		return // every reported code point is above U+007F
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
			Path: path, InName: inName, CodePoint: fmt.Sprintf("U+%04X", runes[i]), Count: j - i, Kind: k,
			Excerpt: excerpt,
		})
		i = j
	}
}

// classifyRune says whether r is an invisible code point and of which kind. prev and next are
// its neighbours (-1 at the ends); they decide only whether a variation selector is ordinary
// emoji presentation.
func classifyRune(r, prev, next rune) (InvisibleKind, bool) {
	switch {
	case r < 0x80:
		return "", false
	case r >= 0x200B && r <= 0x200F, r >= 0x2060 && r <= 0x2064, r == 0xFEFF:
		return InvisibleZeroWidth, true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x061C:
		return InvisibleBidi, true
	case r >= 0xE0000 && r <= 0xE007F:
		return InvisibleTag, true
	case r >= 0xE0100 && r <= 0xE01EF:
		return InvisibleVariationSelector, true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return InvisibleNoncharacter, true
	case r >= 0xFE00 && r <= 0xFE0F:
		// One U+FE0E/U+FE0F after a symbol or digit is how emoji are written ("❤️", "1️⃣");
		// anything else (a run, other selectors, after a letter) is a carrier for hidden data.
		ordinary := (r == 0xFE0E || r == 0xFE0F) && prev >= 0 && !isVariationSelector(prev) &&
			!isVariationSelector(next) && (unicode.In(prev, unicode.S, unicode.Nd) || prev == '#' || prev == '*')
		if ordinary {
			return "", false
		}
		return InvisibleVariationSelector, true
	case unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		// Cf, but rendered visibly (Arabic number signs and the like).
		return "", false
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r):
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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// allASCII reports whether every string and member name in v is ASCII, in any member order.
func allASCII(v any, depth int) bool {
	if depth > maxDepth {
		return false // let scan decide
	}
	switch v := v.(type) {
	case string:
		return isASCII(v)
	case []any:
		for _, e := range v {
			if !allASCII(e, depth+1) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if !isASCII(k) || !allASCII(e, depth+1) {
				return false
			}
		}
	}
	return true
}
