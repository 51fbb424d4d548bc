package upstreams

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestWithRequiredScopes: the mark goes into the item's _meta whatever the backend put there,
// replacing only the gateway's own key and keeping every other member.
func TestWithRequiredScopes(t *testing.T) {
	scopes := []string{"notes:write", `odd"scope`}
	want := []any{"notes:write", `odd"scope`}
	tests := []struct {
		name, item string
		keep       map[string]any // other _meta members that must survive
	}{
		{"no _meta", `{"name":"a__x","description":"d"}`, nil},
		{"empty object", `{}`, nil},
		{"_meta with members", `{"name":"a__x","_meta":{"vendor/k":1,"io.mcp-gateway/requiredScopes":["forged"],"z":{"n":[1]}}}`,
			map[string]any{"vendor/k": 1.0, "z": map[string]any{"n": []any{1.0}}}},
		{"_meta not an object", `{"name":"a__x","_meta":null}`, nil},
		{"whitespace", "{ \"name\" : \"a__x\" ,\n \"_meta\" : { } }", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := withRequiredScopes([]byte(tt.item), scopes)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not JSON: %s: %v", out, err)
			}
			if n := strings.Count(string(out), `"`+RequiredScopesMeta+`"`); n != 1 {
				t.Fatalf("the key appears %d times (duplicate keys are read differently by different parsers): %s", n, out)
			}
			var orig map[string]any
			_ = json.Unmarshal([]byte(tt.item), &orig)
			meta, _ := got["_meta"].(map[string]any)
			if !reflect.DeepEqual(meta[RequiredScopesMeta], want) {
				t.Fatalf("_meta = %v in %s", got["_meta"], out)
			}
			delete(meta, RequiredScopesMeta)
			if len(meta) != len(tt.keep) || (len(tt.keep) > 0 && !reflect.DeepEqual(meta, tt.keep)) {
				t.Errorf("other _meta members = %v, want %v", meta, tt.keep)
			}
			delete(got, "_meta")
			delete(orig, "_meta")
			if !reflect.DeepEqual(got, orig) {
				t.Errorf("item members changed: %v, was %v", got, orig)
			}
		})
	}
}

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
		marks := path(it, "_meta", RequiredScopesMeta)
		switch path(it, "name") {
		case "alpha__progress":
			if !reflect.DeepEqual(marks, []any{"tools:write"}) {
				t.Errorf("alpha__progress marks = %v", marks)
			}
			if path(it, "inputSchema") == nil {
				t.Error("the marked item lost its definition")
			}
		default:
			if marks != nil {
				t.Errorf("%v is marked though visible: %v", path(it, "name"), marks)
			}
		}
	}
	for _, it := range listPage(t, r, ListRequest{Method: MethodToolsList}, "")["tools"].([]any) {
		if path(it, "_meta", RequiredScopesMeta) != nil {
			t.Fatalf("the shared list was marked: %v", it)
		}
	}
	// Without Discoverable the same filter lists only what Visible allows.
	if got := listAll(t, r, ListRequest{Method: MethodToolsList, Visible: echoOnly}, "tools", "name"); len(got) != 2 {
		t.Errorf("without Discoverable: %v", got)
	}
}
