package mcphttp

import (
	"net/http"
	"testing"

	"github.com/mcp-gateway/gateway/internal/jsonrpc"
	"github.com/mcp-gateway/gateway/upstreams"
)

// TestHiddenResourceAnswer: a backend result reduced to nothing by the caller's resource policy
// is answered (in upstreams) exactly as the gateway answers a hidden resource itself, so a
// caller cannot tell a link to a hidden resource from the hidden resource.
func TestHiddenResourceAnswer(t *testing.T) {
	e := errUnknownName(kindNoun(upstreams.KindResource))
	if e.Status != http.StatusBadRequest || e.RPC.Code != jsonrpc.CodeInvalidParams || e.RPC.Message != upstreams.HiddenResourceMessage {
		t.Fatalf("hidden resource: %d %d %q; upstreams answers 400 %d %q",
			e.Status, e.RPC.Code, e.RPC.Message, jsonrpc.CodeInvalidParams, upstreams.HiddenResourceMessage)
	}
}
