package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListenEndsWithToken: a token is checked when a request arrives, and a listen lasts as long
// as its client keeps it open: a listen, or a pre-2026 client's GET stream, went on relaying
// notifications for hours after the token it was opened with expired, the only way a bearer
// token's holder loses access. It now ends when the token would be refused (expiry plus the
// clock skew allowed), a listen with a 401's error (-32013) so the client listens again with a
// fresh token.
func TestListenEndsWithToken(t *testing.T) {
	iss := newIssuer(t)
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.MRTR.Keys = testKeys
		c.Auth.ClockSkew = time.Millisecond
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "readme", Upstream: "alpha", Resources: []string{"**"}, AnyScope: []string{"docs:read"}}}
	}, mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions()))
	// Expiring within 1 to 2 seconds (exp is whole seconds).
	shortLived := func() string {
		return mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "docs:read", "exp": time.Now().Add(2 * time.Second).Unix()})
	}
	const patience = 15 * time.Second // far beyond the token's life, and the test's bound

	t.Run("subscriptions/listen", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		events := listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+mem://readme"]}`, shortLived())
		if ack := <-events; ack == "" {
			t.Fatal("no acknowledgement")
		}
		var last struct {
			Error *struct{ Code int } `json:"error"`
		}
		var final string
		for data := range events {
			final = data
		}
		if ctx.Err() != nil {
			t.Fatalf("the listen outlived its token by more than %s", patience)
		}
		if json.Unmarshal([]byte(final), &last) != nil || last.Error == nil || last.Error.Code != -32013 {
			t.Fatalf("the listen ended with %q, want a -32013 error", final)
		}
	})

	t.Run("a pre-2026 GET stream", func(t *testing.T) {
		tok := shortLived()
		raw := &legacyclient.Raw{Token: tok}
		sid := raw.Initialize(t, "http://"+gw.MCP+"/mcp")
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+gw.MCP+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: status %d", res.StatusCode)
		}
		_, _ = io.Copy(io.Discard, res.Body) // returns when the stream ends
		if ctx.Err() != nil {
			t.Fatalf("the GET stream outlived its token by more than %s", patience)
		}
	})
}
