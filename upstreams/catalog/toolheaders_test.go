package catalog

import (
	"reflect"
	"strings"
	"testing"
)

func TestToolHeadersOf(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		want    []HeaderBinding
		invalid string // a substring of ToolHeaders.Invalid; "" for a valid tool
		none    bool   // no bindings at all (nil)
	}{
		{"no annotation", `{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`, nil, "", true},
		{"annotation in a description only", `{"name":"a","description":"uses x-mcp-header","inputSchema":{"type":"object"}}`, nil, "", true},
		{"one string", `{"name":"a","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"region"}}}}`,
			[]HeaderBinding{{Header: "Mcp-Param-Region", Path: []string{"region"}}}, "", false},
		{"nested through properties", `{"name":"a","inputSchema":{"type":"object","properties":{"cfg":{"type":"object","properties":{"tenant":{"type":"integer","x-mcp-header":"Tenant-Id"}}},"on":{"type":"boolean","x-mcp-header":"On"}}}}`,
			[]HeaderBinding{{Header: "Mcp-Param-Tenant-Id", Path: []string{"cfg", "tenant"}}, {Header: "Mcp-Param-On", Path: []string{"on"}}}, "", false},
		{"escaped key", `{"name":"a","inputSchema":{"type":"object","properties":{"region":{"type":"string","x\u002dmcp-header":"region"}}}}`,
			[]HeaderBinding{{Header: "Mcp-Param-Region", Path: []string{"region"}}}, "", false},
		{"a property named x-mcp-header", `{"name":"a","inputSchema":{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}}`, nil, "", true},
		{"number type", `{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}`, nil, "not a string, integer or boolean", false},
		{"no type", `{"name":"a","inputSchema":{"type":"object","properties":{"n":{"x-mcp-header":"N"}}}}`, nil, "not a string, integer or boolean", false},
		{"empty name", `{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"string","x-mcp-header":""}}}}`, nil, "token", false},
		{"not a token", `{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"string","x-mcp-header":"a b"}}}}`, nil, "token", false},
		{"not a string", `{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"string","x-mcp-header":1}}}}`, nil, "token", false},
		{"duplicate ignoring case", `{"name":"a","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"r"}}}}`, nil, "twice", false},
		{"duplicate ignoring punctuation", `{"name":"a","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Tenant_Id"},"b":{"type":"string","x-mcp-header":"tenant-id"}}}}`, nil, "twice", false},
		{"duplicate nested, another punctuation", `{"name":"a","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Tenant.Id"},"c":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"Tenant-Id"}}}}}}`, nil, "twice", false},
		{"under items", `{"name":"a","inputSchema":{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}}`, nil, "outside", false},
		{"under anyOf", `{"name":"a","inputSchema":{"type":"object","anyOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}}`, nil, "outside", false},
		{"under $defs", `{"name":"a","inputSchema":{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}}`, nil, "outside", false},
		{"on the root", `{"name":"a","inputSchema":{"type":"string","x-mcp-header":"X"}}`, nil, "outside", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := toolHeadersOf([]byte(tt.tool), false)
			if tt.none {
				if th != nil {
					t.Fatalf("got %+v, want no bindings", th)
				}
				return
			}
			if th == nil {
				t.Fatal("got no bindings")
			}
			if tt.invalid != "" {
				if !strings.Contains(th.Invalid, tt.invalid) {
					t.Fatalf("Invalid = %q, want it to say %q", th.Invalid, tt.invalid)
				}
				return
			}
			if th.Invalid != "" || !reflect.DeepEqual(th.Bindings, tt.want) {
				t.Fatalf("got %+v, want %+v", th, tt.want)
			}
		})
	}
}

// With schemas kept, every listed tool is indexed with its schemas, interned, and its bindings
// as without.
func TestToolHeadersOfSchemas(t *testing.T) {
	in := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"region"}}}`
	tool := `{"name":"a","inputSchema":` + in + `,"outputSchema":{"type":"object"}}`
	th := toolHeadersOf([]byte(tool), true)
	if th == nil || th.Schemas == nil || !th.Schemas.HasInput || !th.Schemas.HasOutput {
		t.Fatalf("got %+v", th)
	}
	if th.Schemas.Input.Value() != in || len(th.Bindings) != 1 {
		t.Fatalf("input %q bindings %v", th.Schemas.Input.Value(), th.Bindings)
	}
	again := toolHeadersOf([]byte(`{"inputSchema":`+in+`,"name":"b"}`), true)
	if again.Schemas.Input != th.Schemas.Input || again.Schemas.HasOutput {
		t.Fatal("the same schema is not one handle")
	}
	if plain := toolHeadersOf([]byte(`{"name":"c"}`), true); plain == nil || plain.Schemas == nil || plain.Schemas.HasInput {
		t.Fatalf("a tool without schemas: %+v", plain)
	}
}
