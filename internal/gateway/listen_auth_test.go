package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListenFollowsPolicy: through the gateway binary with a real issuer, a caller's listen is
// acknowledged, and sent to the backend, only for the resources its policy lets it read.
func TestListenFollowsPolicy(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "readme", Upstream: "alpha", Resources: []string{mcptest.ResourceReadme}, AnyScope: []string{"docs:read"}},
		}
	}, alpha)
	tok := mint(t, iss, devissuer.Claims{"sub": "alice", "scope": "docs:read"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := listen(t, ctx, gw, `{"resourceSubscriptions":["alpha+mem://readme","alpha+mem://items/1"]}`, tok)
	var ack struct {
		Method string
		Params struct {
			Notifications struct{ ResourceSubscriptions []string }
		}
	}
	if data := <-events; json.Unmarshal([]byte(data), &ack) != nil {
		t.Fatalf("first event %s", data)
	}
	if got := ack.Params.Notifications.ResourceSubscriptions; ack.Method != "notifications/subscriptions/acknowledged" ||
		len(got) != 1 || got[0] != "alpha+mem://readme" {
		t.Fatalf("acknowledgement %+v, want alpha+mem://readme only", ack)
	}
	var sent string
	mcptest.WaitFor(t, "the backend gets the listen", func() bool {
		if l := alpha.RequestsOf("subscriptions/listen"); len(l) > 0 {
			sent = string(l[len(l)-1].Body)
		}
		return sent != ""
	})
	if !strings.Contains(sent, mcptest.ResourceReadme) || strings.Contains(sent, "mem://items") {
		t.Fatalf("the backend was asked for %s, want mem://readme only", sent)
	}
}

// TestListenHearsNoBackendItCannotReach: a list_changed tells its listener that a backend
// exists and changed. A caller whose policy gives it nothing of beta is not listened for at
// beta at all: only alpha gets the listen.
func TestListenHearsNoBackendItCannotReach(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	beta := mcptest.StartServer(t, "beta")
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "alpha", Upstream: "alpha", Tools: []string{"*"}}}
	}, alpha, beta)
	tok := mint(t, iss, devissuer.Claims{"sub": "alice"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := listen(t, ctx, gw, `{"toolsListChanged":true}`, tok)
	if data := <-events; !strings.Contains(data, `"toolsListChanged":true`) {
		t.Fatalf("acknowledgement %s", data)
	}
	mcptest.WaitFor(t, "alpha gets the listen", func() bool { return len(alpha.RequestsOf("subscriptions/listen")) > 0 })
	if n := len(beta.RequestsOf("subscriptions/listen")); n != 0 {
		t.Fatalf("beta, which the caller's policy gives nothing of, got %d listens for it", n)
	}
}
