package guardrails

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/internal/testsupport/racetest"
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

// TestSecondReadingWherever: one default-ignorable character anywhere in a message of the
// typical result's size gets the message its second reading: in the text (raw, escaped, or a
// surrogate pair's escapes), at every offset around where the pre-check's blocks of words end,
// in a member name, and in values the walker passes over (an opaque requestState, the
// gateway's own _meta member). In the text, the credential it splits is found.
func TestSecondReadingWherever(t *testing.T) {
	_, typical := benchTexts()
	text := strings.Repeat("a", 4000)
	msg := func(text, key, state, own string) string {
		return `{"content":[{"type":"text","text":"` + text + `"}],"` + key + `":1,"requestState":"` + state +
			`","_meta":{"` + MetaKey + `":{"x":"` + own + `"}}}`
	}
	if _, ok := stripIgnorable([]byte(msg(text, "k", "s", "o"))); ok {
		t.Fatal("a message without any is read again")
	}
	if _, ok := stripIgnorable(typical); ok {
		t.Fatal("the typical result is read again")
	}
	var cases []string
	for _, c := range []string{"\u200b", `\u200b`, `\u00ad`, `\udb40\udc41`, "\U000E0041", "\ufeff"} {
		for _, at := range []int{0, 1, 7, 8, 31, 32, 33, 63, 64, 100, 3967, 3999, 4000} {
			cases = append(cases, msg(text[:at]+c+text[at:], "k", "s", "o"))
		}
		cases = append(cases, msg(text, "k"+c, "s", "o"), msg(text, "k", "s"+c, "o"), msg(text, "k", "s", "o"+c))
	}
	for _, m := range cases {
		if _, ok := stripIgnorable([]byte(m)); !ok {
			t.Errorf("not read again: %.80s…", strings.ReplaceAll(m, text, "a…"))
		}
	}
	r := testEngine(t, everything("redact")).Rule(KindTool, "up", "tool")
	for _, c := range []string{"\u200b", `\u200b`, `\u2060`} {
		for _, at := range []int{0, 31, 32, 3999} {
			m := msg(text[:at]+" AKIA"+c+"IOSFODNN7EXAMPLE "+text[at:], "k", "s", "o")
			if rep := r.ScanResult([]byte(m)); rep.Counts[DetAWSAccessKey] == 0 || !rep.Blocked() {
				t.Errorf("%q at %d: the disguised key is not refused: %+v", c, at, rep.Findings)
			}
		}
	}
	// Where the rule logs, what the second reading finds is logged (counted), and the message
	// goes on as sent (docs/guardrails.md).
	logged := testEngine(t, everything("log")).Rule(KindTool, "up", "tool")
	m := msg(" AKIA\u2060IOSFODNN7EXAMPLE "+text, "k", "s", "o")
	if rep := logged.ScanResult([]byte(m)); rep.Counts[DetAWSAccessKey] != 1 || rep.Blocked() || rep.Redacted() || rep.Action != Log {
		t.Errorf("a disguised key under log: counted %d, blocked %v, redacted %v, action %v",
			rep.Counts[DetAWSAccessKey], rep.Blocked(), rep.Redacted(), rep.Action)
	}
}

// mayHoldIgnorableRef is mayHoldIgnorable a byte at a time: where the first byte of 0x7F or
// above is, or the first run of backslashes that ends in a \u, \b or \f, whichever comes first.
func mayHoldIgnorableRef(raw []byte) int {
	for i, c := range raw {
		if c >= 0x7F {
			return i
		}
		if c != '\\' {
			continue
		}
		j := i
		for j < len(raw) && raw[j] == '\\' {
			j++
		}
		if j < len(raw) && (raw[j] == 'u' || raw[j] == 'b' || raw[j] == 'f') {
			return i
		}
	}
	return -1
}

// TestMayHoldIgnorableExact checks the pre-check's blocks against a byte loop at every length
// up to past three blocks and with a high byte, a \u escape (after 0 to 2 more backslashes) or
// both at every offset: the second reading must start where the first byte that could begin an
// ignorable character is, never after it.
func TestMayHoldIgnorableExact(t *testing.T) {
	racetest.SkipPureComputation(t)
	marks := []string{"\xc2", "\xff", "\x7f", "\x7e", `\u`, `\\u`, `\\\u`, `\"`, `\\`, `\b`, `\\f`, `\n`}
	check := func(raw []byte) {
		t.Helper()
		if got, want := mayHoldIgnorable(raw), mayHoldIgnorableRef(raw); got != want {
			t.Fatalf("%q: %d, want %d", raw, got, want)
		}
	}
	for n := 0; n <= 100; n++ {
		base := []byte(strings.Repeat("a", n))
		check(base)
		for at := 0; at <= n; at++ {
			for _, m := range marks {
				one := append(append(append([]byte{}, base[:at]...), m...), base[at:]...)
				check(one)
				for at2 := at; at2 <= len(one); at2 += 3 {
					for _, m2 := range marks {
						check(append(append(append([]byte{}, one[:at2]...), m2...), one[at2:]...))
					}
				}
			}
		}
	}
}

// stripIgnorableRef is stripIgnorable a byte at a time, as it was before it passed over the
// printable ASCII and the escapes other than \u, \b and \f between the places that may begin
// an ignorable or hidden control character.
func stripIgnorableRef(raw []byte) ([]byte, bool) {
	var out []byte
	last := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < 0x7F && c != '\\' {
			i++
			continue
		}
		r, n := rune(0), 0
		if c == '\\' {
			r, n = jsonrpc.EscapedRune(raw, i)
			if n == 2 && i+1 < len(raw) {
				r = map[byte]rune{'b': '\b', 'f': '\f'}[raw[i+1]]
				if r == 0 {
					r = -1
				}
			}
		} else {
			r, n = utf8.DecodeRune(raw[i:])
		}
		if n > 0 && (ignorable(r) || utf16.IsSurrogate(r) || hiddenControl(r)) {
			out = append(out, raw[last:i]...)
			last = i + n
		}
		i += max(n, 1)
	}
	if last == 0 {
		return nil, false
	}
	return append(out, raw[last:]...), true
}

// stripIgnorableMarks are what stripIgnorable's skips must stop at or pass over: ignorable
// characters raw and escaped (one after an escaped backslash, one that is no escape), a lone
// surrogate, non-ignorable non-ASCII, invalid UTF-8 and escapes that decode to ASCII.
var stripIgnorableMarks = []string{"\u200b", `\u200b`, `\\u200b`, `\\\u00ad`, `\ud800`, `\ud83d\ude00`,
	"é", "\U000E0041", "\xff", `\n`, `\"`, `\\`, `\u0041`, `\u0000`, `\u001b`, "\x7f", "\u0085", `\b`, `\\f`, `\t`}

// TestStripIgnorableMatchesReference holds stripIgnorable to the byte loop with one or two marks
// at every offset of strings up to past two of its 32-byte blocks.
func TestStripIgnorableMatchesReference(t *testing.T) {
	racetest.SkipPureComputation(t)
	check := func(raw []byte) {
		t.Helper()
		got, ok := stripIgnorable(raw)
		want, wok := stripIgnorableRef(raw)
		if ok != wok || !bytes.Equal(got, want) {
			t.Fatalf("%q: %q %v, want %q %v", raw, got, ok, want, wok)
		}
	}
	for n := 0; n <= 70; n++ {
		base := []byte(`{"k":"` + strings.Repeat("a", n) + `"}`)
		check(base)
		for at := 6; at <= 6+n; at++ {
			for _, m := range stripIgnorableMarks {
				one := append(append(append([]byte{}, base[:at]...), m...), base[at:]...)
				check(one)
				for at2 := at; at2 <= len(one)-2; at2 += 5 {
					for _, m2 := range stripIgnorableMarks {
						check(append(append(append([]byte{}, one[:at2]...), m2...), one[at2:]...))
					}
				}
			}
		}
	}
}

// FuzzStripIgnorableMatchesReference: any JSON string's text read as stripIgnorable and the
// byte loop read it.
func FuzzStripIgnorableMatchesReference(f *testing.F) {
	for _, m := range stripIgnorableMarks {
		f.Add("ab" + m + strings.Repeat("x", 40) + m)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.Marshal(s)
		if err != nil {
			return
		}
		// Escapes as a client may write them: every other non-ASCII rune as \u.
		for _, v := range [][]byte{raw, []byte(strconv.QuoteToASCII(s))} {
			if !json.Valid(v) {
				continue
			}
			got, ok := stripIgnorable(v)
			want, wok := stripIgnorableRef(v)
			if ok != wok || !bytes.Equal(got, want) {
				t.Fatalf("%q: %q %v, want %q %v", v, got, ok, want, wok)
			}
		}
	})
}
