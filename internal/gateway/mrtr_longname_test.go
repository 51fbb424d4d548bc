package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/resuri"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestConfirmationOfAURITooLongForItsState: a resource URI may be longer (resuri.MaxLen) than
// a requestState carries (mrtr.maxTokenBytes), and the state binds it. A read that must be
// confirmed (its template drifted, with confirm as the action) under such a URI is refused as
// the client's long URI, 400 -32602 saying so, and reaches no backend; before, it was a 500
// "Internal error". URIs whose state fits are asked as before.
func TestConfirmationOfAURITooLongForItsState(t *testing.T) {
	items := func(desc string) *mcp.ResourceTemplate {
		return &mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "items", Description: desc, MIMEType: "text/plain"}
	}
	files := mcptest.StartServer(t, "files", mcptest.WithoutDefaults(), mcptest.WithResourceTemplate(items("Items."), readText))
	lock := pinLock(t, files)
	p := startPinned(t, &pins.Config{LockFile: lock, Actions: map[pins.Class]pins.Action{pins.ClassTextChanged: pins.ActionConfirm}}, nil, files)
	files.MCP().AddResourceTemplate(items("Items, changed."), readText)
	templateNames(t, p.gw)
	files.Reset()
	for _, n := range []int{4000, 7000, resuri.MaxLen - 100} {
		uri := "files+mem://items/" + strings.Repeat("x", n)
		status, r := readResource(t, p.gw, uri)
		if n == 4000 {
			if status != http.StatusOK || r.Result.ResultType != "input_required" {
				t.Errorf("a %d-byte id: %d %+v, want the confirmation", n, status, r)
			}
			continue
		}
		if status != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "resource URI is too long") {
			t.Errorf("a %d-byte id: %d %+v, want 400 -32602 naming the URI as too long", n, status, r.Error)
		}
	}
	if n := reads(files); n != 0 {
		t.Errorf("backend reads %d, want none", n)
	}
}
