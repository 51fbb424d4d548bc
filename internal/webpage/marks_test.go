package webpage

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestMarksShowNothingHidden: what the pages say about a name or a word that could pass for
// another (its compatibility form, the word quoted, the form it reads as) is held to the rule
// the rest of the page is: every invisible or direction-changing character in it is shown by
// its code point, never written into the page as it is. Each name here has a full-width
// letter, so the page says what it reads as, and a hidden character that the compatibility
// form keeps (a right-to-left override, which would reverse the text after it, a zero-width
// space, a Hangul filler, a variation selector, a Khmer inherent vowel, a tag character); each
// value word mixes scripts around a hidden character a word may hold.
func TestMarksShowNothingHidden(t *testing.T) {
	t.Parallel()
	hidden := []rune{0x202E, 0x200B, 0x3164, 0xFE0F, 0x17B4, 0xE0041, 0x2066}
	raw := func(s string) []rune {
		var out []rune
		for _, r := range s {
			if _, h := invisibleName(r); h {
				out = append(out, r)
			}
		}
		return out
	}
	tpl := Templates("page.html", testPages, "testdata/page.html")
	for _, h := range hidden {
		name := "\uff46iles" + string(h) + "txt.exe"
		n := NameOf(name)
		if !n.Flagged() {
			t.Fatalf("%q: not flagged; the test needs a name the page marks", name)
		}
		rec := httptest.NewRecorder()
		Render(rec, slog.New(slog.DiscardHandler), tpl, http.StatusOK, struct {
			Title string
			Style string
			User  *User
		}{Title: "t", User: &User{Name: n, Subject: NameOf("s"), Issuer: NameOf("i")}})
		if got := raw(rec.Body.String()); len(got) > 0 {
			t.Errorf("U+%04X: the page shows %q raw in the name's mark", h, got)
		}
		if got := raw(n.String()); len(got) > 0 {
			t.Errorf("U+%04X: the name in a sentence shows %q raw: %q", h, got, n.String())
		}
	}
	for _, h := range []rune{0x3164, 0xFE0F, 0x17B4, 0x034F, 0x115F} {
		word := "p\u0430y" + string(h) + "pal"
		why := LookAlikeWord("send to " + word)
		if why == "" {
			t.Fatalf("%q: not marked; the test needs a word the page marks", word)
		}
		if got := raw(why); len(got) > 0 {
			t.Errorf("U+%04X: the word's mark %q shows %q raw", h, why, got)
		}
	}
	if why := LookAlikeWord("cafe\u0301\ufe0f"); why == "" || len(raw(why)) > 0 {
		t.Errorf("a decomposed word with a variation selector: mark %q, want one with nothing hidden", why)
	}
}
