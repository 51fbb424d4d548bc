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
