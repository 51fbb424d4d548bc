package legacyclient

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestRawAgainstGoSDK: the hand-made legacy transport works against the go-sdk's own 2025-11-25
// sessions: a handshake, a call, a backend elicitation answered on a separate POST while the
// call's stream waits, and the go-sdk's 404 for a tampered session id. The tests that use Raw on
// the gateway rely on exactly this.
func TestRawAgainstGoSDK(t *testing.T) {
	s := mcptest.StartLegacyServer(t, "alpha")
	c := &Raw{}
	sid := c.Initialize(t, s.URL())
	if r := c.CallText(t, s.URL(), sid, mcptest.ToolEcho, "raw"); r.Status != http.StatusOK || ResultText(r.Msgs) != "raw" {
		t.Fatalf("echo: %s", r)
	}
	stream := c.Open(t, s.URL(), sid, c.CallArgs(mcptest.ToolAskName, "{}"))
	ask := stream.NextRequest(t, "elicitation/create")
	answer := `{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"name":"Grace"}}}`
	if r := c.Post(t, s.URL(), sid, answer); r.Status != http.StatusAccepted {
		t.Fatalf("the answer: want 202, got %s", r)
	}
	if final := stream.NextResult(t); final.Error != nil || !strings.Contains(string(final.Result), "Hello, Grace") {
		t.Fatalf("ask_name after the answer: result %s error %s", final.Result, final.Error)
	}
	if r := c.CallText(t, s.URL(), Tamper(sid), mcptest.ToolEcho, "tampered"); r.Status != http.StatusNotFound {
		t.Fatalf("a tampered session id: want 404, got %s", r)
	}
}
