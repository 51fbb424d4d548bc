package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/legacyclient"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestConfirmationShowsRightToLeftAsSent: the form confirmation a client shows as plain text is
// laid out by the bidirectional algorithm, which moves the digit groups beside a Hebrew letter
// ("ש 0532 0130" reads "0130 0532 ש"); on both edges, the 2026 one and the pre-2026 one, the
// message also shows the argument in the order sent, its right-to-left letter as a code point.
func TestConfirmationShowsRightToLeftAsSent(t *testing.T) {
	iss := newIssuer(t)
	alpha := mcptest.StartServer(t, "alpha")
	gw := confirmGateway(t, iss, alpha)
	url := "http://" + gw.MCP + "/mcp"
	tok := mintFor(t, iss, "alice")
	const want = `text="ש 0532 0130" (as sent, left to right: text="[U+05E9] 0532 0130")`

	var asked string
	cs := mcptest.Connect(t, url, mcptest.WithBearer(tok), mcptest.WithElicitation(
		func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = req.Params.Message
			return &mcp.ElicitResult{Action: "decline"}, nil
		}))
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "\u05e9 0532 0130"}}); err != nil {
		t.Fatalf("call: %v", err)
	}
	if !strings.Contains(asked, want) {
		t.Errorf("2026 edge: confirmation %q lacks %q", asked, want)
	}

	c := &legacyclient.Raw{Token: tok}
	sid := c.Initialize(t, url)
	st := c.Open(t, url, sid, c.CallArgs("alpha__echo", "{\"text\":\"\u05e9 0532 0130\"}"))
	req := st.NextRequest(t, "elicitation/create")
	var p struct{ Message string }
	if err := json.Unmarshal(req.Params, &p); err != nil {
		t.Fatalf("elicitation/create params: %v", err)
	}
	if !strings.Contains(p.Message, want) {
		t.Errorf("pre-2026 edge: confirmation %q lacks %q", p.Message, want)
	}
	if a := c.Post(t, url, sid, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"action":"decline"}}`); a.Status != http.StatusAccepted {
		t.Fatalf("answer: %s", a)
	}
	st.NextResult(t)
	if n := len(alpha.Forwarded()); n != 0 {
		t.Errorf("backend received %d requests after declines", n)
	}
}
