package gateway

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/authz"
	"github.com/mcp-gateway/gateway/internal/demo/devissuer"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestStreamsEndWithTheToken: a stream outlives the request that authenticated it, for hours if
// the client keeps it open; it must not go on serving a caller whose token the gateway would now
// refuse. A subscriptions/listen ends, once the token's exp plus the clock skew has passed, with
// the graceful-end result (the client listens again with the token it has then), and a pre-2026
// client's GET stream is closed (its client opens it again). Nothing is waited for but the
// token's two seconds.
func TestStreamsEndWithTheToken(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.ClockSkew = time.Second
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha"}}
	}, alpha)
	t.Run("subscriptions/listen", func(t *testing.T) {
		t.Parallel()
		short := mint(t, iss, devissuer.Claims{"sub": "alice", "exp": time.Now().Add(time.Second).Unix()})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		events := listen(t, ctx, gw, `{"toolsListChanged":true}`, short)
		if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("first event %q", ack)
		}
		wantGracefulEnd(t, ctx, events, "the listen outlived its token")
	})

	t.Run("pre-2026 GET stream", func(t *testing.T) {
		t.Parallel()
		short := mint(t, iss, devissuer.Claims{"sub": "alice", "exp": time.Now().Add(time.Second).Unix()})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
			"Authorization": {"Bearer " + short}}
		_, rh, body := post(t, "http://"+gw.MCP+"/mcp", h,
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		sid := rh.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize: %s", body)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+gw.MCP+"/mcp", nil)
		req.Header = http.Header{"Accept": {"text/event-stream"}, "Authorization": {"Bearer " + short},
			"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %d", res.StatusCode)
		}
		for sc := bufio.NewScanner(res.Body); sc.Scan(); {
		}
		if ctx.Err() != nil {
			t.Fatal("the GET stream outlived its token")
		}
	})
}

// TestStreamsEndWhenTheirKeyLeaves: a listen opened with a token whose key the issuer then
// withdraws (a rotated-out key, or a stolen one) ends with its graceful-end result once the
// gateway fetches the set without that key, here for another caller's token of the new key,
// rather than running on until the exp the key's holder chose. A listen opened with a token of
// a key the issuer keeps goes on: a routine rotation does not make every client listen again.
func TestStreamsEndWhenTheirKeyLeaves(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithSubscriptions())
	gw := startTestGateway(t, func(c *Config) {
		trustIssuers(c, iss)
		c.Auth.JWKSMinRefreshInterval = time.Millisecond
		c.Auth.Policy.Rules = []authz.RuleConfig{{ID: "all", Upstream: "alpha"}}
	}, alpha)
	_, oldKid := iss.Kids()
	long := mint(t, iss, devissuer.Claims{"sub": "mallory", "exp": time.Now().Add(time.Hour).Unix()})
	kept, err := iss.MintAlg(devissuer.ES256, devissuer.Claims{"sub": "bob", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events := listen(t, ctx, gw, `{"toolsListChanged":true}`, long)
	if ack := <-events; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event %q", ack)
	}
	keptEvents := listen(t, ctx, gw, `{"toolsListChanged":true}`, kept)
	if ack := <-keptEvents; !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("first event of the kept key's listen %q", ack)
	}
	if _, err := iss.Rotate(devissuer.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := iss.Withdraw(oldKid); err != nil {
		t.Fatal(err)
	}
	// A token of the new key: its kid is unknown, so the set is fetched again.
	h := modernHeaders("tools/list", "")
	h.Set("Authorization", "Bearer "+mint(t, iss, devissuer.Claims{"sub": "alice"}))
	if status, _, body := post(t, "http://"+gw.MCP+"/mcp", h, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+testMeta+`}}`); status != http.StatusOK {
		t.Fatalf("tools/list with the new key's token: %d %s", status, body)
	}
	wantGracefulEnd(t, ctx, events, "the listen of a withdrawn key's token outlived the key")
	// The kept key's listen still delivers: a change the backend announces now reaches it.
	waitBackendAcknowledgesListen(t, alpha)
	alpha.MCP().AddTool(&mcp.Tool{Name: "fresh", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case ev, ok := <-keptEvents:
		if !ok || !strings.Contains(ev, "notifications/tools/list_changed") {
			t.Fatalf("the kept key's listen: %q (open %v), want tools/list_changed: another key's withdrawal ended it", ev, ok)
		}
	case <-ctx.Done():
		t.Fatal("no list_changed on the kept key's listen")
	}
}

// wantGracefulEnd reads events to their end and wants the listen ended by the gateway, with its
// graceful-end result, before ctx was cancelled; outlived is the failure if ctx ended first.
func wantGracefulEnd(t *testing.T, ctx context.Context, events <-chan string, outlived string) {
	t.Helper()
	var last string
	for data := range events {
		last = data
	}
	if ctx.Err() != nil {
		t.Fatal(outlived)
	}
	if !strings.Contains(last, `"resultType":"complete"`) || !strings.Contains(last, `"id":"L"`) {
		t.Fatalf("the listen ended with %q, want its graceful-end result", last)
	}
}
