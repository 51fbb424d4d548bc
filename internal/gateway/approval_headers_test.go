package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/realop"
)

// TestApprovalPathHeadersOnEveryAnswer: every answer under the approval page's path, through
// the gateway's router, carries the pages' security headers (no framing, no caching, no
// sniffing, no Referer to other origins, the CSP): the page itself and its redirect to the
// issuer, and every refusal, whatever the path's spelling, the method or the body. Before, the
// path itself (/approval, without a slash) was answered by the router's own JSON 404 without
// any of them, while the connect pages' path was the pages'.
func TestApprovalPathHeadersOnEveryAnswer(t *testing.T) {
	op := realop.Start(t, realop.Options{})
	alpha := mcptest.StartServer(t, "alpha")
	rule := authz.RuleConfig{ID: "echo-approval", Upstream: "alpha", Tools: []string{mcptest.ToolEcho}, Confirm: authz.ConfirmURL}
	_, _, base := startConfirmURLGateway(t, op, rule, nil, alpha)
	id := strings.Repeat("ab", 16)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/approval", ""},
		{"POST", "/approval", ""},
		{"GET", "/approval/", ""},
		{"GET", "/approval/c/" + id, ""},
		{"GET", "/approval/c/" + id + "?signin=again", ""},
		{"GET", "/approval/c/" + id + "/", ""},
		{"GET", "/approval//c/" + id, ""},
		{"GET", "/approval/c/../c/" + id, ""},
		{"GET", "/approval/c/not-an-id", ""},
		{"HEAD", "/approval/c/" + id, ""},
		{"OPTIONS", "/approval/c/" + id, ""},
		{"PUT", "/approval/c/" + id, ""},
		{"POST", "/approval/c/" + id, "decision=approve&csrf=x"},
		{"POST", "/approval/c/" + id, strings.Repeat("a", 1<<20)},
		{"GET", "/approval/callback", ""},
		{"GET", "/approval/callback?code=x&state=y", ""},
		{"POST", "/approval/callback", ""},
	} {
		req, err := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		h := resp.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s %s: %d without the pages' headers: %v", tt.method, tt.path, resp.StatusCode, h)
		}
	}
}
