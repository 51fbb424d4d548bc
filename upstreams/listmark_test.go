package upstreams

import (
	"reflect"
	"slices"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// TestListDiscoverable: items Visible leaves out and Discoverable names scopes for are listed
// with the scopes in _meta, in their place in the merged order, across pages (the cursor's
// digest covers the marks), while the cached list other callers share stays unmarked.
func TestListDiscoverable(t *testing.T) {
	r, _, _ := twoBackends(t, nil, nil, func(c *Config) { c.PageSize = 3 })
	echoOnly := func(_ Kind, tg Target) bool { return tg.Name == "echo" }
	progress := func(_ Kind, tg Target) []string {
		if tg.Upstream == "alpha" && tg.Name == "progress" {
			return []string{"tools:write"}
		}
		return nil
	}
	req := ListRequest{Method: MethodToolsList, Visible: echoOnly, Discoverable: progress, Private: true}
	names := listAll(t, r, req, "tools", "name")
	if !slices.Equal(names, []string{"alpha__echo", "alpha__progress", "beta__echo"}) {
		t.Fatalf("listed %v", names)
	}
	page := listPage(t, r, req, "")
	if page["cacheScope"] != "private" {
		t.Errorf("cacheScope = %v", page["cacheScope"])
	}
	for _, it := range page["tools"].([]any) {
		marks := mcptest.Path(it, "_meta", RequiredScopesMeta)
		switch mcptest.Path(it, "name") {
		case "alpha__progress":
			if !reflect.DeepEqual(marks, []any{"tools:write"}) {
				t.Errorf("alpha__progress marks = %v", marks)
			}
			if mcptest.Path(it, "inputSchema") == nil {
				t.Error("the marked item lost its definition")
			}
		default:
			if marks != nil {
				t.Errorf("%v is marked though visible: %v", mcptest.Path(it, "name"), marks)
			}
		}
	}
	for _, it := range listPage(t, r, ListRequest{Method: MethodToolsList}, "")["tools"].([]any) {
		if mcptest.Path(it, "_meta", RequiredScopesMeta) != nil {
			t.Fatalf("the shared list was marked: %v", it)
		}
	}
	// Without Discoverable the same filter lists only what Visible allows.
	if got := listAll(t, r, ListRequest{Method: MethodToolsList, Visible: echoOnly}, "tools", "name"); len(got) != 2 {
		t.Errorf("without Discoverable: %v", got)
	}
}
