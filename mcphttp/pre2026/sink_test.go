package pre2026

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestLegacyReshapedResultCounted: the copy of a result reshaped for a 2025 client is held
// beside the result until written, so it counts against server.maxResultBytesInFlight too: a
// 2025-11-25 client's call needs the budget a 2026-07-28 client's call of the same result needs
// (found by trying budgets, so the test does not depend on how the response buffer grows) plus
// the copy. Under the 2026-07-28 call's least budget and half the result more it is refused;
// with twice the result more it gets the result whole.
func TestLegacyReshapedResultCounted(t *testing.T) {
	const (
		size = 320 << 10
		step = 32 << 10
	)
	be := mcptest.StartServer(t, "be")
	text := strings.Repeat("x", size)
	whole := func(budget int64, version string) bool {
		gw, _ := startLegacyGateway(t, gwSpec{Opts: upstreams.Options{MaxResultBytesInFlight: budget}},
			upstreams.UpstreamConfig{Name: "be", URL: be.URL()})
		var opts []mcptest.ClientOption
		if version != "" {
			opts = append(opts, mcptest.WithProtocolVersion(version))
		}
		res, err := mcptest.Connect(t, gw.URL, opts...).CallTool(t.Context(),
			&mcp.CallToolParams{Name: "be__echo", Arguments: map[string]any{"text": text}})
		return err == nil && !res.IsError && strings.Contains(mcptest.ResultText(res), text)
	}
	least := int64(size)
	for ; !whole(least, ""); least += step {
		if least > 8*size {
			t.Fatalf("a 2026-07-28 call of %d bytes fits under no budget up to %d", size, least)
		}
	}
	if whole(least+size/2, "2025-11-25") {
		t.Errorf("a 2025-11-25 call fit under %d bytes, the least a 2026-07-28 call needs (%d) and half the result: its reshaped copy was not counted",
			least+size/2, least)
	}
	if !whole(least+2*size, "2025-11-25") {
		t.Errorf("a 2025-11-25 call did not fit under %d bytes, room for the result's copy twice over", least+2*size)
	}
}
