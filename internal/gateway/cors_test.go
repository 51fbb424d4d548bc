package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/browsertest"
	"github.com/mcp-gateway/gateway/mcphttp"
)

// TestCORSForAllowedOrigins: a page of an origin server.allowedOrigins lists can call the
// endpoint (and a tool set's) from a browser: its preflight is answered with the CORS headers
// for the methods and headers it asks, and every answer, the 401 included, names its origin and
// exposes the challenge. Before, the preflight was 405 and no answer named an origin, so the
// browser refused every call the configuration allowed. A preflight of another origin (one the
// loopback rule admits without a listing too), of a method the endpoint does not take, of a
// header that is no token, or through a foreign Host is 403 without them; an OPTIONS that is
// no preflight is still 405.
func TestCORSForAllowedOrigins(t *testing.T) {
	const page = "https://app.example"
	f := startAuthGatewayWith(t, func(c *Config) {
		c.Server.AllowedOrigins = []string{page}
		c.Toolsets = []mcphttp.ToolsetConfig{{Name: "narrow", Include: []mcphttp.SelectorConfig{{Upstream: "alpha", Tools: []string{"echo"}}}}}
	})
	base := "http://" + f.gw.MCP
	asked := "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region"
	preflight := func(path, origin, method, headers string) (int, http.Header) {
		h := http.Header{"Origin": {origin}, "Access-Control-Request-Method": {method}}
		if headers != "" {
			h.Set("Access-Control-Request-Headers", headers)
		}
		status, rh, _ := exchange(t, http.MethodOptions, base+path, h, "")
		return status, rh
	}
	for _, path := range []string{"/mcp", "/mcp/narrow"} {
		status, h := preflight(path, page, http.MethodPost, asked)
		if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != page ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), http.MethodPost) || h.Get("Access-Control-Allow-Headers") != asked ||
			!strings.Contains(h.Get("Vary"), "Origin") {
			t.Errorf("preflight of %s from %s: %d %v", path, page, status, h)
		}
	}
	for name, tc := range map[string]struct{ origin, method, headers string }{
		"another origin":            {"https://evil.example", http.MethodPost, asked},
		"a loopback page":           {"http://localhost:3000", http.MethodPost, asked},
		"DELETE":                    {page, http.MethodDelete, ""},
		"a header that is no token": {page, http.MethodPost, "authorization, x(y)"},
	} {
		if status, h := preflight("/mcp", tc.origin, tc.method, tc.headers); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: preflight %d %v, want 403 without CORS", name, status, h)
		}
	}
	if got := rawExchange(t, f.gw.MCP, "OPTIONS /mcp HTTP/1.1\r\nHost: evil.example\r\nOrigin: "+page+
		"\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"); got.status != http.StatusForbidden || got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight through a foreign Host: %d %v", got.status, got.header)
	}
	if status, h, _ := exchange(t, http.MethodOptions, base+"/mcp", http.Header{}, ""); status != http.StatusMethodNotAllowed || h.Get("Allow") != "POST" {
		t.Errorf("OPTIONS without a preflight: %d %v", status, h)
	}

	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`
	call := func(origin, tok string) (int, http.Header) {
		h := modernHeaders("tools/list", "")
		h.Set("Origin", origin)
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		status, rh, _ := post(t, base+"/mcp", h, list)
		return status, rh
	}
	if status, h := call(page, ""); status != http.StatusUnauthorized || h.Get("Access-Control-Allow-Origin") != page ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("the page's call without a token: %d %v", status, h)
	}
	tok := f.token(t, devissuer.Claims{"scope": "tools:read"})
	if status, h := call(page, tok); status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != page {
		t.Errorf("the page's call: %d %v", status, h)
	}
	if status, h := call("https://evil.example", tok); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin's call: %d %v", status, h)
	}
}

// TestCORSInABrowser: in a real browser, a page of a listed origin calls the endpoint with a
// token and reads the tools, and reads the 401 challenge without one; a page of a loopback
// origin the list does not name (which the Origin check admits, but CORS does not) is refused
// by the browser, its call never answered to it.
func TestCORSInABrowser(t *testing.T) {
	blank := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "<!DOCTYPE html><title>page</title>")
		}))
		t.Cleanup(s.Close)
		return s
	}
	listed, unlisted := blank(), blank()
	f := startAuthGatewayWith(t, func(c *Config) { c.Server.AllowedOrigins = []string{listed.URL} })
	tok := f.token(t, devissuer.Claims{"scope": "tools:read"})
	tab := browsertest.Tab(t, browsertest.New(t))
	fetch := func(page, tok string) string {
		t.Helper()
		headers := map[string]string{}
		for k := range modernHeaders("tools/list", "") {
			headers[k] = modernHeaders("tools/list", "").Get(k)
		}
		if tok != "" {
			headers["Authorization"] = "Bearer " + tok
		}
		h, _ := json.Marshal(headers)
		body, _ := json.Marshal(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + testMeta + `}}`)
		script := fmt.Sprintf(`fetch(%q, {method: "POST", headers: %s, body: %s})
			.then(async r => r.status + " " + (r.headers.get("WWW-Authenticate") || "") + " " + await r.text(), e => "refused: " + e.name)`,
			"http://"+f.gw.MCP+"/mcp", h, body)
		browsertest.Step(t, tab, "open "+page, chromedp.Navigate(page))
		sctx, cancel := context.WithTimeout(tab, browsertest.StepTimeout)
		defer cancel()
		got, err := chromedp.Run(sctx, chromedp.Evaluate[string](script, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetch from %s: %v", page, err)
		}
		return got
	}
	if got := fetch(listed.URL, tok); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "alpha__echo") {
		t.Errorf("the listed page's call: %.300s", got)
	}
	if got := fetch(listed.URL, ""); !strings.HasPrefix(got, "401 Bearer ") || !strings.Contains(got, "resource_metadata=") {
		t.Errorf("the listed page's call without a token: %.300s", got)
	}
	if got := fetch(strings.Replace(unlisted.URL, "127.0.0.1", "localhost", 1), tok); got != "refused: TypeError" {
		t.Errorf("the unlisted page's call: %.300s", got)
	}
}
