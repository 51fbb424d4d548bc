package gateway

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestReloadKeepsRateLimitLeases: a replica leases rate-limit tokens from Redis ahead of the
// calls that spend them; a reload that leaves the limit as it was keeps the lease, so across the
// reload the caller is admitted exactly the burst, neither fewer (the leased tokens lost) nor
// more. With one replica and no Redis the buckets live in the process's store, which outlives
// the reload too.
func TestReloadKeepsRateLimitLeases(t *testing.T) {
	rs := testredis.Start(t)
	t.Run("redis", func(t *testing.T) { checkReloadKeepsLimit(t, "redis: {url: \""+rs.URL()+"\"}\n") })
	t.Run("memory", func(t *testing.T) { checkReloadKeepsLimit(t, "") })
}

func checkReloadKeepsLimit(t *testing.T, redisYAML string) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	const burst = 64 // leases of 64 ÷ 8 = 8 tokens
	body := func(tools string) string {
		return authYAML(iss.URL(), tools, `, rateLimit: "64/h burst 64"`, alpha) + redisYAML
	}
	f := startReloadGateway(t, "30s", body(`["echo"]`))
	cs := mcptest.Connect(t, f.url(), mcptest.WithBearer(mintFor(t, iss, "alice")))
	call := func() bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}})
		return err == nil && !res.IsError
	}
	if !call() {
		t.Fatal("the first call was refused")
	}
	// Another rule's change: this rule's limit stays as it was.
	if err := f.reload(t, "30s", body(`["echo", "add"]`)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	admitted := 1
	for range burst {
		if !call() {
			break
		}
		admitted++
	}
	if admitted != burst {
		t.Fatalf("admitted %d calls across the reload, want the burst of %d", admitted, burst)
	}
	if n := toolCalls(alpha); n != burst {
		t.Fatalf("the backend saw %d calls, want %d", n, burst)
	}
}
