package useroauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestPagesSecurityHeaders: every answer of the connect pages, whatever it is (the list, a
// link, the connected page, each refusal, a redirect to sign in, a method not allowed), may not
// be framed, cached, sniffed or told to another site, and runs no script; the client metadata
// document, public JSON, may be cached.
func TestPagesSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	alice := f.caller(realop.UserID)
	check := func(what string, h http.Header, cache string) {
		t.Helper()
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"frame-ancestors 'none'", "default-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", what, csp, want)
			}
		}
		if strings.Contains(csp, "script-src") {
			t.Errorf("%s: Content-Security-Policy %q allows scripts", what, csp)
		}
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "same-origin", "Cache-Control": cache} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", what, k, got, want)
			}
		}
	}
	noRedirects := f.browser(t)
	noRedirects.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tt := range []struct{ what, method, path string }{
		{"the list, signed out", http.MethodGet, "/connect/"},
		{"the pages' root", http.MethodGet, "/connect"},
		{"a link, signed out", http.MethodGet, strings.TrimPrefix(f.link(t, alice), f.srv.URL)},
		{"a bad link", http.MethodGet, "/connect/l/junk"},
		{"a bad callback", http.MethodGet, "/connect/callback/" + backendName + "?state=junk&code=junk"},
		{"the old callback", http.MethodGet, "/connect/callback?state=junk"},
		{"nothing here", http.MethodGet, "/connect/nothing"},
		{"a method not allowed", http.MethodDelete, "/connect/"},
		{"a form without origin", http.MethodPost, "/connect/b/" + backendName},
	} {
		req, _ := http.NewRequest(tt.method, f.srv.URL+tt.path, nil)
		resp, err := noRedirects.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		check(tt.what+" ("+resp.Status+")", resp.Header, "no-store")
	}
	// Signed in: the list, the connect page, the connected page.
	b := f.browser(t)
	for _, u := range []string{f.link(t, alice), f.srv.URL + "/connect/"} {
		resp, err := b.c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.Request.URL.Query().Get("authRequestID") != "" {
			b.login(resp.Request.URL, f.idp.Username())
			resp, err = b.c.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
		}
		check(u, resp.Header, "no-store")
	}
	u := held(t, f, b, f.idp.Username(), f.as.Username(), f.link(t, alice))
	resp, err := b.c.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the callback: %s", resp.Status)
	}
	check("the connected page", resp.Header, "no-store")
}
