package catalog

import (
	"encoding/json"
	"reflect"
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
