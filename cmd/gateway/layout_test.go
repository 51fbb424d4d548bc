package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServingBinaryLinksNoDevelopmentParts: the production binary is the product only. The demo,
// its development token issuer, the MCP SDK (which only the demo backends and the tests use) and
// every test-support or tool package stay out of it; `make demo` runs cmd/gateway-demo instead.
func TestServingBinaryLinksNoDevelopmentParts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/mcp-gateway/gateway/internal/demo",
		"github.com/mcp-gateway/gateway/internal/testsupport/",
		"github.com/mcp-gateway/gateway/internal/tools/",
		"github.com/modelcontextprotocol/go-sdk/",
		"testing",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps printed %d packages; expected the gateway's whole dependency tree", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
				t.Errorf("cmd/gateway links %s", dep)
			}
		}
	}
}
