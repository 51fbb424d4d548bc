package pins

import (
	"strings"
	"testing"
)

func TestScanFindsEachKind(t *testing.T) {
	cases := []struct {
		name string
		s    string
		cp   string
		kind InvisibleKind
	}{
		{"zero-width space", "read\u200bfile", "U+200B", InvisibleZeroWidth},
		{"zero-width joiner", "a\u200db", "U+200D", InvisibleZeroWidth},
		{"RLM", "a\u200fb", "U+200F", InvisibleBidi},
		{"word joiner", "a\u2060b", "U+2060", InvisibleZeroWidth},
		{"invisible plus", "a\u2064b", "U+2064", InvisibleZeroWidth},
		{"BOM", "\ufeffhello", "U+FEFF", InvisibleZeroWidth},
		{"RLO", "abc\u202eevil", "U+202E", InvisibleBidi},
		{"LRE", "\u202aabc", "U+202A", InvisibleBidi},
		{"RLI", "x\u2067y", "U+2067", InvisibleBidi},
		{"PDI", "x\u2069y", "U+2069", InvisibleBidi},
		{"ALM", "x\u061cy", "U+061C", InvisibleBidi},
		{"tag a", "ok\U000E0061", "U+E0061", InvisibleTag},
		{"tag begin", "ok\U000E0001", "U+E0001", InvisibleTag},
		{"tag cancel", "ok\U000E007F", "U+E007F", InvisibleTag},
		{"VS17", "a\U000E0100", "U+E0100", InvisibleVariationSelector},
		{"VS1 after letter", "a\ufe00", "U+FE00", InvisibleVariationSelector},
		{"VS16 after letter", "a\ufe0f", "U+FE0F", InvisibleVariationSelector},
		{"soft hyphen", "ig\u00adnore", "U+00AD", InvisibleFormat},
		{"Mongolian vowel separator", "a\u180eb", "U+180E", InvisibleFormat},
		{"Hangul filler", "a\u3164b", "U+3164", InvisibleBlank},
		{"line separator", "line\u2028sep", "U+2028", InvisibleSeparator},
		{"ANSI escape", "a\x1b[2Jb", "U+001B", InvisibleControl},
		{"braille blank", "a\u2800b", "U+2800", InvisibleBlank},
		{"interlinear annotation", "a\ufff9b", "U+FFF9", InvisibleFormat},
		{"combining grapheme joiner", "a\u034fb", "U+034F", InvisibleFormat},
		{"noncharacter FFFF", "a\uffffb", "U+FFFF", InvisibleNoncharacter},
		{"noncharacter FDD0", "a\ufdd0b", "U+FDD0", InvisibleNoncharacter},
		{"plane 1 noncharacter", "a\U0001fffeb", "U+1FFFE", InvisibleNoncharacter},
	}
	for _, c := range cases {
		got := Scan(map[string]any{"description": c.s})
		if len(got) != 1 {
			t.Errorf("%s: %d findings %+v", c.name, len(got), got)
			continue
		}
		f := got[0]
		if f.CodePoint != c.cp || f.Kind != c.kind || f.Path != "/description" || f.InName {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
}

func TestScanLeavesOrdinaryText(t *testing.T) {
	for _, s := range []string{"plain ASCII\n\ttext", "Grüße, 日本語, עברית, العربية", "❤️ heart", "1️⃣ keycap", "emoji 😀", "\u0600\u0661 Arabic number sign", "line\r\nbreak"} {
		if got := Scan(s); len(got) != 0 {
			t.Errorf("%q: %+v", s, got)
		}
	}
}

func TestScanPathsAndExcerpt(t *testing.T) {
	v := map[string]any{
		"inputSchema": map[string]any{"properties": map[string]any{
			"a/b~c\u200b": map[string]any{"enum": []any{"x", "y\u202ez"}},
		}},
	}
	got := Scan(v)
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if got[0].Path != "/inputSchema/properties/a~1b~0c\u200b" || !got[0].InName {
		t.Errorf("name finding %+v", got[0])
	}
	if got[1].Path != "/inputSchema/properties/a~1b~0c\u200b/enum/1" || got[1].InName {
		t.Errorf("value finding %+v", got[1])
	}
	if got[1].Excerpt != `y\u{202E}z` {
		t.Errorf("excerpt %q", got[1].Excerpt)
	}
	long := strings.Repeat("secret-looking text ", 20) + "\u200b" + strings.Repeat("more text ", 20)
	f := Scan(long)
	if len(f) != 1 || len([]rune(f[0].Excerpt)) > 2*excerptRunes+len(`\u{200B}`) {
		t.Errorf("excerpt too long: %+v", f)
	}
	run := Scan("x" + strings.Repeat("\U000E0041", 1000) + "y")
	if len(run) != 1 || run[0].Count != 1000 || run[0].Kind != InvisibleTag || !strings.Contains(run[0].Excerpt, "(992 more)y") {
		t.Errorf("a run of tag characters: %+v", run)
	}
	many := Scan(strings.Repeat("a\u200b", 1000))
	if len(many) != MaxFindings {
		t.Errorf("%d findings, want the cap %d", len(many), MaxFindings)
	}
	mixed := Scan("a\u200b\u202e\u202eb")
	if len(mixed) != 2 || mixed[0].Count != 1 || mixed[1].Count != 2 || mixed[1].Kind != InvisibleBidi {
		t.Errorf("runs split by kind: %+v", mixed)
	}
}
