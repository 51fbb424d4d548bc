package gateway

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestLogsNameTheNormalURI: a resource URI is authorised and forwarded in its normal form, so
// the access log and the audit lines name that form, not the spelling the client sent
// (another case of the scheme, an escaped unreserved character, a dot segment): an operator
// searching the log for what was read finds every read of it, and a spelling chosen to hide a
// read from such a search does not. No line holds an argument value either.
//
//	go test -count=1 -run 'TestLogsNameTheNormalURI' ./internal/gateway
func TestLogsNameTheNormalURI(t *testing.T) {
	const normal = "alpha+mem://items/beta"
	spellings := []string{normal, "alpha+MEM://items/beta", "alpha+mem://items/%62eta", "alpha+mem://items/x/../beta", "alpha+mem://items//beta"}
	alpha := mcptest.StartServer(t, "alpha")
	gw, logs, stop := startLoggedGateway(t, func(c *Config) { c.Auth.Disabled = true }, alpha)
	cs := mcptest.Connect(t, "http://"+gw.MCP+"/mcp")
	for _, uri := range spellings {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatalf("read %q: %v", uri, err)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": logsArgSecret}}); err != nil {
		t.Fatal(err)
	}
	stop()
	var reads int
	for _, l := range logLines(t, logs.String()) {
		if l.str("msg") == "request" && l.str("method") == "resources/read" {
			reads++
			if l.str("name") != normal {
				t.Errorf("the access line names %q, want %q", l.str("name"), normal)
			}
		}
	}
	if reads != len(spellings) {
		t.Errorf("%d access lines for resources/read, want %d", reads, len(spellings))
	}
	out := logs.String()
	for _, s := range spellings[1:] {
		if strings.Contains(out, strings.TrimPrefix(s, "alpha+")) {
			t.Errorf("the log holds the client's spelling %q", s)
		}
	}
	if strings.Contains(out, logsArgSecret) {
		t.Error("the log holds an argument value")
	}
}
