package gateway

import (
	"slices"
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
