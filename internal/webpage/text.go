package webpage

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/pins"
)

// foldRunes is the length beyond which a string is shown folded: its beginning in the page and
// the whole value in a <details> element, which works without JavaScript.
const foldRunes = 240

// Text is a string split into runs of plain text and of characters made visible. Short is the
// beginning shown when the string is folded; Full is all of it.
type Text struct {
	Full   []Run
	Short  []Run
	Folded bool
	// Runes is the length in characters; Hidden counts the characters made visible.
	Runes, Hidden int
	// RTL reports a right-to-left letter (Hebrew, Arabic) or an Arabic digit among what is
	// shown: the browser lays such text out by the bidirectional algorithm, which moves the
	// digits and punctuation beside it ("ש 0532 0130" reads "0130 0532 ש"), so the order on
	// screen is not the order of the characters.
	RTL bool
}

// Run is plain text, or (Mark) the visible name of an invisible or direction-changing
// character such as "U+202E".
type Run struct {
	S    string
	Mark bool
}

// Visible splits s into runs, replacing each character a reader could not see, or that
// reorders what follows it, by a marked run naming its code point, and folds long strings.
func Visible(s string) Text {
	t := Text{Runes: utf8.RuneCountInString(s)}
	t.Folded = t.Runes > foldRunes
	var plain strings.Builder
	n := 0
	flush := func() {
		if plain.Len() > 0 {
			t.Full = append(t.Full, Run{S: plain.String()})
			plain.Reset()
		}
	}
	for _, r := range s {
		if n == foldRunes && t.Folded {
			flush()
			t.Short = append([]Run(nil), t.Full...)
		}
		n++
		if name, hidden := invisibleName(r); hidden {
			flush()
			t.Hidden++
			t.Full = append(t.Full, Run{S: name, Mark: true})
			continue
		}
		plain.WriteRune(r)
		if r >= 0x0590 && !t.RTL {
			t.RTL = pins.RightToLeft(r)
		}
	}
	flush()
	return t
}

// shown is s as plain text for what the pages say about it (the form a name or word reads as,
// the word a mark quotes): every character Visible would mark is written as [U+XXXX], so a
// mark hides nothing and reverses nothing the rest of the page shows.
func shown(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { _, h := invisibleName(r); return h }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if name, hidden := invisibleName(r); hidden {
			b.WriteString("[" + name + "]")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// invisibleName reports whether r must be made visible and how it is shown. Newlines and tabs
// stay as they are (the page preserves white space); every other control, format (bidi
// overrides and isolates, zero-width characters, tag characters), line or paragraph separator,
// space other than U+0020, variation selector, filler and other default-ignorable code point
// (the Khmer inherent vowels, which Unicode classes as combining marks) is named.
func invisibleName(r rune) (string, bool) {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return "", false
	case r == utf8.RuneError:
		return "U+FFFD", true
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r),
		unicode.Is(unicode.Zs, r), unicode.Is(unicode.Variation_Selector, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800,
		unicode.Is(unicode.Co, r), unicode.Is(unicode.Cs, r), !unicode.IsPrint(r) && !unicode.IsGraphic(r):
		return fmt.Sprintf("U+%04X", r), true
	}
	return "", false
}
