package useroauth

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mcp-gateway/gateway/internal/webpage"
)

//go:embed templates/connect.html
var templateFiles embed.FS

var pageTemplate = webpage.Templates("connect.html", templateFiles, "templates/connect.html")

// pageWriter writes the connect pages' answers: a page, or a refusal counted and logged.
type pageWriter struct {
	log    *slog.Logger
	obs    Observer
	signIn *webpage.SignIn
}

// render writes a page (webpage.Render).
func (pw pageWriter) render(w http.ResponseWriter, status int, p pageData) {
	p.Style = template.CSS(webpage.Style)
	webpage.Render(w, pw.log, pageTemplate, status, p)
}

// refuse answers with a refusal page; backend, when known, counts it as a failed consent.
func (pw pageWriter) refuse(w http.ResponseWriter, r *http.Request, backend string, status int, reason, msg string) {
	if backend != "" {
		pw.obs.Consent(backend, ConsentFailed, reason)
	}
	if reason != FailBadRequest {
		pw.log.LogAttrs(r.Context(), slog.LevelWarn, "useroauth: refused", slog.String("upstream", backend), slog.String("reason", reason))
	}
	pw.render(w, status, pageData{Kind: "refused", Title: "Not possible", Message: msg})
}

// authServerDown answers when the backend's authorization server (or its metadata) cannot be
// used now: 503, retryable, nothing stored.
// err, when it carries a cooldown (RetryError), says when to try again.
func (pw pageWriter) authServerDown(w http.ResponseWriter, r *http.Request, backend string, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(seconds(RetryAfter(err, 5*time.Second))))
	pw.refuse(w, r, backend, http.StatusServiceUnavailable, FailAuthServer,
		"The authorization server of "+backend+" cannot be used now. Nothing was stored. Try again in a moment.")
}

// storeDown answers when the shared store cannot answer: 503, retryable, nothing stored.
func (pw pageWriter) storeDown(w http.ResponseWriter, r *http.Request, backend string) {
	w.Header().Set("Retry-After", "1")
	pw.refuse(w, r, backend, http.StatusServiceUnavailable, FailStore, "The gateway cannot keep tokens now. Nothing was stored. Try again in a moment.")
}

// issuerDown answers a sign-in that cannot reach the gateway's own identity provider.
func (pw pageWriter) issuerDown(w http.ResponseWriter, r *http.Request, err error) {
	retry := 5 * time.Second
	var ue *webpage.UnreachableError
	if errors.As(err, &ue) {
		retry = ue.RetryAfter
	}
	secs := seconds(retry)
	pw.log.LogAttrs(r.Context(), slog.LevelWarn, "useroauth: sign-in unavailable", slog.String("error", err.Error()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	pw.render(w, http.StatusServiceUnavailable, pageData{Kind: "refused", Title: "Not possible",
		Message: fmt.Sprintf("The identity provider (%s) cannot be reached, so you cannot sign in now. Try again in %d seconds.",
			pw.signIn.Issuer(), secs)})
}

// seconds is d in whole seconds for a Retry-After header: rounded up, at least one.
func seconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}
