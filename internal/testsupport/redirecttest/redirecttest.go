// Package redirecttest checks that a request carrying a credential follows no redirect: a
// server stands where the redirects point and counts what reaches it, and the request's error
// must say the redirect was not followed without naming where it pointed.
package redirecttest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-gateway/gateway/internal/egress"
)

// Codes are the redirect statuses such a request must not follow: 307 and 308 would have its
// body sent again, the others its Basic credentials to a matching host. An array by value: no
// test can change the list for another.
func Codes() [5]int {
	return [5]int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusMovedPermanently,
		http.StatusFound, http.StatusSeeOther}
}

// marker is in the query of every Location, so an error quoting it is caught.
const marker = "q7Zr"

// Target is where the redirects point: a server that answers every request with a token
// response and counts it.
type Target struct {
	URL  string
	hits atomic.Int64
}

// NewTarget starts a Target, closed when t ends.
func NewTarget(t *testing.T) *Target {
	t.Helper()
	tg := &Target{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"x","token_type":"Bearer","client_id":"c"}`)
	}))
	t.Cleanup(srv.Close)
	tg.URL = srv.URL
	return tg
}

// Location is a redirect's target at path, with a query that looks secret.
func (tg *Target) Location(path string) string { return tg.URL + path + "?secret-looking=" + marker }

// Unreached fails t if any request reached tg.
func (tg *Target) Unreached(t *testing.T) {
	t.Helper()
	if n := tg.hits.Load(); n != 0 {
		t.Errorf("the redirects' target received %d requests, want none", n)
	}
}

// Refused describes what is wrong with err, a request's error after its endpoint answered
// code pointing at tg, or is empty: err must be egress.ErrRedirected naming code, and name
// neither tg nor the Location's query.
func (tg *Target) Refused(err error, code int) string {
	if !errors.Is(err, egress.ErrRedirected) || !strings.Contains(err.Error(), fmt.Sprint(code)) {
		return fmt.Sprintf("%v; want an error saying the %d redirect is not followed", err, code)
	}
	if strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), tg.URL) {
		return fmt.Sprintf("the error names the redirect's target: %v", err)
	}
	return ""
}
