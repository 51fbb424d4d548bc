package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadKeptStreamFollowsTheNewPolicy: a pre-2026 client's GET stream that a reload keeps
// (its caller still accepted) filters what it relays by the policy of the configuration now
// serving. It filtered by the replaced configuration's until that one's shutdownTimeout (an
// hour here): a resource the new policy denies kept being announced to a caller who may no
// longer read it. A real go-sdk client at 2025-11-25 subscribes to two resources; the reload
// denies one; the backend then announces both, the denied one first, round after round, until
// the allowed one arrives again: the denied one must not have.
func TestReloadKeptStreamFollowsTheNewPolicy(t *testing.T) {
	iss := newIssuer(t)
	const allowed, denied = "mem://a", "mem://b"
	alpha := subscribingBackend(t, "alpha", false, []string{allowed, denied})
	config := func(deny string) string {
		return "auth:\n  discoveryRetryInterval: 50ms\n  issuers: [{issuer: \"" + iss.URL() + "\"}]\n" +
			"  policy:\n    rules:\n" + deny +
			"      - {id: all, upstream: alpha, resources: [\"*\"], tools: [\"*\"], anyScope: [\"tools:use\"]}\n" +
			"upstreams:\n" + upstreamYAML(alpha)
	}
	f := startReloadGateway(t, "1h", config(""))
	u := &mcptest.ResourceUpdates{}
	cs := mcptest.Connect(t, f.url(), mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithBearer(mintFor(t, iss, "alice")), mcptest.WithResourceUpdated(u.Handler))
	for _, uri := range []string{allowed, denied} {
		if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+" + uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	// poke announces the denied resource, then the allowed one, on the backend's one stream
	// to the gateway, until the client heard of the allowed one; bounded.
	poke := func(when string) []string {
		t.Helper()
		for i := 0; ; i++ {
			if i == 400 {
				t.Fatalf("%s: after %d rounds the client never heard of %s", when, i, allowed)
			}
			for _, uri := range []string{denied, allowed} {
				_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}
			time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
			if got := u.Seen(); slices.Contains(got, "alpha+"+allowed) {
				return u.Drain()
			}
		}
	}
	if got := poke("before the reload"); !slices.Contains(got, "alpha+"+denied) {
		// Both subscriptions must be live before the reload for the test to mean anything.
		mcptest.WaitFor(t, "the client to hear of "+denied, func() bool {
			_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: denied})
			return slices.Contains(u.Drain(), "alpha+"+denied)
		})
	}
	if err := f.reload(t, "1h", config("      - {id: no-b, upstream: alpha, resources: [\""+denied+"\"], effect: deny}\n")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	got := poke("after the reload")
	if slices.Contains(got, "alpha+"+denied) {
		t.Errorf("after the reload that denied %s the kept stream still announced it: %q", denied, got)
	}
}

// TestReloadKeptStreamHearsOnlyBackendsItReaches: a kept pre-2026 GET stream relays the
// list_changed of a backend only while the policy now serving gives its caller anything of that
// backend (authz.Policy.Reaches), as it does for a stream opened on the new configuration. It went
// on relaying the list_changed of a backend the reload took away from the caller: a caller must
// not learn of a backend its policy gives it nothing of. A real go-sdk client at 2025-11-25
// subscribes to one of alpha's resources; beta adds tools (each a tools/list_changed) and alpha
// announces the resource, round after round; after the reload drops beta's rule, none of beta's
// changes may reach the client, while alpha's announcements still do.
func TestReloadKeptStreamHearsOnlyBackendsItReaches(t *testing.T) {
	iss := newIssuer(t)
	const marker = "mem://a"
	alpha := subscribingBackend(t, "alpha", false, []string{marker})
	beta := mcptest.StartServer(t, "beta")
	rule := func(upstream string) string {
		return "      - {id: " + upstream + ", upstream: " + upstream + ", resources: [\"*\"], tools: [\"*\"], anyScope: [\"tools:use\"]}\n"
	}
	config := func(rules string) string {
		return "auth:\n  discoveryRetryInterval: 50ms\n  issuers: [{issuer: \"" + iss.URL() + "\"}]\n" +
			"  policy:\n    rules:\n" + rules + "upstreams:\n" + upstreamYAML(alpha) + upstreamYAML(beta)
	}
	f := startReloadGateway(t, "1h", config(rule("alpha")+rule("beta")))
	u := &mcptest.ResourceUpdates{}
	var changes atomic.Int64
	cs := mcptest.Connect(t, f.url(), mcptest.WithProtocolVersion("2025-11-25"),
		mcptest.WithBearer(mintFor(t, iss, "alice")), mcptest.WithResourceUpdated(u.Handler),
		mcptest.WithToolListChanged(func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) }))
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "alpha+" + marker}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	added := 0
	// round makes beta change its list, then alpha announce the marker, until the client heard
	// the marker; bounded.
	round := func(when string) {
		t.Helper()
		added++
		beta.MCP().AddTool(&mcp.Tool{Name: fmt.Sprintf("extra%d", added), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		for i := 0; ; i++ {
			if i == 400 {
				t.Fatalf("%s: after %d announcements the client never heard of %s", when, i, marker)
			}
			_ = alpha.MCP().ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: marker})
			time.Sleep(25 * time.Millisecond) // a poll interval, not an assertion
			if len(u.Drain()) > 0 {
				return
			}
		}
	}
	// Before the reload beta's changes reach the client, or the test would mean nothing.
	mcptest.WaitFor(t, "the client to hear of beta's list changing", func() bool {
		round("before the reload")
		return changes.Load() > 0
	})
	if err := f.reload(t, "1h", config(rule("alpha"))); err != nil {
		t.Fatalf("reload: %v", err)
	}
	changes.Store(0)
	// Changes closer together than a second are relayed as one, so the rounds span more.
	for start := time.Now(); time.Since(start) < 2500*time.Millisecond; {
		round("after the reload")
	}
	if n := changes.Load(); n != 0 {
		t.Errorf("after the reload that gave the caller nothing of beta, the kept stream relayed %d of beta's list changes", n)
	}
}
