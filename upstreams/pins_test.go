package upstreams

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/upstreams/internal/upstreamstest"
)

// TestCatalogMarksShadowingTools: a tool pinning flags as shadowing another backend's tool is
// left out of the search catalog when blocked (the default), and marked Shadows when the
// operator's action still lists it, so that a search never ranks it unknowingly.
func TestCatalogMarksShadowingTools(t *testing.T) {
	const desc = "Read a file from the project workspace and return its content as text."
	schema := map[string]any{"type": "object"}
	alpha := mcptest.StartServer(t, "alpha", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "read_file", Description: desc, InputSchema: schema}, noopCatalogTool))
	beta := mcptest.StartServer(t, "beta", mcptest.WithoutDefaults(),
		mcptest.WithTool(&mcp.Tool{Name: "readFile", Description: desc, InputSchema: schema}, noopCatalogTool))
	lock := pins.NewLock()
	raw, _ := json.Marshal(map[string]any{"name": "read_file", "description": desc, "inputSchema": schema})
	if err := lock.AddItems("alpha", pins.KindTool, []json.RawMessage{raw}); err != nil {
		t.Fatal(err)
	}
	lock.Backend("beta")
	for _, c := range []struct {
		action  pins.Action
		inCat   bool
		flagged bool
	}{{pins.ActionBlock, false, false}, {pins.ActionLog, true, true}} {
		guard, err := pins.NewGuard(pins.GuardOptions{Config: &pins.Config{LockFile: "x",
			Actions: map[pins.Class]pins.Action{pins.ClassNew: pins.ActionLog, pins.ClassShadows: c.action}},
			Lock: lock, Backends: []string{"alpha", "beta"}})
		if err != nil {
			t.Fatal(err)
		}
		r := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL()}, {Name: "beta", URL: beta.URL()}}},
			Options{Pins: guard})
		cat, err := r.ToolCatalog(context.Background(), &ListRequest{Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range cat.Tools() {
			if tl.Target.Upstream == "beta" {
				found = true
				if tl.Shadows != c.flagged {
					t.Errorf("%s: beta's clone Shadows %v", c.action, tl.Shadows)
				}
			}
			if tl.Target.Upstream == "alpha" && tl.Shadows {
				t.Errorf("%s: the original is flagged", c.action)
			}
		}
		if found != c.inCat {
			t.Errorf("%s: clone in the catalog %v, want %v", c.action, found, c.inCat)
		}
		if c.flagged {
			// The same definitions unflagged are another version: search indexes per version
			// and must not keep ranking a tool pinning has since flagged.
			plain := newTestRegistry(t, Config{Upstreams: []UpstreamConfig{{Name: "alpha", URL: alpha.URL()}, {Name: "beta", URL: beta.URL()}}}, Options{})
			unflagged, err := plain.ToolCatalog(context.Background(), &ListRequest{Params: json.RawMessage(`{"_meta":` + upstreamstest.Meta + `}`)})
			if err != nil || unflagged.Len() != cat.Len() || unflagged.Version() == cat.Version() {
				t.Errorf("%s: a flagged catalog has the version of the same tools unflagged (%v)", c.action, err)
			}
		}
	}
}

func noopCatalogTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}
