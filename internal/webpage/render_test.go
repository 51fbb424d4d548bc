package webpage

import (
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

//go:embed testdata/page.html
var testPages embed.FS

// TestSharedPartials: every page opens with the shared "head" and says who is signed in with the
// shared "who", escaped and with hidden characters marked as in the rest of the page, and says
// nothing of a user when there is none.
func TestSharedPartials(t *testing.T) {
	type page struct {
		Title string
		Style template.CSS
		User  *User
	}
	tpl := Templates("page.html", testPages, "testdata/page.html")
	render := func(p page) string {
		rec := httptest.NewRecorder()
		Render(rec, slog.New(slog.DiscardHandler), tpl, http.StatusOK, p)
		return rec.Body.String()
	}
	body := render(page{Title: "Connect <b>", Style: template.CSS(Style),
		User: &User{Name: NameOf("Al<i>ce\u202E"), Subject: NameOf("alice"), Issuer: NameOf("https://issuer.example")}})
	for _, want := range []string{"<!DOCTYPE html>", "<title>Connect &lt;b&gt; · MCP gateway</title>", "<style>" + Style + "</style>",
		`<p class="who">Signed in as Al&lt;i&gt;ce`, `character">U&#43;202E</mark> (alice at https://issuer.example)</p>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "\u202E") || strings.Contains(body, "<i>") {
		t.Errorf("page shows the name raw:\n%s", body)
	}
	if body := render(page{Title: "Signed out"}); strings.Contains(body, "Signed in as") {
		t.Errorf("a page without a user names one:\n%s", body)
	}
}

// TestVisibleDefaultIgnorable: every default-ignorable code point (Other_Default_Ignorable_Code_Point:
// the Khmer inherent vowels U+17B4 and U+17B5, which Unicode classes as combining marks and no
// font draws, the Hangul fillers, U+2065, U+FFF0) is made visible, as pinning judges them
// invisible; ordinary combining marks are not.
func TestVisibleDefaultIgnorable(t *testing.T) {
	for _, r := range []rune{0x17B4, 0x17B5, 0x034F, 0x115F, 0x3164, 0x2065, 0xFFF0, 0xE0002} {
		if v := Visible("a" + string(r) + "b"); v.Hidden != 1 {
			t.Errorf("U+%04X: %d made visible, want 1", r, v.Hidden)
		}
	}
	for _, s := range []string{"é", "e\u0301", "ក្ម", "नमस्ते"} {
		if v := Visible(s); v.Hidden != 0 {
			t.Errorf("%q: %d made visible, want 0", s, v.Hidden)
		}
	}
}
