package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestPagesAnswerEveryMethod: a method the approval page and the connect pages do not take,
// an extension method included (BREW, PROPPATCH), is answered by the pages themselves: 405
// where a page is, with the Allow of the methods it takes, else 404, always with the pages'
// security headers. Before, echo answered the extension methods itself, in JSON, without the
// headers and with an Allow listing eleven methods the pages refuse.
func TestPagesAnswerEveryMethod(t *testing.T) {
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Redis.URL = testredis.Start(t).URL()
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "page", Upstream: "alpha", Tools: []string{"echo"}, Confirm: authz.ConfirmURL}}
		c.Approval.ClientID = "gateway-approval"
		var notes UpstreamConfig
		notes.Name, notes.URL, notes.Protocol, notes.Timeout = "notes", "http://"+closedPort(t)+"/mcp", upstreams.ProtocolVersion, 5*time.Second
		notes.Auth.Type, notes.Auth.ClientID = upstreams.AuthUserOAuth, "gateway-notes"
		c.Upstreams = append(c.Upstreams, notes)
		c.UserOAuth.Keys = []KeyConfig{{ID: "v1", Secret: Secret{Value: "a-test-only-vault-key-of-at-least-32-bytes"}}}
	}, mcptest.StartServer(t, "alpha"))
	id := strings.Repeat("ab", 16)
	for _, tt := range []struct {
		path   string
		status int
		allow  string
	}{
		{"/approval/c/" + id, http.StatusMethodNotAllowed, "GET, POST"},
		{"/approval", http.StatusNotFound, ""},
		{"/approval/nothing", http.StatusNotFound, ""},
		{"/connect/", http.StatusMethodNotAllowed, "GET"},
		{"/connect/callback/notes", http.StatusMethodNotAllowed, "GET"},
		{"/connect/b/notes", http.StatusMethodNotAllowed, "POST"},
	} {
		for _, method := range []string{"BREW", "PROPPATCH", http.MethodTrace} {
			status, h, _ := exchange(t, method, "http://"+gw.MCP+tt.path, http.Header{}, "")
			if status != tt.status || h.Get("Allow") != tt.allow || h.Get("X-Frame-Options") != "DENY" ||
				!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("Cache-Control") != "no-store" ||
				!strings.HasPrefix(h.Get("Content-Type"), "text/html") {
				t.Errorf("%s %s: %d, Allow %q, headers %v; want %d, Allow %q and the pages' headers",
					method, tt.path, status, h.Get("Allow"), h, tt.status, tt.allow)
			}
		}
	}
}
