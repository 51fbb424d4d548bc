package legacyclient

import (
	"io"
	"net/http"
	"net/http/httptest"
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

// TestRawReadsEveryLineEnd: the raw client reads an event stream by the standard's line ends,
// CR LF, LF and a lone CR, whole (Post) and as it arrives (Open), so a test cannot miss a
// server that ends its lines with CR: each reads both messages, and the event id.
func TestRawReadsEveryLineEnd(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	const result = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	for name, end := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			stream := "\uFEFF: hello" + end + "id: e1" + end + "data: " + note + end + end +
				"event: message" + end + "data: " + result + end + end
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, stream)
			}))
			defer srv.Close()
			c := &Raw{}
			r := c.Post(t, srv.URL, "", c.CallBody("echo", "x"))
			if len(r.Msgs) != 2 || string(r.Msgs[0]) != note || string(r.Msgs[1]) != result || ResultText(r.Msgs) != "ok" {
				t.Fatalf("Post read %q", r.Msgs)
			}
			s := c.Open(t, srv.URL, "", c.CallBody("echo", "x"))
			if m := s.Next(t, "the note"); m.Method != "notifications/message" || !s.SawEventID() {
				t.Fatalf("Open read %+v (event id seen: %v)", m, s.SawEventID())
			}
			if m := s.NextResult(t); string(m.ID) != "1" {
				t.Fatalf("Open read %+v", m)
			}
		})
	}
}
