package webpage

import (
	"bytes"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
)

//go:embed templates/style.css templates/partials.html
var files embed.FS

// Style is the pages' only style sheet, inlined and allowed by its hash in the CSP.
var Style = mustRead("templates/style.css")

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("webpage: embedded file missing: " + name)
	}
	return string(b)
}

// Templates parses a page's template from fsys (its files named by patterns) together with the
// shared partials: "head" opens a page (its dot has Title and Style), "who" says who is signed
// in (its dot has Name, Subject and Issuer; nothing when nil), and "text", "name" and "runs"
// render a Text, a Name and its runs with what is hidden made visible. Every page states who is
// signed in the same way. It panics on a template that does not parse, at start-up.
func Templates(name string, fsys embed.FS, patterns ...string) *template.Template {
	t := template.Must(template.New(name).ParseFS(fsys, patterns...))
	return template.Must(t.ParseFS(files, "templates/partials.html"))
}

// Render writes a page: the template is executed into a buffer first, so a failure cannot leave
// half a page.
func Render(w http.ResponseWriter, log *slog.Logger, t *template.Template, status int, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		log.Error("rendering a page", "page", t.Name(), "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
