package gateway

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestReloadKeepsOpenCircuits: a backend whose circuit opened (it refuses connections) stays
// failing fast across a reload that left its connection settings alone. Every backend's circuit
// started closed in the new configuration: a dead backend got full traffic again after every
// reload, and so did a caller whose own circuit had opened (the same breaker holds both). A
// reload that changes how the backend is reached (a header here) starts its circuit afresh,
// since the record was about another connection.
//
// The circuit state is read from the gauge, which after a reload is set from the breakers the
// new configuration's calls go through. Health probes run once an hour and three failures open
// the circuit, so the one probe the new configuration makes at its start cannot open a fresh
// circuit by itself.
func TestReloadKeepsOpenCircuits(t *testing.T) {
	alpha := mcptest.StartServer(t, "alpha")
	body := func(header string) string {
		return "auth: {disabled: true}\nhealthInterval: 1h\nupstreams:\n" + fmt.Sprintf(
			"  - {name: alpha, url: %q, timeout: 30s, headers: {X-Team: {value: %s}}, breaker: {failures: 3, cooldown: 1h}}\n", alpha.URL(), header)
	}
	f := startReloadGateway(t, "30s", body("a"))
	cs := mcptest.Connect(t, f.url())
	if names := toolNames(t, cs); len(names) == 0 {
		t.Fatal("alpha lists no tools")
	}
	circuit := func() string {
		t.Helper()
		for _, line := range strings.Split(get(t, "http://"+f.gw.Admin+"/metrics"), "\n") {
			if v, ok := strings.CutPrefix(line, `mcp_gateway_upstream_circuit_state{upstream="alpha"} `); ok {
				return v
			}
		}
		return "absent"
	}
	alpha.Close() // refuses connections from now on
	mcptest.WaitFor(t, "alpha's circuit to open", func() bool {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "x"}}); err == nil {
			t.Fatal("alpha__echo succeeded: the backend was closed")
		}
		return circuit() == "2"
	})

	if err := f.reload(t, "30s", body("a")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := circuit(); got != "2" {
		t.Errorf("after a reload that left alpha alone its circuit is %s, want 2 (open)", got)
	}

	if err := f.reload(t, "30s", body("b")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if got := circuit(); got != "0" {
		t.Errorf("after a reload that changed alpha's headers its circuit is %s, want 0 (closed, afresh)", got)
	}
}
