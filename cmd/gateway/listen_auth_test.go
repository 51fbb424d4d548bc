package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/devissuer"
	"github.com/mcp-gateway/gateway/internal/mcptest"
)

// TestListenFollowsPolicy: through the gateway binary with a real issuer, a caller's listen is
// acknowledged, and sent to the backend, only for the resources its policy lets it read.
func TestListenFollowsPolicy(t *testing.T) {
	iss, err := devissuer.New(devissuer.Options{Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iss.Close() })
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) {
		c.Auth.Disabled = false
		c.Server.PublicURL = testResource
		c.Auth.Issuers = []authz.IssuerConfig{{Issuer: iss.URL()}}
		c.Auth.Policy.Rules = []authz.RuleConfig{
			{ID: "readme", Upstream: "alpha", Resources: []string{mcptest.ResourceReadme}, AnyScope: []string{"docs:read"}},
		}
	}, alpha)
	tok, err := iss.Mint(devissuer.Claims{"sub": "alice", "scope": "docs:read"})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{` + testMeta +
		`,"notifications":{"resourceSubscriptions":["alpha+mem://readme","alpha+mem://items/1"]}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+gw.MCP+"/mcp", strings.NewReader(body))
	req.Header = modernHeaders("subscriptions/listen", "")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("listen: status %d", res.StatusCode)
	}
	var ack struct {
		Method string
		Params struct {
			Notifications struct{ ResourceSubscriptions []string }
		}
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &ack); err != nil {
				t.Fatalf("first event %s: %v", data, err)
			}
			break
		}
	}
	if got := ack.Params.Notifications.ResourceSubscriptions; ack.Method != "notifications/subscriptions/acknowledged" ||
		len(got) != 1 || got[0] != "alpha+mem://readme" {
		t.Fatalf("acknowledgement %+v, want alpha+mem://readme only", ack)
	}
	var listen string
	for deadline := time.Now().Add(30 * time.Second); listen == ""; time.Sleep(5 * time.Millisecond) {
		for _, ex := range alpha.Requests() {
			if ex.Header.Get("Mcp-Method") == "subscriptions/listen" {
				listen = string(ex.Body)
			}
		}
		if time.Now().After(deadline) { // a fail-safe, not a timing assertion
			t.Fatal("the backend never got the listen")
		}
	}
	if !strings.Contains(listen, mcptest.ResourceReadme) || strings.Contains(listen, "mem://items") {
		t.Fatalf("the backend was asked for %s, want mem://readme only", listen)
	}
}
