package mcphttp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestAllowedOriginsAsBrowsersSendThem: a listed origin, and the public URL's, is matched as a
// browser sends it in Origin, whatever spelling of it the configuration uses: an explicit
// default port, a trailing slash, capitals, a Unicode host name (sent in punycode), an IPv6
// literal in a long form. Before, each was compared as written, so the page of an origin the
// operator listed, the gateway's own page for a public URL written with ":443", got 403 and no
// CORS. Entries no browser ever sends as an Origin (user information, a query, a fragment, a
// port out of range) are refused by check-config rather than never matching.
func TestAllowedOriginsAsBrowsersSendThem(t *testing.T) {
	be := mcptest.StartServer(t, "be")
	gw := startGateway(t, Config{PublicURL: "https://MCP.example.com:443/mcp", AllowedOrigins: []string{
		"https://App.Example.com:443/", "http://plain.example:80", "https://bücher.example", "https://[0:0::1]:8443",
		"HTTPS://SHOUT.EXAMPLE:0443",
	}}, upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
	for _, origin := range []string{"https://mcp.example.com", "https://app.example.com", "http://plain.example",
		"https://xn--bcher-kva.example", "https://[::1]:8443", "https://shout.example"} {
		r := do(t, "POST", gw.URL, with(modern("tools/list", ""), "Origin", origin), body("tools/list", ""))
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("Origin %s: %d, Access-Control-Allow-Origin %q: %s", origin, r.Status, r.Header.Get("Access-Control-Allow-Origin"), r.Body)
		}
	}
	// The normalisation does not widen the list: another port, scheme or host is still refused.
	for _, origin := range []string{"https://app.example.com:8443", "http://app.example.com", "https://bucher.example", "null"} {
		if r := do(t, "POST", gw.URL, with(modern("tools/list", ""), "Origin", origin), body("tools/list", "")); r.Status != 403 ||
			r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Origin %s: %d %v, want 403 without CORS", origin, r.Status, r.Header)
		}
	}

	bad := []string{"https://user@app.example", "https://app.example?x=1", "https://app.example#top",
		"https://app.example:99999", "https://app.example/path", "null", "app.example"}
	err := Config{AllowedOrigins: bad}.Validate()
	for i := range bad {
		if want := fmt.Sprintf("server.allowedOrigins[%d]", i); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q accepted: %v", bad[i], err)
		}
	}
	if err := (Config{AllowedOrigins: []string{"https://App.Example.com:443/", "https://bücher.example", "chrome-extension://abcdef", "*"}}).Validate(); err != nil {
		t.Errorf("origins a browser sends refused: %v", err)
	}
}

// TestCORSPreflightBounds: the preflight's documented bounds (docs/protocol.md): at most
// maxCORSHeaders request header names, in one header or several, are allowed, one more is
// 403 without CORS; an allowed preflight may be kept Access-Control-Max-Age seconds.
func TestCORSPreflightBounds(t *testing.T) {
	const page = "https://app.example"
	p := newOriginPolicy(Config{AllowedOrigins: []string{page}}, false)
	h := corsPreflight(p, []string{"POST"})
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("x-h%d", i)
		}
		return out
	}
	for _, tc := range []struct {
		values []string
		want   int
	}{
		{[]string{strings.Join(names(maxCORSHeaders), ", ")}, http.StatusNoContent},
		{names(maxCORSHeaders), http.StatusNoContent},
		{[]string{strings.Join(names(maxCORSHeaders+1), ", ")}, http.StatusForbidden},
		{append(names(maxCORSHeaders), "x-one-more"), http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodOptions, "/mcp", nil)
		r.Header["Origin"] = []string{page}
		r.Header["Access-Control-Request-Method"] = []string{"POST"}
		r.Header["Access-Control-Request-Headers"] = tc.values
		w := httptest.NewRecorder()
		if err := h(echo.New().NewContext(r, w)); err != nil {
			t.Fatal(err)
		}
		allowed := w.Header().Get("Access-Control-Allow-Origin")
		if w.Code != tc.want || (tc.want == http.StatusNoContent) != (allowed == page) {
			t.Errorf("%d values: %d, Access-Control-Allow-Origin %q, want %d", len(tc.values), w.Code, allowed, tc.want)
		}
		if tc.want == http.StatusNoContent && w.Header().Get("Access-Control-Max-Age") != "600" {
			t.Errorf("Access-Control-Max-Age %q, want 600", w.Header().Get("Access-Control-Max-Age"))
		}
	}
}
