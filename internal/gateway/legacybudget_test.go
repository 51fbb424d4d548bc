package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
)

// legacyBigCall is a pre-2026 client's tools/call of the edge backend's 6 MiB tool.
const legacyBigCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"edge__many","arguments":{}}}`

// callUnreadLegacy sends n pre-2026 calls of the many tool on session sid as the attacker, each on
// a raw connection with a small receive buffer that is never read. The connections stay open
// until the test ends.
func (f *edgeFixture) callUnreadLegacy(t *testing.T, n int, sid string) {
	t.Helper()
	f.postUnread(t, n, "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: "+sid+"\r\n", legacyBigCall)
}

// TestLegacyUnreadResultsHoldTheirBudget: a pre-2026 call holds its caller's in-flight slot and
// its share of the replica's result budget until its response is written, as a 2026-07-28 call
// does. A caller limited to two calls in flight that asks for 6 MiB results and reads none gets
// two of them admitted; every further call is refused with 429 (-32012), never forwarded, while
// the result bytes stay reserved. Before, the translated call gave both back as soon as the
// backend answered and the results were written with nothing held: every call was admitted.
func TestLegacyUnreadResultsHoldTheirBudget(t *testing.T) {
	const slots, tries = 2, 6
	f := startEdgeGateway(t, func(c *Config) {
		c.Server.MaxConcurrentPerCaller = slots
		c.Server.WriteTimeout = time.Minute // the unread responses stay held for the test
	})
	raw := &legacyclient.Raw{Token: f.attacker}
	sid := raw.Initialize(t, f.url())
	f.callUnreadLegacy(t, tries, sid)
	if !settle(30*time.Second, func() bool { return f.backend.large.Load() >= slots }) {
		t.Fatalf("the backend saw %d calls, want %d", f.backend.large.Load(), slots)
	}
	// The calls beyond the caller's slots are answered at once; give a wrong admission the
	// same time to show (a fail-safe wait, not a timing).
	settle(2*time.Second, func() bool { return f.backend.large.Load() > slots })
	if n := f.backend.large.Load(); n != slots {
		t.Errorf("the backend ran %d large calls for a caller with %d slots and unread results", n, slots)
	}
	reserved := scrapeValue(t, f.gw.Admin, "mcp_gateway_result_bytes_in_flight")
	if reserved < slots*manyBlocks<<10 {
		t.Errorf("result bytes in flight %v while %d results of %d KiB are unread", reserved, slots, manyBlocks)
	}
	r := raw.Post(t, f.url(), sid, legacyBigCall)
	if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "-32012") {
		t.Errorf("one more call: HTTP %d %.200s, want 429 -32012", r.Status, r.Body)
	}
}
