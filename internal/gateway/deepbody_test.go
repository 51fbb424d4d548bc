package gateway

import (
	"net/http"
	"strings"
	"testing"
)

// TestDeepBodiesDoNotEndTheProcess: a body of the largest size nested four million levels deep,
// sent without a token in either era, is refused with 400 -32600 and the replica goes on serving.
// Before, the error response's search for the request's id recursed to the body's depth, past the
// runtime's 1 GB stack limit: one unauthenticated request ended the process (a fatal error, which
// no recover catches), and this test with it.
func TestDeepBodiesDoNotEndTheProcess(t *testing.T) {
	f := startEdgeGateway(t, nil)
	const maxBody = 4 << 20 // the default server.maxBodyBytes
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"edge__small","arguments":`
	body := head + strings.Repeat("[", maxBody-len(head))
	legacy := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-06-18"}}
	for name, h := range map[string]http.Header{"2026-07-28": modernHeaders("tools/call", "edge__small"), "2025-06-18": legacy} {
		status, _, resp := post(t, f.url(), h, body)
		if status != http.StatusBadRequest || !strings.Contains(resp, "-32600") {
			t.Errorf("%s: HTTP %d %.200s, want 400 -32600", name, status, resp)
		}
	}
	if status, code, err := f.call(http.DefaultClient, f.healthy, "small"); err != nil || status != http.StatusOK || code != 0 {
		t.Errorf("a call after the deep bodies: HTTP %d code %d err %v", status, code, err)
	}
}
