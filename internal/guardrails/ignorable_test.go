package guardrails

import (
	"strings"
	"testing"
	"unicode"
)

// TestIgnorableIsTheDerivedProperty: the ranges of ignorable are Unicode's derived
// Default_Ignorable_Code_Point, computed here from its definition over the tables Go has:
// Other_Default_Ignorable_Code_Point, format characters and variation selectors, less white
// space, U+FFF9..U+FFFB, U+13430..U+1343F and the prepended concatenation marks.
func TestIgnorableIsTheDerivedProperty(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := (unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) ||
			unicode.Is(unicode.Cf, r)) && !unicode.Is(unicode.White_Space, r) && !(r >= 0xFFF9 && r <= 0xFFFB) &&
			!(r >= 0x13430 && r <= 0x1343F) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)
		if ignorable(r) != want {
			t.Errorf("U+%04X: ignorable %v, the derived property %v", r, ignorable(r), want)
		}
	}
}

// TestStripIgnorable: default-ignorable characters are removed from a JSON text, raw or
// escaped (a surrogate pair for a tag character), and nothing else is; a text without any is
// not copied.
func TestStripIgnorable(t *testing.T) {
	for in, want := range map[string]string{
		`{"k":"AKIA` + "\u200b" + `IOSF"}`:                          `{"k":"AKIAIOSF"}`,
		`{"k":"a\u00adb\u2060c"}`:                                   `{"k":"abc"}`,
		`{"k":"a\udb40\udc41b","j":"x` + "\U000E0041\ufe0f" + `y"}`: `{"k":"ab","j":"xy"}`,
		`{"k":"a\\u200bb é \n"}`:                                    ``,
		`{"k":"a\\\u200bb"}`:                                        `{"k":"a\\b"}`,
		`{"k":"plain ascii","n":[1,2]}`:                             ``,
		`{"k":"日本語 \ud83d\ude00"}`:                                  ``,
	} {
		got, ok := stripIgnorable([]byte(in))
		if string(got) != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	// Around the word-at-a-time skip: an ignorable character, raw or escaped, at every offset
	// of texts of up to 40 bytes, and a non-ignorable one, which changes nothing.
	for n := 0; n <= 40; n++ {
		for at := 0; at <= n; at++ {
			pad := strings.Repeat("a", n)
			for _, c := range []string{`\u200b`, "\u200b", "\U000E0041"} {
				in := `{"k":"` + pad[:at] + c + pad[at:] + `"}`
				if got, ok := stripIgnorable([]byte(in)); !ok || string(got) != `{"k":"`+pad+`"}` {
					t.Fatalf("%q: %q %v", in, got, ok)
				}
			}
			in := `{"k":"` + pad[:at] + `é\n` + pad[at:] + `"}`
			if got, ok := stripIgnorable([]byte(in)); ok {
				t.Fatalf("%q: %q", in, got)
			}
		}
	}
	clean := []byte(`{"k":"日本語 text with no ignorable character in it at all"}`)
	if n := testing.AllocsPerRun(100, func() { stripIgnorable(clean) }); n != 0 {
		t.Errorf("a text without any: %v allocations", n)
	}
}
